// discretize_segsum_fast.cu's shared-memory plan (gpu/src/discretize_segsum_layout.h) against sizes
// worked by hand: the workloads' shape must fit 4 blocks per SM, which its speed rests on.
#include "discretize_segsum_layout.h"

#include <gtest/gtest.h>

#include <cstddef>

namespace {

using ssd_gpu::discretize_segsum_layout::kMinBlocks;
using ssd_gpu::discretize_segsum_layout::Layout;

// An sm_90 SM has 228 KB of shared memory and reserves 1 KB of it per block.
constexpr size_t kSmBytes = 228 * 1024, kReservedPerBlock = 1024;

// SOL-ExecBench's shape: Q = 256, H = 16, G = 1, N = 256, bf16 dt. nk = 256, halves of 128, ldk 136;
// operands 2 (16 + 64) 136 = 21,760 and the raw dt 2 x 256 x 16 = 8,192 beside them, under the
// staged L, 2 x 16 x 16 x 64 = 32,768; Gram 4 x 16 x 72 = 4,608; cumsum 4 x 256 x 16 = 16,384;
// parts 4 (256 + 16) = 1,088: 54,848 in all, and 4 (54,848 + 1,024) = 223,488 <= 233,472.
TEST(DiscretizeSegsumLayout, WorkloadShapeFitsFourBlocksPerSm) {
  const Layout l(256, 16, 1, 256, 2);
  EXPECT_EQ(l.nk, 256);
  EXPECT_EQ(l.k_half, 128);
  EXPECT_EQ(l.ldk, 136);
  EXPECT_EQ(l.operands, 21760u);
  EXPECT_EQ(l.raw, 8192u);
  EXPECT_EQ(l.tiles, 32768u);
  EXPECT_EQ(l.gram, 4608u);
  EXPECT_EQ(l.cs, 16384u);
  EXPECT_EQ(l.part, 1088u);
  EXPECT_EQ(l.total, 54848u);
  EXPECT_EQ(kMinBlocks, 4);
  EXPECT_LE(kMinBlocks * (l.total + kReservedPerBlock), kSmBytes);
}

// An f32 dt doubles the raw copy (16,384): 21,760 + 16,384 = 38,144 is past the staged L, so 60,224
// in all, 3 blocks per SM.
TEST(DiscretizeSegsumLayout, F32DtTakesThreeBlocksPerSm) {
  const Layout l(256, 16, 1, 256, 4);
  EXPECT_EQ(l.tiles, 38144u);
  EXPECT_EQ(l.total, 60224u);
  EXPECT_EQ(kSmBytes / (l.total + kReservedPerBlock), 3u);
}

// N = 240: 15 K steps, the first half one more (8 steps, 128), the second 112; N = 16: one step, all
// of it in the first half, an empty second; N = 8 pads to one step of 16.
TEST(DiscretizeSegsumLayout, KHalves) {
  const Layout odd(256, 24, 2, 240, 2);
  EXPECT_EQ(odd.nk, 240);
  EXPECT_EQ(odd.k_half, 128);
  EXPECT_EQ(odd.nk - odd.k_half, 112);
  const Layout one(64, 8, 8, 16, 2);
  EXPECT_EQ(one.k_half, 16);
  EXPECT_EQ(one.nk - one.k_half, 0);
  const Layout pad(64, 8, 8, 8, 2);
  EXPECT_EQ(pad.nk, 16);
  EXPECT_EQ(pad.ldk, 24);
}

}  // namespace
