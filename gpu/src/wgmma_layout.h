// The shared-memory layout that wgmma reads operands in (wgmma.cuh) as plain C++ for either
// compiler, so host tests check it against the hardware's definition: 128-byte-swizzled rows and
// the matrix descriptor that names such a tile.
#pragma once
#include <cuda_runtime_api.h>  // __host__, __device__ for either compiler

#include <cstdint>

namespace ssd_gpu::wgmma_layout {

// A tile of 128-byte rows (64 values of 16 bits), starting on a 1024-byte boundary, stores the
// 16-byte vector c of row r at vector c ^ (r % 8) of that row: the 128-byte swizzle, which XORs
// address bits 4-6 with bits 7-9, so the 8 rows of an 8 x 8 block of vectors hit distinct banks.
__host__ __device__ constexpr int sw128_vector(int row, int vector) { return vector ^ (row % 8); }

// The wgmma descriptor of such a tile's rows from the one at shared address `row_address` (a
// multiple of 1024, so the swizzle's base offset field stays 0): an MN-major operand (wgmma's
// transpose flag 1) 64 values wide whose groups of 8 rows (k) lie 1024 bytes apart, the stride byte
// offset; the leading byte offset, the distance between 64-wide MN blocks, is unused at that width
// (1, as CUTLASS sets unused fields). Fields (PTX ISA, "Matrix Descriptor Format"): start address
// >> 4 in bits 0-13, leading byte offset >> 4 in 16-29, stride byte offset >> 4 in 32-45, swizzle
// mode in 62-63 (1: 128-byte swizzle).
__host__ __device__ constexpr uint64_t sw128_mn_descriptor(uint32_t row_address) {
  constexpr uint64_t kLeading = 1, kStride = 1024 >> 4, kSwizzle128 = 1;
  return ((row_address & 0x3ffffu) >> 4) | (kLeading << 16) | (kStride << 32) | (kSwizzle128 << 62);
}

}  // namespace ssd_gpu::wgmma_layout
