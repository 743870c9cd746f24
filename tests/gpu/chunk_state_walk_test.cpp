// The persistent chunk_state kernel's tile walk (gpu/src/chunk_state_walk.h), replayed on the host
// block by block as the kernel steps it: every tile visited once, the digit steps agreeing with
// division, and the run choice on hand-worked grids.
#include "chunk_state_walk.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

using ssd_gpu::chunk_state_walk::Cursor;
using ssd_gpu::chunk_state_walk::first_tile;
using ssd_gpu::chunk_state_walk::load_of;
using ssd_gpu::chunk_state_walk::next_tile;
using ssd_gpu::chunk_state_walk::plan_walk;
using ssd_gpu::chunk_state_walk::tile_at;
using ssd_gpu::chunk_state_walk::TileAt;
using ssd_gpu::chunk_state_walk::WalkPlan;

struct Shape {
  int64_t batch, chunks, groups, heads_per_group, p_tiles;
  int64_t tiles() const { return batch * chunks * groups * heads_per_group * p_tiles; }
};

constexpr int64_t kSms = 132, kSlots = 2 * kSms, kMaxRun = 4;

WalkPlan plan_of(const Shape& s, int64_t sms = kSms, int64_t slots = kSlots) {
  return plan_walk(s.tiles(), s.p_tiles, s.heads_per_group, s.groups, s.chunks, sms, slots, kMaxRun);
}

// Each block's tiles as the kernel walks them (first_tile, then next_tile until the index passes the
// tiles). Checks the digits of every step against division.
std::vector<std::vector<unsigned>> replay(const WalkPlan& plan) {
  std::vector<std::vector<unsigned>> blocks(static_cast<size_t>(plan.grid));
  for (int64_t block = 0; block < plan.grid; ++block) {
    for (Cursor at = first_tile(static_cast<unsigned>(block), plan.walk); at.tile.index < plan.walk.tiles;
         at = next_tile(at, plan.walk)) {
      const TileAt& cur = at.tile;
      const TileAt by_division = tile_at(cur.index, plan.walk);
      EXPECT_EQ(cur.pt, by_division.pt);
      EXPECT_EQ(cur.hi, by_division.hi);
      EXPECT_EQ(cur.g, by_division.g);
      EXPECT_EQ(cur.c, by_division.c);
      EXPECT_EQ(cur.b, by_division.b);
      blocks[static_cast<size_t>(block)].push_back(cur.index);
    }
  }
  return blocks;
}

void expect_each_tile_once(const Shape& s, const WalkPlan& plan) {
  std::vector<int> seen(static_cast<size_t>(s.tiles()), 0);
  for (const auto& block : replay(plan))
    for (unsigned t : block) ++seen.at(t);
  for (size_t t = 0; t < seen.size(); ++t) ASSERT_EQ(seen[t], 1) << "tile " << t << " of " << seen.size();
}

// Mamba2Fwd 2p7b: 1 x 8 chunks x 80 heads x 1 p tile = 640 tiles on 264 slots. One tile per run:
// blocks 0..111 take 3 tiles (639 - i >= 528), the others 2, so an SM (blocks i and i + 132) holds
// at most 3 + 2 = 5. Runs of 4 give a block 4 tiles; runs of 3 (214 runs, one per block) give both
// blocks of an SM 3, i.e. 6 > 5 + 5/64; runs of 2 (320 runs on 264 blocks) give blocks 0..55 two
// runs, 4 tiles. So runs of 1 on 264 blocks.
TEST(ChunkStateWalk, Mamba2_2p7bKeepsOneTilePerRun) {
  const Shape s{1, 8, 1, 80, 1};
  EXPECT_EQ(load_of(640, 1, kSms, kSlots).block, 3);
  EXPECT_EQ(load_of(640, 1, kSms, kSlots).sm, 5);
  EXPECT_EQ(load_of(640, 3, kSms, kSlots).sm, 6);
  EXPECT_EQ(load_of(640, 2, kSms, kSlots).block, 4);
  const WalkPlan plan = plan_of(s);
  EXPECT_EQ(plan.walk.run, 1u);
  EXPECT_EQ(plan.grid, 264);
  expect_each_tile_once(s, plan);
}

// chunk_state 780m: 1 x 16 chunks x 48 heads = 768 tiles. One tile per run: blocks 0..239 take 3
// (767 - i >= 528), so block 3 and SM 3 + 3 = 6. Runs of 4: 192 runs, one per block, block 4 > 3.
// Runs of 3: 256 runs, one per block of 256, block 3 and SM 3 + 3 = 6: taken, on 256 blocks.
TEST(ChunkStateWalk, Workload780mTakesRunsOfThree) {
  const Shape s{1, 16, 1, 48, 1};
  EXPECT_EQ(load_of(768, 1, kSms, kSlots).block, 3);
  EXPECT_EQ(load_of(768, 1, kSms, kSlots).sm, 6);
  EXPECT_EQ(load_of(768, 4, kSms, kSlots).block, 4);
  const WalkPlan plan = plan_of(s);
  EXPECT_EQ(plan.walk.run, 3u);
  EXPECT_EQ(plan.grid, 256);
  // Block 0 takes tiles 0, 1, 2 (chunk 0, heads 0..2), block 255 tiles 765..767 (chunk 15, heads 45..47).
  const auto blocks = replay(plan);
  EXPECT_EQ(blocks[0], (std::vector<unsigned>{0, 1, 2}));
  EXPECT_EQ(blocks[255], (std::vector<unsigned>{765, 766, 767}));
  expect_each_tile_once(s, plan);
}

// A grid of fewer tiles than slots: one block per tile, no jump taken.
TEST(ChunkStateWalk, SmallGridIsOneBlockPerTile) {
  const Shape s{1, 3, 2, 5, 2};  // 60 tiles
  const WalkPlan plan = plan_of(s);
  EXPECT_EQ(plan.walk.run, 1u);
  EXPECT_EQ(plan.grid, 60);
  const auto blocks = replay(plan);
  for (size_t b = 0; b < blocks.size(); ++b) EXPECT_EQ(blocks[b], (std::vector<unsigned>{static_cast<unsigned>(b)}));
}

// Every shape of a sweep (batch, chunks, groups, heads per group, p tiles; grids around multiples of
// the slots, and other SM counts): each tile once, the digits as by division (in replay), and the
// chosen run no worse than one tile per run for the busiest block and within 1/64 for the busiest SM.
TEST(ChunkStateWalk, SweepVisitsEveryTileOnce) {
  int shapes = 0;
  for (int64_t batch : {1, 2, 3})
    for (int64_t chunks : {1, 2, 7, 16, 33})
      for (int64_t groups : {1, 2, 8})
        for (int64_t heads_per_group : {1, 3, 10, 48})
          for (int64_t p_tiles : {1, 2, 3})
            for (int64_t sms : {132, 7}) {
              const Shape s{batch, chunks, groups, heads_per_group, p_tiles};
              const WalkPlan plan = plan_of(s, sms, 2 * sms);
              ASSERT_GE(plan.walk.run, 1u);
              ASSERT_LE(plan.walk.run, 4u);
              const auto single = load_of(s.tiles(), 1, sms, 2 * sms);
              const auto chosen = load_of(s.tiles(), plan.walk.run, sms, 2 * sms);
              EXPECT_LE(chosen.block, single.block);
              EXPECT_LE(chosen.sm, single.sm + single.sm / 64);
              // load_of against the replayed walk: the busiest block's tiles, and the busiest of the
              // first sms blocks plus the busiest of the rest (an SM holds one of each at most).
              const auto blocks = replay(plan);
              int64_t most_first = 0, most_rest = 0;
              for (size_t b = 0; b < blocks.size(); ++b) {
                int64_t& most = static_cast<int64_t>(b) < sms ? most_first : most_rest;
                most = std::max(most, static_cast<int64_t>(blocks[b].size()));
              }
              EXPECT_EQ(chosen.block, std::max(most_first, most_rest));
              EXPECT_EQ(chosen.sm, most_first + most_rest);
              expect_each_tile_once(s, plan);
              ++shapes;
            }
  EXPECT_EQ(shapes, 3 * 5 * 3 * 4 * 3 * 2);
}

}  // namespace
