// chunk_scan_tc.cu's split last wave (gpu/src/chunk_scan_split.h), replayed on the host: the
// launcher's rule on hand-worked grids, every row block of every tile computed once by the blocks
// and warps the kernel maps to it, and no x row read past the block's last row block.
#include "chunk_scan_split.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

using ssd_gpu::chunk_scan_split::block_tile;
using ssd_gpu::chunk_scan_split::kWarps;
using ssd_gpu::chunk_scan_split::last_row_block;
using ssd_gpu::chunk_scan_split::plan_split;
using ssd_gpu::chunk_scan_split::Split;
using ssd_gpu::chunk_scan_split::warp_row_blocks;
using ssd_gpu::chunk_scan_split::WarpRows;

// Mamba2Fwd 2p7b on 132 SMs: 640 tiles, 264 slots. 640 = 2 x 264 + 112 and 2 x 112 <= 264, so the
// last 112 tiles split: blocks 0..527 whole, 528..751 halves (528 + k % 112, half k / 112).
TEST(ChunkScanSplit, Mamba2_2p7bSplitsItsLastWave) {
  const Split s = plan_split(640, 264);
  EXPECT_EQ(s.from, 528);
  EXPECT_EQ(s.tiles, 112);
  EXPECT_FALSE(block_tile(527, 528, 112).split);
  EXPECT_EQ(block_tile(527, 528, 112).tile, 527);
  EXPECT_EQ(block_tile(528, 528, 112).tile, 528);
  EXPECT_EQ(block_tile(528, 528, 112).half, 0);
  EXPECT_EQ(block_tile(639, 528, 112).tile, 639);
  EXPECT_EQ(block_tile(640, 528, 112).tile, 528);  // the first tile's second half
  EXPECT_EQ(block_tile(640, 528, 112).half, 1);
  EXPECT_EQ(block_tile(751, 528, 112).tile, 639);
  EXPECT_EQ(block_tile(751, 528, 112).half, 1);
}

// chunk_scan 780m: 768 tiles = 2 x 264 + 240, and 2 x 240 > 264: no split. Nor for one wave or less
// (264 tiles, 100 tiles), nor for whole waves (528). 1p3b's 16,384 tiles: 62 x 264 + 16, split.
TEST(ChunkScanSplit, OtherGrids) {
  EXPECT_EQ(plan_split(768, 264).tiles, 0);
  EXPECT_EQ(plan_split(768, 264).from, 768);
  EXPECT_EQ(plan_split(264, 264).tiles, 0);
  EXPECT_EQ(plan_split(100, 264).tiles, 0);
  EXPECT_EQ(plan_split(528, 264).tiles, 0);
  EXPECT_EQ(plan_split(16384, 264).tiles, 16);
  EXPECT_EQ(plan_split(16384, 264).from, 16368);
  // 396 = 264 + 132: a last wave of exactly half the slots splits.
  EXPECT_EQ(plan_split(396, 264).tiles, 132);
}

// 16 row blocks (Q = 256): a whole block's warp w takes w and 15 - w; half 0 of a split tile gives
// warps 0-3 the blocks 0..3 and warps 4-7 the blocks 15..12; half 1 warps 0-3 4..7, warps 4-7 11..8.
TEST(ChunkScanSplit, RowBlocksOfAWholeChunk) {
  for (int w = 0; w < kWarps; ++w) {
    const WarpRows whole = warp_row_blocks(w, 16, false, 0);
    EXPECT_EQ(whole.first, w);
    EXPECT_EQ(whole.second, 15 - w);
  }
  const int half0[kWarps] = {0, 1, 2, 3, 15, 14, 13, 12}, half1[kWarps] = {4, 5, 6, 7, 11, 10, 9, 8};
  for (int w = 0; w < kWarps; ++w) {
    EXPECT_EQ(warp_row_blocks(w, 16, true, 0).first, half0[w]);
    EXPECT_EQ(warp_row_blocks(w, 16, true, 1).first, half1[w]);
    EXPECT_EQ(warp_row_blocks(w, 16, true, 0).second, -1);
  }
  EXPECT_EQ(last_row_block(16, true, 0), 15);
  EXPECT_EQ(last_row_block(16, true, 1), 11);
  EXPECT_EQ(last_row_block(16, false, 0), 15);
}

// Every chunk length of 1..16 row blocks: the two halves' warps together take each row block that
// the whole block's warps take, once, and no warp reads x past its half's last row block.
TEST(ChunkScanSplit, HalvesCoverTheWholeBlocksRowsOnce) {
  for (int rows = 1; rows <= 16; ++rows) {
    std::vector<int> whole(static_cast<size_t>(rows), 0), halves(static_cast<size_t>(rows), 0);
    for (int w = 0; w < kWarps; ++w) {
      const WarpRows r = warp_row_blocks(w, rows, false, 0);
      for (int rb : {r.first, r.second})
        if (rb >= 0 && rb < rows) ++whole[static_cast<size_t>(rb)];
      for (int half : {0, 1}) {
        const WarpRows s = warp_row_blocks(w, rows, true, half);
        EXPECT_EQ(s.second, -1);
        if (s.first < 0 || s.first >= rows) continue;  // the kernel's phase loop skips it
        ++halves[static_cast<size_t>(s.first)];
        EXPECT_LE(s.first, last_row_block(rows, true, half)) << rows << " row blocks, warp " << w;
      }
    }
    for (int rb = 0; rb < rows; ++rb) {
      EXPECT_EQ(whole[static_cast<size_t>(rb)], 1) << rows << " row blocks, block " << rb;
      EXPECT_EQ(halves[static_cast<size_t>(rb)], 1) << rows << " row blocks, block " << rb;
    }
  }
}

// Every launch of a sweep of tile counts and SM counts: the blocks of the grid take every tile, a
// split tile's two halves each once and an unsplit tile whole once.
TEST(ChunkScanSplit, GridTakesEveryTile) {
  for (int64_t sms : {1, 7, 132})
    for (int64_t tiles = 1; tiles <= 6 * 2 * sms + 5; ++tiles) {
      const Split s = plan_split(tiles, 2 * sms);
      std::vector<int> whole(static_cast<size_t>(tiles), 0), half(2 * static_cast<size_t>(tiles), 0);
      const int64_t grid = s.from + 2 * s.tiles;
      for (int64_t block = 0; block < grid; ++block) {
        const auto t = block_tile(static_cast<unsigned>(block), static_cast<unsigned>(s.from),
                                  static_cast<unsigned>(s.tiles));
        ASSERT_LT(t.tile, tiles);
        if (t.split)
          ++half[static_cast<size_t>(2 * t.tile + t.half)];
        else
          ++whole[static_cast<size_t>(t.tile)];
      }
      for (int64_t t = 0; t < tiles; ++t) {
        const bool split = t >= s.from;
        EXPECT_EQ(whole[static_cast<size_t>(t)], split ? 0 : 1) << tiles << " tiles, tile " << t;
        EXPECT_EQ(half[static_cast<size_t>(2 * t)], split ? 1 : 0) << tiles << " tiles, tile " << t;
        EXPECT_EQ(half[static_cast<size_t>(2 * t + 1)], split ? 1 : 0) << tiles << " tiles, tile " << t;
      }
    }
}

}  // namespace
