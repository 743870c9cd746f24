// How chunk_scan_tc.cu splits a last wave of tiles that is at most half full: the launcher's rule,
// a block's tile and half, and a warp's 16-row blocks. Plain C++ for either compiler, so the host
// tests replay what the kernel and its launcher compute.
#pragma once
#include <cuda_runtime_api.h>  // __host__, __device__, __forceinline__ for either compiler

#include <cstdint>

namespace ssd_gpu::chunk_scan_split {

constexpr int kWarps = 8;  // warps of a block; a whole block's warp w takes row blocks w and R - 1 - w

// The launch: blocks [0, from) take a whole tile each (tile = block), blocks [from, from + 2 tiles)
// half of tile from + k % tiles each (half k / tiles). tiles = 0: no split, from = every tile.
struct Split {
  int64_t from, tiles;
};

// Where the last wave after whole waves of `slots` resident blocks is at most half of them, its tiles
// are split (Mamba2Fwd 2p7b on 132 SMs: 640 tiles, 264 slots, the last 112 tiles -> 224 blocks);
// the grid, from + 2 tiles, stays below 2^31.
inline Split plan_split(int64_t tiles, int64_t slots) {
  const int64_t last_wave = tiles % slots;
  const bool split = tiles > slots && last_wave > 0 && 2 * last_wave <= slots && tiles + last_wave <= 0x7fffffff;
  const int64_t split_tiles = split ? last_wave : 0;
  return {tiles - split_tiles, split_tiles};
}

// A block's tile, and which half of it (0 for a whole tile).
struct BlockTile {
  int64_t tile;
  bool split;
  int half;
};
__host__ __device__ __forceinline__ BlockTile block_tile(unsigned block, unsigned split_from, unsigned split_tiles) {
  BlockTile t;
  t.split = block >= split_from;
  const unsigned k = block - split_from;
  t.half = t.split && k >= split_tiles ? 1 : 0;
  t.tile = t.split ? split_from + k % split_tiles : block;
  return t;
}

// A warp's row blocks of a chunk of `row_blocks` 16-row blocks, -1 for none. Whole block: w, and
// R - 1 - w where that is past the first kWarps (for R < 16 the blocks past 8 go to the first warps).
// Half s of a split tile: warp j takes the first block of whole-block warp 4 s + j (j < 4) or the
// second one of warp 4 s + j - 4 (j >= 4), if that exists.
struct WarpRows {
  int first, second;
};
__host__ __device__ __forceinline__ WarpRows warp_row_blocks(int warp, int row_blocks, bool split, int half) {
  int first = warp, second = row_blocks - 1 - warp;
  if (split) {
    const int pair = 4 * half + (warp & 3), pair_second = row_blocks - 1 - pair;
    first = warp < 4 ? pair : pair_second;
    if (first < kWarps && warp >= 4) first = -1;
    second = -1;
  }
  if (second < kWarps) second = -1;
  return {first, second};
}

// The block's last row block (x rows past it are never read): half 1 of a split tile stops at the
// second block of warp 4 (or the first of warp 7).
__host__ __device__ __forceinline__ int last_row_block(int row_blocks, bool split, int half) {
  return split && half == 1 ? (row_blocks - 5 >= kWarps ? row_blocks - 5 : 7) : row_blocks - 1;
}

}  // namespace ssd_gpu::chunk_scan_split
