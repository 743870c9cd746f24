// The float64 oracle of the eight SSD ops, in two independent forms (docs/contract.md):
//  - the chunked form (*_chunked): the kernels' algorithm, chunk by chunk, with Eigen matrix
//    products and OpenMP over independent (batch, chunk, head) work;
//  - the sequential form (*_sequential): the plain per-token recurrence of the contract for
//    Mamba2Fwd and its stages, and direct unfused loops where an op is not a recurrence.
// Both evaluate the exact math in float64 on the already-rounded inputs, check every argument
// (throwing ArgumentError that names it) and return float64 outputs named as in the contract.
// Optional inputs are nullptr when absent. Nothing is written when an argument is rejected.
#pragma once
#include <cstdint>
#include <limits>

#include "ssd/reference/outputs.h"
#include "ssd/reference/tensor.h"

namespace ssd {

// Clamp applied to the processed dt after softplus; the contract's default is (0, +inf).
struct DtLimit {
  double lo = 0.0;
  double hi = std::numeric_limits<double>::infinity();
  bool operator==(const DtLimit&) const = default;
};

// Mamba2Fwd (mamba_chunk_scan_combined). Outputs: "out" [Bt,S,H,P], "final_states" [Bt,H,P,N].
struct Mamba2Args {
  const Tensor* x = nullptr;        // [Bt,S,H,P]
  const Tensor* dt = nullptr;       // [Bt,S,H] raw
  const Tensor* A = nullptr;        // [H]
  const Tensor* B = nullptr;        // [Bt,S,G,N]
  const Tensor* C = nullptr;        // [Bt,S,G,N]
  std::int64_t chunk_size = 0;      // Q >= 1
  const Tensor* D = nullptr;        // [H] or [H,P], optional
  const Tensor* z = nullptr;        // [Bt,S,H,P], optional
  const Tensor* dt_bias = nullptr;  // [H], optional
  const Tensor* initial_states = nullptr;  // [Bt,H,P,N], optional; [nseq,H,P,N] when varlen
  const Tensor* seq_idx = nullptr;  // [Bt,S] i32, optional
  // A packed batch (Bt = 1, seq_idx numbering its sequences 0, 1, ...): sequence j starts from
  // initial_states[j] where has_initial_states[j] != 0 (all of them without that tensor), else
  // from zero, and "varlen_states" [nseq,H,P,N] holds the state at each sequence's last token.
  // Without it a sequence change starts from zero and initial_states [Bt] only reaches the
  // leading run of id 0 (mamba_ssm's rule).
  bool varlen = false;
  const Tensor* has_initial_states = nullptr;  // [nseq] i32, optional, only when varlen
  // The same sequences in the upstream encodings (ssd/reference/varlen.h), each optional and only
  // when varlen; the math reads seq_idx alone, so each given one must agree with it.
  const Tensor *cu_seqlens = nullptr, *chunk_indices = nullptr, *chunk_offsets = nullptr,
               *cu_chunk_seqlens = nullptr, *chunk_seq_idx = nullptr, *last_chunk_indices = nullptr;
  bool dt_softplus = false;
  DtLimit dt_limit;
};
// The chunked form computes each sequence of a packed batch on its own (its chunk grid starting
// at its first token); the sequential form runs the packed row token by token, resetting the
// state at each sequence start.
Outputs mamba2_chunked(const Mamba2Args& args);
Outputs mamba2_sequential(const Mamba2Args& args);

// SSDChunkCumsumFwd. Outputs: "dA_cumsum", "dt_out", both [Bt,H,NC,Q].
struct ChunkCumsumArgs {
  const Tensor* dt = nullptr;       // [Bt,S,H] raw
  const Tensor* A = nullptr;        // [H]
  std::int64_t chunk_size = 0;
  const Tensor* dt_bias = nullptr;  // [H], optional
  bool dt_softplus = false;
  DtLimit dt_limit;
};
Outputs chunk_cumsum_chunked(const ChunkCumsumArgs& args);
Outputs chunk_cumsum_sequential(const ChunkCumsumArgs& args);

// SSDChunkCouplingFwd (_bmm_chunk_fwd(C, B)). Output: "CB" [Bt,NC,G,Q,Q].
struct ChunkCouplingArgs {
  const Tensor* C = nullptr;        // [Bt,S,G,N] (the kernel's `a`)
  const Tensor* B = nullptr;        // [Bt,S,G,N] (the kernel's `b`)
  std::int64_t chunk_size = 0;
  const Tensor* seq_idx = nullptr;  // [Bt,S] i32, optional
  bool causal = false;              // entries above the diagonal are then undefined
};
Outputs chunk_coupling_chunked(const ChunkCouplingArgs& args);
Outputs chunk_coupling_sequential(const ChunkCouplingArgs& args);

// SSDChunkStateFwd (_chunk_state_fwd). Output: "states" [Bt,NC,H,P,N].
struct ChunkStateArgs {
  const Tensor* B = nullptr;          // [Bt,S,G,N]
  const Tensor* x = nullptr;          // [Bt,S,H,P]
  const Tensor* dt = nullptr;         // [Bt,H,NC,Q] processed dt
  const Tensor* dA_cumsum = nullptr;  // [Bt,H,NC,Q]
  const Tensor* seq_idx = nullptr;    // [Bt,S] i32, optional
};
Outputs chunk_state_chunked(const ChunkStateArgs& args);
Outputs chunk_state_sequential(const ChunkStateArgs& args);

// SSDStatePassingFwd. Outputs: "out" [Bt,NC,H,D] (state entering each chunk), "final_states" [Bt,H,D].
struct StatePassingArgs {
  const Tensor* states = nullptr;           // [Bt,NC,H,D]
  const Tensor* dA_chunk_cumsum = nullptr;  // [Bt,H,NC] per-chunk totals
  const Tensor* initial_states = nullptr;   // [Bt,H,D], optional
  const Tensor* seq_idx = nullptr;          // [Bt,S] i32, optional; needs chunk_size
  std::int64_t chunk_size = 0;              // required with seq_idx, ignored otherwise
};
Outputs state_passing_chunked(const StatePassingArgs& args);
Outputs state_passing_sequential(const StatePassingArgs& args);

// SSDChunkScanFwd. Outputs: "out" [Bt,S,H,P]; "out_x" (same shape) only when z is given.
struct ChunkScanArgs {
  const Tensor* cb = nullptr;         // [Bt,NC,G,Q,Q], taken as given (not masked here)
  const Tensor* x = nullptr;          // [Bt,S,H,P]
  const Tensor* dt = nullptr;         // [Bt,H,NC,Q]
  const Tensor* dA_cumsum = nullptr;  // [Bt,H,NC,Q]
  const Tensor* C = nullptr;          // [Bt,S,G,N]
  const Tensor* states = nullptr;     // [Bt,NC,H,P,N] entering states
  const Tensor* D = nullptr;          // [H] or [H,P], optional
  const Tensor* z = nullptr;          // [Bt,S,H,P], optional
  const Tensor* seq_idx = nullptr;    // [Bt,S] i32, optional (masks the carried-in term only)
};
Outputs chunk_scan_chunked(const ChunkScanArgs& args);
Outputs chunk_scan_sequential(const ChunkScanArgs& args);

// SSDRecurrentFwd (selective_state_update, one decode step). Outputs: "out" [Bt,H,P] and
// "state" [Bs,H,P,N]: the whole state tensor after the step, unrounded (rows not selected by
// state_batch_indices, and rows of padding entries, are the input values).
struct RecurrentArgs {
  const Tensor* state = nullptr;    // [Bs,H,P,N], updated in place
  const Tensor* x = nullptr;        // [Bt,H,P], or [Bt,T,H,P] with tokens = T
  const Tensor* dt = nullptr;       // like x, raw
  const Tensor* A = nullptr;        // [H,P,N]
  const Tensor* B = nullptr;        // [Bt,G,N], or [Bt,T,G,N]
  const Tensor* C = nullptr;        // like B
  const Tensor* D = nullptr;        // [H,P], optional
  const Tensor* z = nullptr;        // like x, optional
  const Tensor* dt_bias = nullptr;  // [H,P], optional
  // The read slots, i32, optional: [Bt], or [Bt,T] (one column per token: speculative decoding).
  // A padding row's slot is negative or equal to pad_slot_id.
  const Tensor* state_batch_indices = nullptr;
  bool dt_softplus = false;
  const Tensor* dst_state_batch_indices = nullptr;  // the write slots, like state_batch_indices; optional
  const Tensor* num_accepted_tokens = nullptr;      // [Bt] i32, optional, with [Bt,T] tables
  bool disable_state_update = false;  // the state buffer is read only
  bool intermediate_states = false;   // also return the state after every token, [Bt,T,H,P,N]
  std::int64_t pad_slot_id = -1;
  // T of a multi-token call: x, dt, z [Bt,T,H,P] and B, C [Bt,T,G,N]; 0 for the one-token layout.
  std::int64_t tokens = 0;
  // A varlen call (with tokens): cu_seqlens [Bt+1] i32, rows of 0..T tokens packed one after the
  // other, x, dt, z, out [tokens,H,P] and B, C [tokens,G,N]; the slot tables stay [Bt] or [Bt,T].
  const Tensor* cu_seqlens = nullptr;
};
// Outputs: "out" like x, "state" [Bs,H,P,N] (the whole buffer after the call), and with
// intermediate_states "intermediate_states" [Bt,T,H,P,N]. Padding rows' outputs are undefined.
Outputs recurrent_chunked(const RecurrentArgs& args);
Outputs recurrent_sequential(const RecurrentArgs& args);

// MambaDiscretizeSegsum (SOL-ExecBench L2/044). Outputs: "L" [b,h,c,Q,Q], "G" [b,c,Q,Q,h],
// "M" [b,c,Q,Q,h], "A_cumsum" [b,h,c,Q], "decay_states" [b,h,c,Q].
struct DiscretizeSegsumArgs {
  const Tensor* hidden_states = nullptr;  // [b,c,Q,h,p], shape only
  const Tensor* dt = nullptr;             // [b,c,Q,h]
  const Tensor* A_log = nullptr;          // [h]
  const Tensor* B = nullptr;              // [b,c,Q,g,n]
  const Tensor* C = nullptr;              // [b,c,Q,g,n]
};
Outputs discretize_segsum_chunked(const DiscretizeSegsumArgs& args);
Outputs discretize_segsum_sequential(const DiscretizeSegsumArgs& args);

}  // namespace ssd
