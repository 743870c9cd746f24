// Device-side helpers shared by every kernel: dtype-switched loads and stores, roundings, the dt
// pipeline, warp scans and grid-stride tiling. All arithmetic is fp32.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "ssd/kernel_abi.h"
#include "tensor_view.h"  // In, Out, ceil_div

namespace ssd_gpu {

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;

// One stored value as fp32, for kernels whose dtype is a template argument.
__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }

// The dtype switch is uniform across a launch, so it costs a predictable branch, not divergence.
__device__ __forceinline__ float load(In t, int64_t i) {
  switch (t.dtype) {
    case SSD_DTYPE_F16: return __half2float(static_cast<const __half*>(t.p)[i]);
    case SSD_DTYPE_BF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(t.p)[i]);
    default: return static_cast<const float*>(t.p)[i];
  }
}

// Stores v rounded to nearest even into the output's dtype.
__device__ __forceinline__ void store(Out t, int64_t i, float v) {
  switch (t.dtype) {
    case SSD_DTYPE_F16: static_cast<__half*>(t.p)[i] = __float2half_rn(v); break;
    case SSD_DTYPE_BF16: static_cast<__nv_bfloat16*>(t.p)[i] = __float2bfloat16_rn(v); break;
    default: static_cast<float*>(t.p)[i] = v; break;
  }
}

// v rounded to a storage dtype and back (a contract rounding point); f32 leaves it unchanged.
__device__ __forceinline__ float round_to(int32_t dtype, float v) {
  switch (dtype) {
    case SSD_DTYPE_F16: return __half2float(__float2half_rn(v));
    case SSD_DTYPE_BF16: return __bfloat162float(__float2bfloat16_rn(v));
    default: return v;
  }
}

// softplus with PyTorch's threshold 20, evaluated accurately (log1p form).
__device__ __forceinline__ float softplus_thr20(float v) { return v > 20.0f ? v : log1pf(expf(v)); }

// The prefill dt pipeline: bias -> softplus -> clamp to [lo, hi]. fmaxf/fminf map NaN to the bound.
__device__ __forceinline__ float process_dt(float raw, float bias, bool softplus, float lo, float hi) {
  float v = raw + bias;
  if (softplus) v = softplus_thr20(v);
  return fminf(fmaxf(v, lo), hi);
}

// y * silu(z) = y * z * sigmoid(z).
__device__ __forceinline__ float gate(float y, float z) { return y * (z / (1.0f + expf(-z))); }

// Within-chunk decay exp(min(delta, 0)) (mamba_ssm #713).
__device__ __forceinline__ float within_chunk_decay(float dA_to, float dA_from) {
  return expf(fminf(dA_to - dA_from, 0.0f));
}

// The same decay for the tensor-core kernels, whose coefficients are rounded to 16 bits next:
// exp2 of the difference times log2 e (the product rounds relative to the difference itself, so
// the result stays within a few ulp of fp32 expf), a few instructions fewer than expf.
constexpr float kLog2e = 1.4426950408889634f;
__device__ __forceinline__ float within_chunk_decay_exp2(float dA_to, float dA_from) {
  return exp2f(fminf(dA_to - dA_from, 0.0f) * kLog2e);
}

// Programmatic dependent launch (sm_90; common.cuh launch_kernel). wait_previous_grid() returns once
// the previous kernel on the stream has finished and its writes are visible (at once for a kernel
// launched plainly); every kernel calls it before it touches memory another kernel may, so its
// completion implies its predecessor's. allow_next_grid() lets the next kernel be scheduled once
// every block of this one has run it (or exited): only a stage of Mamba2Fwd whose next kernel is a
// stage of the same call runs it, chunk_cumsum, chunk_state and state_passing after their own wait
// (so that a stage scheduled after them finds every kernel before the call finished), CB, which
// reads only the call's inputs, at its start. Elsewhere the next kernel is scheduled as this one's
// blocks exit, onto SMs they have left: scheduled early, beside blocks still running, a grid of one
// wave with several blocks per SM lands unevenly (chunk_cumsum b8, recurrent b1 and
// discretize_segsum with 256 blocks ran 13-15% slower so on the H200).
__device__ __forceinline__ void wait_previous_grid() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
__device__ __forceinline__ void allow_next_grid() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }

// Inclusive prefix sum over the 32 lanes (lane 0 first); fixed order, so deterministic.
__device__ __forceinline__ float warp_inclusive_scan(float v) {
  const int lane = static_cast<int>(threadIdx.x) & (kWarp - 1);
#pragma unroll
  for (int offset = 1; offset < kWarp; offset <<= 1) {
    const float other = __shfl_up_sync(kFullMask, v, offset);
    if (lane >= offset) v += other;
  }
  return v;
}

// One 32-wide step of a running prefix sum (carry = the sum before this step). Lanes past `last`,
// the last lane that holds data (may be < 0 or >= 31; warp-uniform), repeat the value at `last`
// bit for bit, so a padded tail stays exactly flat and the next carry equals that value.
__device__ __forceinline__ float prefix_step(float v, float carry, int64_t last) {
  const int lane = static_cast<int>(threadIdx.x) & (kWarp - 1);
  float s = warp_inclusive_scan(v) + carry;
  if (last < kWarp - 1) {
    const float edge = __shfl_sync(kFullMask, s, last < 0 ? 0 : static_cast<int>(last));
    if (lane > last) s = edge;
  }
  return s;
}

// Sum over the 32 lanes by a fixed butterfly; every lane gets the same bits.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset >>= 1) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
}

}  // namespace ssd_gpu
