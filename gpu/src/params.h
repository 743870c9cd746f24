// The parameter blocks of the stage kernels and the launchers the ABI entry points call (one per
// op; `op` names the caller in error messages, since Mamba2Fwd chains the stage launchers). Plain
// C++: the entry points in api/ include it; the kernels get it through common.cuh.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "checks.h"
#include "ssd/kernel_abi.h"
#include "tensor_view.h"

namespace ssd_gpu {

// The sizes the ops share, the base of every parameter block (kernels read p.batch, p.chunk, ...).
// One base with all of them rather than the four every op has (batch, seqlen, chunk, chunks):
// Mamba2Fwd fills each stage's block from the same sizes, and a size an op has no use for stays 0
// (no kernel of that op reads it).
struct Dims {
  int64_t batch;    // Bt: sequences (decode: rows of x)
  int64_t seqlen;   // S: tokens per sequence
  int64_t heads;    // H
  int64_t headdim;  // P: channels of x per head
  int64_t groups;   // G: groups of B and C, each shared by H / G heads
  int64_t dstate;   // N: state size per channel
  int64_t chunk;    // Q: tokens per chunk
  int64_t chunks;   // NC = ceil(S / Q)
};
// stage_of_call, a field of the parameter blocks of Mamba2Fwd's stages: the kernels before and
// after on the stream are stages of the same call (but for the first stage's predecessor and the
// last's successor). A stage lets the next one be scheduled as soon as it has waited for its own
// predecessor, and a stage after the first may read (copy) the call's inputs, which no stage
// writes, before it waits (tensor_access.cuh).

// The sizes of a token-major call (x [Bt,S,H,P], B-like [Bt,S,G,N]) cut into chunks of `chunk` > 0
// tokens.
inline void fill_dims(Dims& p, const TokenDims& d, int64_t chunk) {
  p.batch = d.batch;
  p.seqlen = d.seqlen;
  p.heads = d.heads;
  p.headdim = d.headdim;
  p.groups = d.groups;
  p.dstate = d.dstate;
  p.chunk = chunk;
  p.chunks = ceil_div(d.seqlen, chunk);
}

// ---- Stage kernels ------------------------------------------------------------------------------

// dt' and the within-chunk inclusive cumsum of A*dt', both f32 [Bt,H,NC,Q]. Not a Dims: this block
// has 120 bytes; as a Dims it had 144, and past 128 bytes nvcc reads a kernel's parameter block
// through its address, which gave chunk_cumsum_fast_kernel 36 more branches in PTX and cost it
// 3-10% on the H200 (docs/performance.md, 2026-12-02).
struct CumsumParams {
  In dt, A, dt_bias;  // dt [Bt,S,H]; A, dt_bias [H] (dt_bias.p may be null)
  float* dA_cumsum;
  float* dt_out;
  int64_t batch, seqlen, heads, chunk, chunks;  // as in Dims
  bool softplus;
  bool stage_of_call;
  float lo, hi;
};
static_assert(sizeof(CumsumParams) <= 128, "chunk_cumsum's kernels read their parameter block directly");

// The sizes of a cumsum over dt [batch, seqlen, heads] in chunks of `chunk` > 0 tokens.
inline void fill_dims(CumsumParams& p, int64_t batch, int64_t seqlen, int64_t heads, int64_t chunk) {
  p.batch = batch;
  p.seqlen = seqlen;
  p.heads = heads;
  p.chunk = chunk;
  p.chunks = ceil_div(seqlen, chunk);
}
void launch_chunk_cumsum(const char* op, const CumsumParams& p, cudaStream_t stream);

// CB[b,c,g,i,j] = sum_n C[i,n] B[j,n], masked past the valid length and to same-sequence pairs.
// No H, P (0 in the standalone op).
struct CouplingParams : Dims {
  In C, B;  // [Bt,S,G,N]
  const int32_t* seq_idx;
  Out CB;                 // [Bt,NC,G,Q,Q]
  bool causal;            // skip tiles wholly above the diagonal (left unwritten)
  bool stage_of_call;
  int32_t operand_dtype;  // dot operands rounded to this dtype first; -1: used as they are
};
static_assert(sizeof(CouplingParams) <= 128, "as CumsumParams: read directly, not through an address");
void launch_chunk_coupling(const char* op, const CouplingParams& p, cudaStream_t stream);

// states[b,c,h,p,n] = sum_k x[k,p] * round_x(B[k,n] * w[k]).
struct ChunkStateParams : Dims {
  In B, x, dt, dA;  // B [Bt,S,G,N], x [Bt,S,H,P], dt and dA [Bt,H,NC,Q]
  const int32_t* seq_idx;
  Out states;  // [Bt,NC,H,P,N]
  bool stage_of_call;
};
void launch_chunk_state(const char* op, const ChunkStateParams& p, cudaStream_t stream);

// The exclusive inter-chunk scan over a flat state of `width` elements per (b,h). seqlen and chunk
// are used with seq_idx only; the standalone op has no P, G, N (0): its state is width wide.
struct StatePassingParams : Dims {
  In states;  // [Bt,NC,H,D]
  In dA;      // chunk total of (b,h,c) at ((b*H+h)*NC+c)*dA_step + dA_offset
  int64_t dA_step, dA_offset;
  In initial;  // [Bt,H,D], p may be null
  const int32_t* seq_idx;
  Out out;              // [Bt,NC,H,D]
  float* final_states;  // [Bt,H,D], may be null
  int64_t width;        // D
  bool stage_of_call;
};
void launch_state_passing(const char* op, const StatePassingParams& p, cudaStream_t stream);

// out = carried-in term + causal within-chunk term + D*x, gated by z.
struct ChunkScanParams : Dims {
  In cb, x, dt, dA, C, states, D, z;  // D, z may be null
  bool d_has_hdim;
  bool stage_of_call;
  const int32_t* seq_idx;
  Out out, out_x;  // out_x.p may be null
};
void launch_chunk_scan(const char* op, const ChunkScanParams& p, cudaStream_t stream);

// ---- Ops whose fast path reads the checked ABI arguments ----------------------------------------
// launch_recurrent_fast and launch_discretize_segsum_fast take the argument struct itself, so these
// launchers do too, with the sizes the entry point read from it; they try the fast path first and
// pack the general kernel's parameters (kept in the .cu) only where it declines.

// SSDRecurrentFwd, one decode step: dims.batch = Bt rows, no S, Q, NC (0); slot_count = Bs, the
// rows of the state.
void launch_recurrent(const ssd_recurrent_args& a, const Dims& dims, int64_t slot_count, cudaStream_t stream);
// MambaDiscretizeSegsum on inputs already in chunks ([b,c,Q,...]): no S, P (0).
void launch_discretize_segsum(const ssd_discretize_segsum_args& a, const Dims& dims, cudaStream_t stream);

}  // namespace ssd_gpu
