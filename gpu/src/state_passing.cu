// SSDStatePassingFwd: the exclusive inter-chunk scan M <- rho_c * exp(alpha_c) * M + states_c.
// One block per (batch, head, slice of 256 state elements); each thread carries one element of
// the running fp32 state through all chunks. The per-chunk scales (decay and seq_idx reset) are
// computed 256 chunks at a time into shared memory, so the serial loop is a load and an FMA.
#include "chunk_carry.cuh"

namespace ssd_gpu {
namespace {

__global__ void __launch_bounds__(kThreads) state_passing_kernel(StatePassingParams p) {
  __shared__ float sScale[kThreads];
  const int tid = static_cast<int>(threadIdx.x);
  const int64_t NC = p.chunks, H = p.heads, D = p.width;
  const int64_t slices = ceil_div(D, kThreads);
  const int64_t tiles = p.batch * H * slices;

  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t bh = tile / slices;
    const int64_t b = bh / H, h = bh % H;
    const int64_t d = (tile % slices) * kThreads + tid;
    const bool active = d < D;
    float M = (active && p.initial.p != nullptr) ? load(p.initial, bh * D + d) : 0.0f;
    for (int64_t c0 = 0; c0 < NC; c0 += kThreads) {
      __syncthreads();  // the previous batch of scales is consumed
      const int64_t c = c0 + tid;
      if (c < NC) {
        sScale[tid] = chunk_carry_scale(p, b, bh, NC, c);
      }
      __syncthreads();
      if (!active) continue;
      const int64_t count = min(static_cast<int64_t>(kThreads), NC - c0);
      for (int64_t cc = 0; cc < count; ++cc) {
        const int64_t at = ((b * NC + c0 + cc) * H + h) * D + d;
        store(p.out, at, M);  // the state ENTERING chunk c0 + cc
        M = sScale[cc] * M + load(p.states, at);
      }
    }
    if (active && p.final_states != nullptr) p.final_states[bh * D + d] = M;
  }
}

}  // namespace

void launch_state_passing(const char* op, const StatePassingParams& p, cudaStream_t stream) {
#ifndef SSD_GPU_REFERENCE_ONLY
  if (launch_state_passing_fast(op, p, stream)) return;
#endif
  const int64_t tiles = p.batch * p.heads * ceil_div(p.width, kThreads);
  state_passing_kernel<<<grid_for(tiles), kThreads, 0, stream>>>(p);
  check_launch(op, "state_passing_kernel");
}

}  // namespace ssd_gpu
