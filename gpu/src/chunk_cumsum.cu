// SSDChunkCumsumFwd: dt' (bias -> softplus -> clamp -> padding zero) and its within-chunk
// inclusive cumsum times A. One block per (batch, chunk, 8 heads); one warp per head walks the
// chunk in 32-token steps with a shuffle scan and a carried sum, so any Q works.
#include "common.cuh"

namespace ssd_gpu {
namespace {

constexpr int kHeadsPerBlock = kThreads / kWarp;

__global__ void __launch_bounds__(kThreads) chunk_cumsum_kernel(CumsumParams p) {
  const int warp = static_cast<int>(threadIdx.x) / kWarp;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int64_t head_tiles = ceil_div(p.heads, kHeadsPerBlock);
  const int64_t tiles = p.batch * p.chunks * head_tiles;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t h = (tile % head_tiles) * kHeadsPerBlock + warp;
    const int64_t c = (tile / head_tiles) % p.chunks;
    const int64_t b = tile / (head_tiles * p.chunks);
    if (h >= p.heads) continue;  // warp-uniform; the kernel has no block barrier
    const float A = load(p.A, h);
    const float bias = p.dt_bias.p ? load(p.dt_bias, h) : 0.0f;
    const int64_t t0 = c * p.chunk;
    const int64_t valid = min(p.chunk, p.seqlen - t0);
    const int64_t out_base = ((b * p.heads + h) * p.chunks + c) * p.chunk;
    float carry = 0.0f;
    for (int64_t i0 = 0; i0 < p.chunk; i0 += kWarp) {
      const int64_t i = i0 + lane;
      float dtp = 0.0f;  // padded tail: dt' = 0, applied after the clamp
      if (i < valid) dtp = process_dt(load(p.dt, (b * p.seqlen + t0 + i) * p.heads + h), bias, p.softplus, p.lo, p.hi);
      const float sum = prefix_step(dtp * A, carry, valid - 1 - i0);
      if (i < p.chunk) {
        p.dt_out[out_base + i] = dtp;
        p.dA_cumsum[out_base + i] = sum;
      }
      carry = __shfl_sync(kFullMask, sum, kWarp - 1);
    }
  }
}

}  // namespace

void launch_chunk_cumsum(const char* op, const CumsumParams& p, cudaStream_t stream) {
#ifndef SSD_GPU_REFERENCE_ONLY
  if (launch_chunk_cumsum_fast(op, p, stream)) return;
#endif
  const int64_t tiles = p.batch * p.chunks * ceil_div(p.heads, kHeadsPerBlock);
  chunk_cumsum_kernel<<<grid_for(tiles), kThreads, 0, stream>>>(p);
  check_launch(op, "chunk_cumsum_kernel");
}

}  // namespace ssd_gpu
