// chunk_scan_wgmma.cu's plan (gpu/src/chunk_scan_slabs.h), replayed on the host: the warpgroups'
// slabs of a whole chunk and of a split tile's halves on hand-worked cases, every slab of every
// chunk length computed once, the k row order that x is stored in, and the warps' rows within a slab.
#include "chunk_scan_slabs.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

using ssd_gpu::chunk_scan_slabs::diagonal_build_path;
using ssd_gpu::chunk_scan_slabs::k_row_of_token;
using ssd_gpu::chunk_scan_slabs::kWarpgroups;
using ssd_gpu::chunk_scan_slabs::last_slab;
using ssd_gpu::chunk_scan_slabs::Slabs;
using ssd_gpu::chunk_scan_slabs::warp_rows;
using ssd_gpu::chunk_scan_slabs::warpgroup_slabs;
using ssd_gpu::chunk_scan_slabs::WarpRows;

// Q = 256, 4 slabs: warpgroup 0 takes slabs 0 and 3 (1 + 4 groups of 64 tokens), warpgroup 1 slabs
// 1 and 2 (2 + 3 groups): 5 groups each.
TEST(ChunkScanSlabs, WholeChunkPairsSlabsOfEqualWork) {
  const Slabs w0 = warpgroup_slabs(0, 4, false, 0), w1 = warpgroup_slabs(1, 4, false, 0);
  EXPECT_EQ(w0.first, 0);
  EXPECT_EQ(w0.second, 3);
  EXPECT_EQ(w1.first, 1);
  EXPECT_EQ(w1.second, 2);
  EXPECT_EQ((w0.first + 1) + (w0.second + 1), 5);
  EXPECT_EQ((w1.first + 1) + (w1.second + 1), 5);
  EXPECT_EQ(last_slab(4, false, 0), 3);
}

// A split tile: half 0 runs slabs 3 (warpgroup 0) and 0 (warpgroup 1) at once, half 1 slabs 2 and 1;
// the tile takes 4 groups instead of the whole block's 5. x is read up to slab 3, then slab 2.
TEST(ChunkScanSlabs, SplitHalvesRunAPairAtOnce) {
  EXPECT_EQ(warpgroup_slabs(0, 4, true, 0).first, 3);
  EXPECT_EQ(warpgroup_slabs(1, 4, true, 0).first, 0);
  EXPECT_EQ(warpgroup_slabs(0, 4, true, 1).first, 2);
  EXPECT_EQ(warpgroup_slabs(1, 4, true, 1).first, 1);
  for (int w = 0; w < kWarpgroups; ++w)
    for (int half : {0, 1}) EXPECT_EQ(warpgroup_slabs(w, 4, true, half).second, -1);
  EXPECT_EQ(last_slab(4, true, 0), 3);
  EXPECT_EQ(last_slab(4, true, 1), 2);
}

// Short chunks: 3 slabs -> {0, 2} and {1}; 2 slabs -> {0} and {1}; 1 slab -> {0} and none.
TEST(ChunkScanSlabs, ShortChunks) {
  EXPECT_EQ(warpgroup_slabs(0, 3, false, 0).second, 2);
  EXPECT_EQ(warpgroup_slabs(1, 3, false, 0).first, 1);
  EXPECT_EQ(warpgroup_slabs(1, 3, false, 0).second, -1);
  EXPECT_EQ(warpgroup_slabs(0, 2, false, 0).second, -1);
  EXPECT_EQ(warpgroup_slabs(1, 2, false, 0).first, 1);
  EXPECT_EQ(warpgroup_slabs(1, 1, false, 0).first, -1);
  EXPECT_EQ(last_slab(1, true, 1), -1);  // half 1 of a one-slab chunk has nothing to do
}

// Every chunk length of 1..4 slabs: the whole block's warpgroups, and the two halves' together, take
// each slab once, and no block reads x past its last slab.
TEST(ChunkScanSlabs, EverySlabOnce) {
  for (int slabs = 1; slabs <= 4; ++slabs) {
    std::vector<int> whole(static_cast<size_t>(slabs), 0), halves(static_cast<size_t>(slabs), 0);
    for (int w = 0; w < kWarpgroups; ++w) {
      const Slabs s = warpgroup_slabs(w, slabs, false, 0);
      for (int slab : {s.first, s.second})
        if (slab >= 0) {
          ASSERT_LT(slab, slabs);
          ASSERT_LE(slab, last_slab(slabs, false, 0));
          ++whole[static_cast<size_t>(slab)];
        }
      for (int half : {0, 1}) {
        const Slabs t = warpgroup_slabs(w, slabs, true, half);
        EXPECT_EQ(t.second, -1);
        if (t.first >= 0) {
          ASSERT_LT(t.first, slabs);
          ASSERT_LE(t.first, last_slab(slabs, true, half));
          ++halves[static_cast<size_t>(t.first)];
        }
      }
    }
    for (int s = 0; s < slabs; ++s) {
      EXPECT_EQ(whole[static_cast<size_t>(s)], 1) << slabs << " slabs, slab " << s;
      EXPECT_EQ(halves[static_cast<size_t>(s)], 1) << slabs << " slabs, slab " << s;
    }
  }
}

// The fragments' k order: k 2 u + e is token 4 u + e and k 8 + 2 u + e token 4 u + 2 + e (u < 4,
// e < 2), so tokens 0..15 sit at k rows 0 1 8 9 | 2 3 10 11 | 4 5 12 13 | 6 7 14 15, and each 16-token
// step keeps its own rows (token 18 = 16 + 2 -> 16 + 8).
TEST(ChunkScanSlabs, TokensInTheFragmentsKOrder) {
  const int expected[16] = {0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15};
  for (int t = 0; t < 16; ++t) EXPECT_EQ(k_row_of_token(t), expected[t]) << "token " << t;
  EXPECT_EQ(k_row_of_token(18), 24);
  EXPECT_EQ(k_row_of_token(255), 255);
  std::vector<int> seen(256, 0);
  for (int t = 0; t < 256; ++t) ++seen[static_cast<size_t>(k_row_of_token(t))];
  for (int k = 0; k < 256; ++k) EXPECT_EQ(seen[static_cast<size_t>(k)], 1) << "k row " << k;
}

// The warps' rows: warp 0 rows 0-7 and 32-39, warp 1 8-15 and 40-47, warp 2 16-23 and 48-55, warp 3
// 24-31 and 56-63, so the four warps take each of the slab's 64 rows once.
TEST(ChunkScanSlabs, WarpsPairAnEarlyAndALateRowGroup) {
  const WarpRows expected[4] = {{0, 32}, {8, 40}, {16, 48}, {24, 56}};
  std::vector<int> seen(64, 0);
  for (int wl = 0; wl < 4; ++wl) {
    const WarpRows r = warp_rows(wl);
    EXPECT_EQ(r.early, expected[wl].early) << "warp " << wl;
    EXPECT_EQ(r.late, expected[wl].late) << "warp " << wl;
    for (int i = 0; i < 8; ++i) {
      ++seen[static_cast<size_t>(r.early + i)];
      ++seen[static_cast<size_t>(r.late + i)];
    }
  }
  for (int row = 0; row < 64; ++row) EXPECT_EQ(seen[static_cast<size_t>(row)], 1) << "row " << row;
}

// The diagonal group's path: step 0 every warp builds both groups (1), step 1 warps 2 and 3 do
// (their early groups 16-31 end there; 1), steps 2 and 3 only late groups are left (1/2 each: 32-63
// on step 2, 48-63 on step 3): 3 fragments' builds, where 16 consecutive rows a warp made warp 3
// build all 4.
TEST(ChunkScanSlabs, DiagonalPathIsThreeBuilds) { EXPECT_DOUBLE_EQ(diagonal_build_path(), 3.0); }

}  // namespace
