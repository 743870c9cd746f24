// wgmma's shared-memory layout (gpu/src/wgmma_layout.h) against the hardware's definitions: the
// 128-byte swizzle as the address bit operation the PTX ISA defines, and the descriptor's fields
// worked out by hand.
#include "wgmma_layout.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

namespace {

using ssd_gpu::wgmma_layout::sw128_descriptor_plus;
using ssd_gpu::wgmma_layout::sw128_k_descriptor;
using ssd_gpu::wgmma_layout::sw128_k_step_offset;
using ssd_gpu::wgmma_layout::sw128_k_place;
using ssd_gpu::wgmma_layout::sw128_mn_descriptor;
using ssd_gpu::wgmma_layout::sw128_vector;

// The 128-byte swizzle on a byte offset from a 1024-byte boundary: bits 4-6 (the 16-byte vector in
// a 128-byte row) XOR bits 7-9 (the row in a group of 8).
uint32_t swizzle128(uint32_t offset) { return offset ^ ((offset & 0x380u) >> 3); }

// Value (k, mn) of a 64-wide 16-bit tile: at byte k * 128 + mn * 2 before the swizzle.
TEST(WgmmaLayout, VectorPlaceIsTheAddressSwizzle) {
  for (int k = 0; k < 256; ++k)
    for (int mn = 0; mn < 64; ++mn) {
      const uint32_t stored = static_cast<uint32_t>(k * 128 + sw128_vector(k, mn / 8) * 16 + (mn % 8) * 2);
      EXPECT_EQ(stored, swizzle128(static_cast<uint32_t>(k * 128 + mn * 2))) << "k " << k << " mn " << mn;
    }
}

// By hand: row 0 keeps its order, row 3's vector 7 goes to 7 ^ 3 = 4, row 13 is row 5's pattern
// (vector 2 to 2 ^ 5 = 7); each row is a permutation of its 8 vectors.
TEST(WgmmaLayout, RowsArePermutations) {
  EXPECT_EQ(sw128_vector(0, 6), 6);
  EXPECT_EQ(sw128_vector(3, 7), 4);
  EXPECT_EQ(sw128_vector(13, 2), 7);
  for (int row = 0; row < 16; ++row) {
    std::set<int> places;
    for (int v = 0; v < 8; ++v) places.insert(sw128_vector(row, v));
    EXPECT_EQ(places.size(), 8u) << "row " << row;
  }
}

// Address 0x400: start 0x400 >> 4 = 0x40; leading byte offset field 1 at bit 16 (0x10000); stride
// 1024 >> 4 = 64 at bit 32 (0x40'0000'0000); swizzle mode 1 at bit 62 (0x4000'0000'0000'0000).
// Address 0x2c800 (178 KB): start 0x2c80, the rest the same.
TEST(WgmmaLayout, DescriptorFields) {
  EXPECT_EQ(sw128_mn_descriptor(0x400u), 0x4000004000010040ull);
  EXPECT_EQ(sw128_mn_descriptor(0x2c800u), 0x4000004000012c80ull);
  // The next 16-deep step, 16 rows of 128 bytes further: only the start moves, by 2048 >> 4 = 0x80.
  EXPECT_EQ(sw128_mn_descriptor(0x2c800u + 2048) - sw128_mn_descriptor(0x2c800u), 0x80ull);
}

// Stepping a descriptor by constants names the same starts as the descriptors of the stepped
// addresses: the MN-major steps of 2048 bytes (16 rows of 128) from every 1024-byte boundary of 228
// KB of shared memory, and the K-major steps of two atoms (32 bytes within an atom, 8 KB to the next)
// from every tile start there. Hand-worked: 0x2c800 plus three MN steps, 0x2c800 + 6144 = 0x2e000,
// start field 0x2e00; 0x8000 plus K-major step 5 (8192 + 32 bytes), 0xa020, start field 0xa02.
TEST(WgmmaLayout, DescriptorStepsNameTheSteppedStarts) {
  EXPECT_EQ(sw128_descriptor_plus(sw128_mn_descriptor(0x2c800u), 3 * 2048), 0x4000004000012e00ull);
  EXPECT_EQ(sw128_descriptor_plus(sw128_k_descriptor(0x8000u, 0), sw128_k_step_offset(5)), 0x4000004000010a02ull);
  constexpr uint32_t kSharedBytes = 228 * 1024;
  for (uint32_t tile = 0; tile + 16 * 2048 <= kSharedBytes; tile += 1024) {
    for (uint32_t step = 0; step < 16; ++step)
      ASSERT_EQ(sw128_descriptor_plus(sw128_mn_descriptor(tile), step * 2048), sw128_mn_descriptor(tile + step * 2048))
          << "tile " << tile << " step " << step;
    for (int step = 0; step < 8; ++step)
      ASSERT_EQ(sw128_descriptor_plus(sw128_k_descriptor(tile, 0), sw128_k_step_offset(step)),
                sw128_k_descriptor(tile, step))
          << "tile " << tile << " step " << step;
  }
}

// A K-major operand of two 64-row atoms (64 rows of 128 k, 16 KB): the hardware reads value (row,
// k) of step s from the step's start plus row / 8 strides of 1024 bytes, row % 8 rows of 128 bytes
// and 2 bytes per k of the step, then swizzles that address (PTX ISA, "Shared Memory Matrix Layout",
// K-major with the 128-byte swizzle). The start is the descriptor's field (bits 0-13, times 16),
// so this also checks that the descriptor names the step.
TEST(WgmmaLayout, KMajorStepsReadTheStoredPlaces) {
  constexpr uint32_t kTile = 0x8000;  // a multiple of 1024, as the kernel's tiles are
  for (int step = 0; step < 8; ++step) {
    const uint32_t start = static_cast<uint32_t>(sw128_k_descriptor(kTile, step) & 0x3fffu) << 4;
    for (int row = 0; row < 64; ++row)
      for (int kk = 0; kk < 16; ++kk) {
        const uint32_t read = swizzle128(start - kTile + (row / 8) * 1024 + (row % 8) * 128 + kk * 2);
        EXPECT_EQ(read, sw128_k_place(row, 16 * step + kk)) << "step " << step << " row " << row << " k " << kk;
      }
  }
}

// By hand, tile at 0x8000 (start field 0x800): step 3 starts 3 x 32 = 96 bytes in (0x8060 >> 4 =
// 0x806); step 4 is atom 1's first, 64 rows x 128 bytes = 0x2000 further (0xa000 >> 4 = 0xa00);
// step 7 is 0xa060 (0xa06). The other fields as the MN-major tile's: 0x4000004000010000.
// Places: value (0, 0) at 0; (3, 9) in vector 1 ^ 3 = 2 of row 3, 3 x 128 + 2 x 16 + 1 x 2 = 418;
// (10, 70) in atom 1 (8192), row 10 (1280), vector 0 ^ 2 = 2 (32), k 6 of it (12): 9516.
TEST(WgmmaLayout, KMajorDescriptorFields) {
  EXPECT_EQ(sw128_k_descriptor(0x8000u, 0), 0x4000004000010800ull);
  EXPECT_EQ(sw128_k_descriptor(0x8000u, 3), 0x4000004000010806ull);
  EXPECT_EQ(sw128_k_descriptor(0x8000u, 4), 0x4000004000010a00ull);
  EXPECT_EQ(sw128_k_descriptor(0x8000u, 7), 0x4000004000010a06ull);
  EXPECT_EQ(sw128_k_place(0, 0), 0u);
  EXPECT_EQ(sw128_k_place(3, 9), 418u);
  EXPECT_EQ(sw128_k_place(10, 70), 9516u);
}

}  // namespace
