// wgmma's shared-memory layout (gpu/src/wgmma_layout.h) against the hardware's definitions: the
// 128-byte swizzle as the address bit operation the PTX ISA defines, and the descriptor's fields
// worked out by hand.
#include "wgmma_layout.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

namespace {

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

}  // namespace
