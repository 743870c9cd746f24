// The fp32 kernels' register-tile GEMM step (chunk_coupling.cu, chunk_state.cu, chunk_scan.cu): a
// 256-thread block computes a 64 x 64 output tile, each thread the 4 x 4 outputs (ty + 16 r,
// tx + 16 s), from two operand tiles that the block staged in shared memory as [k][row].
#pragma once
#include <cuda_runtime.h>

namespace ssd_gpu::register_tile {

constexpr int kTile = 64;  // output tile edge
constexpr int kStep = 32;  // reduction depth staged per step
constexpr int kSub = 16;   // threads per tile edge
constexpr int kPer = kTile / kSub;

// acc[r][s] += sum over kk < kStep of L[kk][ty + kSub r] * R[kk][tx + kSub s], in the order of kk.
// kLdL and kLdR are the rows' lengths: kTile, or kTile + 1 where the staging writes go down a column.
template <int kLdL, int kLdR>
__device__ __forceinline__ void multiply_step(float (&acc)[kPer][kPer], const float (&L)[kStep][kLdL],
                                              const float (&R)[kStep][kLdR], int ty, int tx) {
#pragma unroll 8
  for (int kk = 0; kk < kStep; ++kk) {
    float a[kPer], b[kPer];
#pragma unroll
    for (int r = 0; r < kPer; ++r) a[r] = L[kk][ty + kSub * r];
#pragma unroll
    for (int s = 0; s < kPer; ++s) b[s] = R[kk][tx + kSub * s];
#pragma unroll
    for (int r = 0; r < kPer; ++r)
#pragma unroll
      for (int s = 0; s < kPer; ++s) acc[r][s] += a[r] * b[s];
  }
}

}  // namespace ssd_gpu::register_tile
