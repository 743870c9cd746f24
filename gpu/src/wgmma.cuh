// Hopper warpgroup MMA (wgmma.mma_async, sm_90a only): the shared-memory descriptor of a
// 128-byte-swizzled operand tile, the fences and waits that order wgmma against the registers and
// the copies around it, and m64n64k16 with A in registers and B from shared memory. Only files
// compiled for sm_90a include this (the object library ssd_gpu_sm90a); products and fp32
// accumulation are those of mma.sync, only the summation order differs.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "wgmma_layout.h"

namespace ssd_gpu {

// Host: whether the wgmma kernels may run (false where SSD_GPU_WGMMA=0; chunk_state_wgmma.cu).
bool wgmma_allowed();

// ---- Shared-memory operand tiles -------------------------------------------------------------------
// The descriptor of a 128-byte-swizzled MN-major tile's 16-deep step from row k0 (a multiple of 8;
// wgmma_layout.h has the layout and the fields).
__device__ __forceinline__ uint64_t sw128_mn_descriptor(const void* tile_row_k0) {
  return wgmma_layout::sw128_mn_descriptor(static_cast<uint32_t>(__cvta_generic_to_shared(tile_row_k0)));
}

// The descriptor of step `step` (k 16 step .. 16 step + 15) of a K-major tile of 64-row atoms
// (wgmma_layout.h), the tile on a 1024-byte boundary.
__device__ __forceinline__ uint64_t sw128_k_descriptor(const void* tile, int step) {
  return wgmma_layout::sw128_k_descriptor(static_cast<uint32_t>(__cvta_generic_to_shared(tile)), step);
}

// ---- Ordering --------------------------------------------------------------------------------------
// Shared memory written through the generic proxy (st.shared, cp.async) becomes visible to wgmma's
// reads (the async proxy) after this fence by the writing thread, then a barrier.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Every warp of the warpgroup, between writing an A fragment or an accumulator and the wgmma that
// reads it.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Pins registers that a wgmma reads or writes asynchronously to this point of the program (CUTLASS's
// warpgroup_fence_operand): the fence and wait above order memory only, so without it the compiler
// may move the writes of an A fragment or of zeroed accumulators below wgmma_fence(), or a read of
// the accumulators above wgmma_wait(), which the PTX ISA leaves undefined.
__device__ __forceinline__ void wgmma_pin(float& v) { asm volatile("" : "+f"(v)::"memory"); }
__device__ __forceinline__ void wgmma_pin(uint32_t& v) { asm volatile("" : "+r"(v)::"memory"); }
template <class T, int kRows, int kCols>
__device__ __forceinline__ void wgmma_fence_operands(T (&registers)[kRows][kCols]) {
#pragma unroll
  for (int i = 0; i < kRows; ++i)
#pragma unroll
    for (int j = 0; j < kCols; ++j) wgmma_pin(registers[i][j]);
}
// Returns once at most kPending committed groups of this warpgroup are still running.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// ---- m64n64k16, A in registers, B by descriptor ----------------------------------------------------
// d[j][0..3] += A * B over one 16-deep step for the warpgroup's 64 x 64 tile. A: this warp's 16 rows
// (warp % 4) in mma.sync's A fragment layout; B: the descriptor of a 16 x 64 tile stored MN-major
// (rows k, wgmma_m64n64k16_rs) or K-major (rows n, wgmma_m64n64k16_rs_kmajor).
// Accumulator j holds rows lane/4 (+8 for [2], [3]) of the warp's 16, columns 8 j + 2 (lane % 4) + {0, 1}.
template <class T>
__device__ __forceinline__ void wgmma_m64n64k16_rs(float d[8][4], const uint32_t a[4], uint64_t b_descriptor);
template <class T>
__device__ __forceinline__ void wgmma_m64n64k16_rs_kmajor(float d[8][4], const uint32_t a[4], uint64_t b_descriptor);

// The last immediate is wgmma's transpose flag of B: 1 for MN-major, 0 for K-major.
#define SSD_WGMMA_M64N64K16_RS(NAME, T, PTX_TYPE, TRANSPOSE_B)                                                   \
  template <>                                                                                                    \
  __device__ __forceinline__ void NAME<T>(float d[8][4], const uint32_t a[4], uint64_t b_descriptor) {           \
    asm volatile("{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %37, 0;\n"                                \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32." PTX_TYPE "." PTX_TYPE                             \
                 " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"                                      \
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31},"                             \
                 " {%32,%33,%34,%35}, %36, accumulate, 1, 1, " TRANSPOSE_B ";\n}\n"                             \
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]),     \
                   "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),     \
                   "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]),     \
                   "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),     \
                   "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]),     \
                   "+f"(d[7][2]), "+f"(d[7][3])                                                                  \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_descriptor), "n"(1));                       \
  }
SSD_WGMMA_M64N64K16_RS(wgmma_m64n64k16_rs, __half, "f16", "1")
SSD_WGMMA_M64N64K16_RS(wgmma_m64n64k16_rs, __nv_bfloat16, "bf16", "1")
SSD_WGMMA_M64N64K16_RS(wgmma_m64n64k16_rs_kmajor, __half, "f16", "0")
SSD_WGMMA_M64N64K16_RS(wgmma_m64n64k16_rs_kmajor, __nv_bfloat16, "bf16", "0")
#undef SSD_WGMMA_M64N64K16_RS

}  // namespace ssd_gpu
