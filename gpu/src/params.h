// The parameter blocks of the stage kernels and their launchers (one per op; `op` names the caller
// in error messages, since Mamba2Fwd chains the stage launchers). Plain C++, so host files can
// include it; the kernels get it through common.cuh.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "tensor_view.h"

namespace ssd_gpu {

// dt' and the within-chunk inclusive cumsum of A*dt', both f32 [Bt,H,NC,Q].
struct CumsumParams {
  In dt, A, dt_bias;  // dt [Bt,S,H]; A, dt_bias [H] (dt_bias.p may be null)
  float* dA_cumsum;
  float* dt_out;
  int64_t batch, seqlen, heads, chunk, chunks;
  bool softplus;
  float lo, hi;
};
void launch_chunk_cumsum(const char* op, const CumsumParams& p, cudaStream_t stream);

// CB[b,c,g,i,j] = sum_n C[i,n] B[j,n], masked past the valid length and to same-sequence pairs.
struct CouplingParams {
  In C, B;  // [Bt,S,G,N]
  const int32_t* seq_idx;
  Out CB;  // [Bt,NC,G,Q,Q]
  int64_t batch, seqlen, groups, dstate, chunk, chunks;
  bool causal;            // skip tiles wholly above the diagonal (left unwritten)
  int32_t operand_dtype;  // dot operands rounded to this dtype first; -1: used as they are
};
void launch_chunk_coupling(const char* op, const CouplingParams& p, cudaStream_t stream);

// states[b,c,h,p,n] = sum_k x[k,p] * round_x(B[k,n] * w[k]).
struct ChunkStateParams {
  In B, x, dt, dA;  // B [Bt,S,G,N], x [Bt,S,H,P], dt and dA [Bt,H,NC,Q]
  const int32_t* seq_idx;
  Out states;  // [Bt,NC,H,P,N]
  int64_t batch, seqlen, heads, headdim, groups, dstate, chunk, chunks;
};
void launch_chunk_state(const char* op, const ChunkStateParams& p, cudaStream_t stream);

// The exclusive inter-chunk scan over a flat state of `width` elements per (b,h).
struct StatePassingParams {
  In states;  // [Bt,NC,H,D]
  In dA;      // chunk total of (b,h,c) at ((b*H+h)*NC+c)*dA_step + dA_offset
  int64_t dA_step, dA_offset;
  In initial;  // [Bt,H,D], p may be null
  const int32_t* seq_idx;
  int64_t seqlen, chunk;  // used with seq_idx
  Out out;                // [Bt,NC,H,D]
  float* final_states;    // [Bt,H,D], may be null
  int64_t batch, chunks, heads, width;
};
void launch_state_passing(const char* op, const StatePassingParams& p, cudaStream_t stream);

// out = carried-in term + causal within-chunk term + D*x, gated by z.
struct ChunkScanParams {
  In cb, x, dt, dA, C, states, D, z;  // D, z may be null
  bool d_has_hdim;
  const int32_t* seq_idx;
  Out out, out_x;  // out_x.p may be null
  int64_t batch, seqlen, heads, headdim, groups, dstate, chunk, chunks;
};
void launch_chunk_scan(const char* op, const ChunkScanParams& p, cudaStream_t stream);

}  // namespace ssd_gpu
