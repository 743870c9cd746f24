// chunk_scan_wgmma.cu's plan (gpu/src/chunk_scan_slabs.h), replayed on the host: the warpgroups'
// slabs of a whole chunk and of a split tile's halves on hand-worked cases, every slab of every
// chunk length computed once, the k row order that x is stored in, the warps' rows within a slab,
// and the A/B options' step logic (which steps load the next cb values, when the diagonal group's
// decays are normal).
#include "chunk_scan_slabs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace {

using ssd_gpu::chunk_scan_slabs::diagonal_build_path;
using ssd_gpu::chunk_scan_slabs::diagonal_decays_normal;
using ssd_gpu::chunk_scan_slabs::kLog2eF;
using ssd_gpu::chunk_scan_slabs::kStepsPerGroup;
using ssd_gpu::chunk_scan_slabs::next_cb;
using ssd_gpu::chunk_scan_slabs::NextCb;
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

// next_cb against the index form it replaces (step kb = 4 grp + ks loads step kb + 1 while kb is
// before the slab's last step 4 slab + 3, bounded where kb + 1 >= 4 slab, the diagonal group's first
// step), for every slab of a 256-token chunk and every step of its groups. Hand-worked, slab 2:
// group 1's last step (kb 7) loads kb 8, the diagonal group's first, bounded; group 0's last (kb 3)
// loads kb 4, not bounded; the diagonal group's last (kb 11) loads nothing.
TEST(ChunkScanSlabs, NextCbIsTheIndexForm) {
  EXPECT_TRUE(next_cb(1, 3, 2, false).loads && next_cb(1, 3, 2, false).bounded);
  EXPECT_TRUE(next_cb(0, 3, 2, false).loads && !next_cb(0, 3, 2, false).bounded);
  EXPECT_FALSE(next_cb(2, 3, 2, true).loads);
  for (int slab = 0; slab < 4; ++slab)
    for (int grp = 0; grp <= slab; ++grp)
      for (int ks = 0; ks < kStepsPerGroup; ++ks) {
        const int kb = grp * kStepsPerGroup + ks, last_step = slab * kStepsPerGroup + kStepsPerGroup - 1;
        const NextCb to = next_cb(grp, ks, slab, grp == slab);
        EXPECT_EQ(to.loads, kb < last_step) << "slab " << slab << " group " << grp << " step " << ks;
        if (to.loads) {
          EXPECT_EQ(to.bounded, kb + 1 >= slab * kStepsPerGroup) << "slab " << slab << " step " << kb;
        }
      }
}

// The threshold by hand: a slab falling by 86 gives (-86) log2 e = -124.07, normal; by 87, -125.51,
// not. Then random non-increasing dA over up to 64 rows (steps -U(0, b), b up to 6, so a slab falls
// by up to about 190 and both sides of the threshold come often): wherever diagonal_decays_normal
// holds, every pair k <= i's exponent as the kernel computes it, (dA[i] - dA[k]) log2 e in fp32, is
// at least -125, so 2^x is normal.
TEST(ChunkScanSlabs, DiagonalDecaysNormalBoundsEveryPair) {
  EXPECT_TRUE(diagonal_decays_normal(0.0f, -86.0f));
  EXPECT_FALSE(diagonal_decays_normal(0.0f, -87.0f));
  EXPECT_TRUE(diagonal_decays_normal(-500.0f, -586.0f));
  std::mt19937 rng(20261208);
  int normal_slabs = 0, other_slabs = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const float b = 6.0f * static_cast<float>(trial % 100) / 99.0f;
    std::uniform_real_distribution<float> step(0.0f, b);
    std::vector<float> dA(64);
    dA[0] = -std::uniform_real_distribution<float>(0.0f, 300.0f)(rng);
    for (size_t i = 1; i < dA.size(); ++i) dA[i] = dA[i - 1] - step(rng);
    const int rows = 1 + static_cast<int>(rng() % 64);  // the slab's valid rows
    if (!diagonal_decays_normal(dA[0], dA[static_cast<size_t>(rows - 1)])) {
      ++other_slabs;
      continue;
    }
    ++normal_slabs;
    for (int i = 0; i < rows; ++i)
      for (int k = 0; k <= i; ++k) {
        const float x = (dA[static_cast<size_t>(i)] - dA[static_cast<size_t>(k)]) * kLog2eF;
        ASSERT_GE(x, -125.0f) << "trial " << trial << " i " << i << " k " << k;
        ASSERT_GE(std::exp2(x), 0x1p-125f);
      }
  }
  EXPECT_GT(normal_slabs, 1000);
  EXPECT_GT(other_slabs, 100);
}

}  // namespace
