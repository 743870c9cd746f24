// SSDChunkCumsumFwd for H % 8 == 0: one block per (batch, chunk, 8 heads). The token-major dt tile
// arrives with one 16-byte load per token (8 heads), dt' is computed there and transposed through
// shared memory; then one warp per head scans 128 tokens per step (4 per lane: a short sequential
// sum, one shuffle scan) and writes both outputs with contiguous 16-byte stores.
#include "common.cuh"
#include "mma.cuh"

namespace ssd_gpu {
namespace {

constexpr int kHeads = 8;           // heads per block: one 16-byte vector of 16-bit dt
constexpr int kStep = 4 * kWarp;    // tokens per warp step
constexpr int kMaxChunk = 2048;     // sDt holds kHeads x Q floats

__global__ void __launch_bounds__(kThreads) chunk_cumsum_fast_kernel(CumsumParams p) {
  wait_previous_grid();
  if (p.stage_of_call) allow_next_grid();  // Mamba2Fwd's chunk_state copies its inputs meanwhile
  extern __shared__ __align__(16) float sDt[];  // [kHeads][Q]: dt', 0 in the padded tail
  const int tid = static_cast<int>(threadIdx.x), warp = tid / kWarp, lane = tid % kWarp;
  const int Q = static_cast<int>(p.chunk), H = static_cast<int>(p.heads);
  const int head_tiles = H / kHeads;
  int64_t tile = blockIdx.x;
  const int h0 = static_cast<int>(tile % head_tiles) * kHeads;
  tile /= head_tiles;
  const int64_t c = tile % p.chunks, b = tile / p.chunks;
  const int64_t t0 = c * Q;
  const int valid = static_cast<int>(min(static_cast<int64_t>(Q), p.seqlen - t0));

  float bias[kHeads];
#pragma unroll
  for (int e = 0; e < kHeads; ++e) bias[e] = p.dt_bias.p ? load(p.dt_bias, h0 + e) : 0.0f;
  for (int t = tid; t < Q; t += kThreads) {
    float v[kHeads] = {};  // padded tail: dt' = 0, applied after the clamp
    if (t < valid) {
      load8(p.dt, ((b * p.seqlen + t0 + t) * H + h0), v);
#pragma unroll
      for (int e = 0; e < kHeads; ++e) v[e] = process_dt(v[e], bias[e], p.softplus, p.lo, p.hi);
    }
#pragma unroll
    for (int e = 0; e < kHeads; ++e) sDt[e * Q + t] = v[e];
  }
  __syncthreads();

  const int h = h0 + warp;  // kHeads == warps per block
  const float A = load(p.A, h);
  const float* dts = sDt + warp * Q;
  const int64_t out_base = ((b * H + h) * p.chunks + c) * Q;
  float carry = 0.0f;
  for (int base = 0; base < Q; base += kStep) {
    const int t = base + 4 * lane;
    float4 d = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (t < Q) d = *reinterpret_cast<const float4*>(dts + t);
    // Sequential within the lane, a shuffle scan across lanes, the carry of earlier steps first.
    float s[4] = {d.x * A, d.y * A, d.z * A, d.w * A};
    s[1] += s[0];
    s[2] += s[1];
    s[3] += s[2];
    const float inclusive = warp_inclusive_scan(s[3]);
    float before = __shfl_up_sync(kFullMask, inclusive, 1);
    before = carry + (lane == 0 ? 0.0f : before);
#pragma unroll
    for (int e = 0; e < 4; ++e) s[e] = before + s[e];
    // The padded tail repeats the last valid value bit for bit (the tree scan alone need not).
    if (base + kStep > valid) {
      const int last = valid - 1 - base;  // warp-uniform; < 0 when the whole step is tail
      float edge = carry;
      if (last >= 0) {
        const int k = last % 4;
        const float mine = k == 0 ? s[0] : k == 1 ? s[1] : k == 2 ? s[2] : s[3];
        edge = __shfl_sync(kFullMask, mine, last / 4);
      }
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (t + e >= valid) s[e] = edge;
    }
    if (t < Q) {
      *reinterpret_cast<float4*>(p.dA_cumsum + out_base + t) = make_float4(s[0], s[1], s[2], s[3]);
      *reinterpret_cast<float4*>(p.dt_out + out_base + t) = d;
    }
    carry = __shfl_sync(kFullMask, s[3], kWarp - 1);
  }
}

}  // namespace

bool launch_chunk_cumsum_fast(const char* op, const CumsumParams& p, cudaStream_t stream) {
  if (p.heads % kHeads != 0 || p.chunk % 4 != 0 || p.chunk > kMaxChunk) return false;
  if (!aligned16(p.dt.p) || !aligned16(p.dA_cumsum) || !aligned16(p.dt_out)) return false;
  const int64_t tiles = p.batch * p.chunks * (p.heads / kHeads);
  if (tiles > 0x7fffffff) return false;
  if (tiles == 0) return true;
  const size_t shared = sizeof(float) * kHeads * static_cast<size_t>(p.chunk);  // <= 64 KiB
  if (shared > 48 * 1024)
    cuda_check(op,
               cudaFuncSetAttribute(chunk_cumsum_fast_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(shared)),
               "cudaFuncSetAttribute");
  launch_kernel(op, "launch of chunk_cumsum_fast_kernel", chunk_cumsum_fast_kernel, static_cast<unsigned>(tiles), kThreads,
                shared, stream, p);
  check_launch(op, "chunk_cumsum_fast_kernel");
  return true;
}

}  // namespace ssd_gpu
