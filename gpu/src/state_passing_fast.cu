// SSDStatePassingFwd with the chunk loads issued ahead: the same scan, thread per state element and
// arithmetic as the fp32 kernel (bit-identical results), but each thread loads the states of up to
// 32 chunks before it stores the first of them. In the fp32 kernel every load waits for the previous
// chunk's store (they may alias), so a chain of NC chunks costs NC round trips to memory.
#include "chunk_carry.cuh"

namespace ssd_gpu {
namespace {


// The states' storage type is a template argument: 32 loads with a dtype switch each would not fit
// in registers.
__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

// kAhead: chunk loads in flight per thread. 8 where there are no more chunks (registers cost
// occupancy, which Mamba2Fwd's 8-chunk stage needs more than depth); otherwise 32 (measured: a
// 16-deep build was slower on the 16-chunk workloads, and its f32 variant spills). The loads and
// the stores walk one pointer each from chunk to chunk, so no per-chunk offsets stay live between
// them: 32 deep, f32 states fit 80 registers (three blocks per SM), 16-bit ones 92 (two, as before).
template <class T, int kAhead>
constexpr int kMinBlocks = kAhead > 8 && sizeof(T) == 4 ? 3 : 0;  // 0: no minimum (the compiler's default)

template <class T, int kAhead>
__global__ void __launch_bounds__(kThreads, (kMinBlocks<T, kAhead>)) state_passing_fast_kernel(StatePassingParams p) {
  const T* states = static_cast<const T*>(p.states.p);
  __shared__ float sScale[kThreads];
  const int tid = static_cast<int>(threadIdx.x);
  const int64_t NC = p.chunks, H = p.heads, D = p.width;
  const int64_t slices = ceil_div(D, kThreads);
  const int64_t tile = blockIdx.x;  // the launcher's grid has one block per tile
  const int64_t bh = tile / slices;
  const int64_t b = bh / H, h = bh % H;
  const int64_t d = (tile % slices) * kThreads + tid;
  const bool active = d < D;
  const int64_t stride = H * D;  // from chunk c to c + 1
  float M = (active && p.initial.p != nullptr) ? load(p.initial, bh * D + d) : 0.0f;
  for (int64_t c0 = 0; c0 < NC; c0 += kThreads) {
    __syncthreads();  // the previous batch of scales is consumed
    const int64_t c = c0 + tid;
    if (c < NC) {
      sScale[tid] = chunk_carry_scale(p, b, bh, NC, c);
    }
    __syncthreads();
    if (!active) continue;
    const int count = static_cast<int>(min(static_cast<int64_t>(kThreads), NC - c0));
    const int64_t first = ((b * NC + c0) * H + h) * D + d;
    const T* src = states + first;  // chunk c0 + k0 + k of the loads
    int64_t at = first;             // ... and of the stores
    for (int k0 = 0; k0 < count; k0 += kAhead) {
      float v[kAhead];
      const T* s = src;
#pragma unroll
      for (int k = 0; k < kAhead; ++k)
        if (k0 + k < count) {
          v[k] = to_float(*s);
          s += stride;
        }
      src = s;
#pragma unroll
      for (int k = 0; k < kAhead; ++k)
        if (k0 + k < count) {
          store(p.out, at, M);  // the state ENTERING chunk c0 + k0 + k
          at += stride;
          M = sScale[k0 + k] * M + v[k];
        }
    }
  }
  if (active && p.final_states != nullptr) p.final_states[bh * D + d] = M;
}

template <class T>
void launch(const StatePassingParams& p, unsigned grid, cudaStream_t stream) {
  if (p.chunks <= 8)
    state_passing_fast_kernel<T, 8><<<grid, kThreads, 0, stream>>>(p);
  else
    state_passing_fast_kernel<T, 32><<<grid, kThreads, 0, stream>>>(p);
}

}  // namespace

bool launch_state_passing_fast(const char* op, const StatePassingParams& p, cudaStream_t stream) {
  const int64_t tiles = p.batch * p.heads * ceil_div(p.width, kThreads);
  if (tiles > 0x7fffffff) return false;
  if (tiles == 0) return true;
  const unsigned grid = static_cast<unsigned>(tiles);
  switch (p.states.dtype) {
    case SSD_DTYPE_F16: launch<__half>(p, grid, stream); break;
    case SSD_DTYPE_BF16: launch<__nv_bfloat16>(p, grid, stream); break;
    default: launch<float>(p, grid, stream); break;
  }
  check_launch(op, "state_passing_fast_kernel");
  return true;
}

}  // namespace ssd_gpu
