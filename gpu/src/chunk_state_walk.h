// How chunk_state_tc.cu's persistent blocks walk the (batch, chunk, group, head, p) tiles: plain
// C++ for either compiler, so the host tests replay the walk and the run choice that the kernel and
// its launcher use.
#pragma once
#include <cuda_runtime_api.h>  // __host__, __device__, __forceinline__ for either compiler

#include <algorithm>
#include <cstdint>

#include "tensor_view.h"

namespace ssd_gpu::chunk_state_walk {

// A tile's index in the order of states (p tile fastest, then the head within its group, the group,
// the chunk, the batch) and that index's digits.
struct TileAt {
  unsigned index, pt, hi, g, c, b;
};

// How the blocks walk the tiles: in runs of `run` consecutive tiles, block i taking runs i, i + grid,
// i + 2 grid, ... (a run's tiles of one group's chunk share its B rows, which then stay in shared
// memory). `one` and `jump` are the steps to a run's next tile and from a run's last tile to the
// block's next run, (grid - 1) run + 1, as digits (the radices below; the batch digit is unbounded),
// so a block steps by adding digits with carries, not by dividing.
struct TileWalk {
  unsigned tiles, run;
  unsigned p_tiles, heads_per_group, groups, chunks;
  TileAt one, jump;
};

__host__ __device__ __forceinline__ TileAt tile_at(unsigned index, const TileWalk& w) {
  TileAt t;
  t.index = index;
  t.pt = index % w.p_tiles;
  index /= w.p_tiles;
  t.hi = index % w.heads_per_group;
  index /= w.heads_per_group;
  t.g = index % w.groups;
  index /= w.groups;
  t.c = index % w.chunks;
  t.b = index / w.chunks;
  return t;
}

// d + s + carry with d, s < radix and carry 0 or 1: below 2 radix, so one subtraction wraps it.
__host__ __device__ __forceinline__ void add_digit(unsigned& d, unsigned s, unsigned radix, unsigned& carry) {
  d += s + carry;
  carry = d >= radix ? 1u : 0u;
  if (carry != 0) d -= radix;
}

__host__ __device__ __forceinline__ TileAt advance(TileAt t, const TileAt& step, const TileWalk& w) {
  unsigned carry = 0;
  add_digit(t.pt, step.pt, w.p_tiles, carry);
  add_digit(t.hi, step.hi, w.heads_per_group, carry);
  add_digit(t.g, step.g, w.groups, carry);
  add_digit(t.c, step.c, w.chunks, carry);
  t.b += step.b + carry;
  t.index += step.index;  // below 2^32: both terms are at most tiles < 2^31
  return t;
}

// A block's place in its walk: its tile and that tile's place in its run. The kernel and the host
// tests' replay step through a walk with these two alone.
struct Cursor {
  TileAt tile;
  unsigned in_run;
};
// Block `block`'s first tile: its first run's first.
__host__ __device__ __forceinline__ Cursor first_tile(unsigned block, const TileWalk& w) {
  return {tile_at(block * w.run, w), 0u};
}
// The block's tile after c: `one` within a run, `jump` from a run's last tile to its next run's first.
__host__ __device__ __forceinline__ Cursor next_tile(const Cursor& c, const TileWalk& w) {
  const bool run_goes_on = c.in_run + 1 < w.run;
  return {advance(c.tile, run_goes_on ? w.one : w.jump, w), run_goes_on ? c.in_run + 1 : 0u};
}

// The most tiles of one block, and of one SM, when the blocks take runs of `run` tiles (block i the
// runs i, i + grid, ..., the last run cut at `tiles`) and an SM holds one of the first `sms` blocks
// and at most one of the rest, in any pairing (a fresh launch places blocks one per SM first).
struct Load {
  int64_t block, sm;
};
inline Load load_of(int64_t tiles, int64_t run, int64_t sms, int64_t slots) {
  const int64_t runs = ceil_div(tiles, run), grid = std::min(runs, slots);
  int64_t first = 0, second = 0;
  for (int64_t i = 0; i < grid; ++i) {
    const int64_t n = ((runs - 1 - i) / grid + 1) * run - (i == (runs - 1) % grid ? runs * run - tiles : 0);
    int64_t& most = i < sms ? first : second;
    most = std::max(most, n);
  }
  return {std::max(first, second), first + second};
}

// The walk of `tiles` tiles (of the given radices, tiles < 2^31) by at most `slots` resident blocks on
// `sms` SMs, and its grid: runs of the longest length up to max_run that adds no tile to the busiest
// block and at most 1/64 to the busiest SM against one tile per run (B is copied once per run; the
// 640 tiles of Mamba2Fwd 2p7b keep one tile per run: runs of 3 would give some SM 6 tiles instead
// of 5).
struct WalkPlan {
  TileWalk walk;
  int64_t grid;
};
inline WalkPlan plan_walk(int64_t tiles, int64_t p_tiles, int64_t heads_per_group, int64_t groups, int64_t chunks,
                          int64_t sms, int64_t slots, int64_t max_run) {
  WalkPlan plan{};
  TileWalk& walk = plan.walk;
  walk.tiles = static_cast<unsigned>(tiles);
  walk.p_tiles = static_cast<unsigned>(p_tiles);
  walk.heads_per_group = static_cast<unsigned>(heads_per_group);
  walk.groups = static_cast<unsigned>(groups);
  walk.chunks = static_cast<unsigned>(chunks);
  const Load single = load_of(tiles, 1, sms, slots);
  int64_t run = max_run;
  for (; run > 1; --run) {
    const Load l = load_of(tiles, run, sms, slots);
    if (l.block <= single.block && l.sm <= single.sm + single.sm / 64) break;
  }
  plan.grid = std::min(ceil_div(tiles, run), slots);
  walk.run = static_cast<unsigned>(run);
  walk.one = tile_at(1, walk);
  walk.jump = tile_at(static_cast<unsigned>((plan.grid - 1) * run + 1), walk);
  return plan;
}

}  // namespace ssd_gpu::chunk_state_walk
