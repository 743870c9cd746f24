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

// The descriptor fields that name a 128-byte-swizzled tile of 64-value-wide atoms (PTX ISA, "Matrix
// Descriptor Format"): start address >> 4 in bits 0-13, leading byte offset >> 4 in 16-29, stride
// byte offset >> 4 in 32-45, swizzle mode in 62-63 (1: 128-byte swizzle). The stride is 1024 bytes,
// the distance between groups of 8 rows of 128 bytes; the leading byte offset is unused where a
// step stays within one 64-wide atom, as both operands below do (1, as CUTLASS sets unused fields).
// The start is a multiple of 1024 plus at most 96 bytes, so the swizzle's base offset field stays 0.
__host__ __device__ constexpr uint64_t sw128_descriptor(uint32_t start_address) {
  constexpr uint64_t kLeading = 1, kStride = 1024 >> 4, kSwizzle128 = 1;
  return ((start_address & 0x3ffffu) >> 4) | (kLeading << 16) | (kStride << 32) | (kSwizzle128 << 62);
}

// The descriptor of a start `bytes` (a multiple of 16) further on: only the start address field
// moves, and adding to the low word alone is exact because that field (bits 0-13) cannot carry out
// while the start stays below 2^18 bytes, as every shared-memory address does. A kernel computes
// one descriptor per tile and steps from it by constants, where a descriptor from each step's
// address costs a mask, a shift and a merge per step.
__host__ __device__ constexpr uint64_t sw128_descriptor_plus(uint64_t descriptor, uint32_t bytes) {
  return (descriptor & 0xffffffff00000000ull) | static_cast<uint32_t>(static_cast<uint32_t>(descriptor) + (bytes >> 4));
}

// An MN-major operand (wgmma's transpose flag 1): rows are k, 64 values of m or n wide; a 16-deep
// step from row k0 (a multiple of 8) starts at that row's address, a multiple of 1024 bytes.
__host__ __device__ constexpr uint64_t sw128_mn_descriptor(uint32_t row_address) {
  return sw128_descriptor(row_address);
}

// A K-major operand (transpose flag 0): rows are m or n, each 64 values of k (one atom of 64 k, rows
// of 128 bytes, 8 KB for 64 rows); atom a holds k 64 a .. 64 a + 63. Step s (k 16 s .. 16 s + 15)
// starts 32 bytes per step into its atom's rows: the hardware adds row offsets to that start and
// swizzles the sum, so a step reads vectors 2 (s % 4) and 2 (s % 4) + 1 of each row at their
// swizzled places (sw128_vector with the row's own index).
constexpr uint32_t kSw128AtomRows = 64;
__host__ __device__ constexpr uint32_t sw128_k_step_offset(int step) {
  return static_cast<uint32_t>(step / 4) * kSw128AtomRows * 128 + static_cast<uint32_t>(step % 4) * 32;
}
__host__ __device__ constexpr uint64_t sw128_k_descriptor(uint32_t tile_address, int step) {
  return sw128_descriptor(tile_address + sw128_k_step_offset(step));
}

// Where value (row, k) of such a K-major tile of 64-row atoms is stored, in bytes from the tile's
// start (16-bit values).
__host__ __device__ constexpr uint32_t sw128_k_place(int row, int k) {
  return static_cast<uint32_t>(k / 64) * kSw128AtomRows * 128 + static_cast<uint32_t>(row) * 128 +
         static_cast<uint32_t>(sw128_vector(row, (k % 64) / 8)) * 16 + static_cast<uint32_t>(k % 8) * 2;
}

}  // namespace ssd_gpu::wgmma_layout
