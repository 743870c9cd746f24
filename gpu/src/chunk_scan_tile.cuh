// What chunk_scan's two tensor-core kernels share (chunk_scan_tc.cu on mma.sync, chunk_scan_wgmma.cu
// on wgmma): a block's tile and the sizes that follow from it, a token's scale of the carried-in
// term, a thread's loads of the f32 entering states, and the epilogue of a warp's 16 output rows
// from their fp32 sums in shared memory.
#pragma once
#include "chunk_scan_split.h"
#include "common.cuh"
#include "mma.cuh"

namespace ssd_gpu::chunk_scan_tile {

constexpr int kWarps = 8;
constexpr int kBlockThreads = kWarps * 32;
constexpr int kBN = 64;          // head-dim p per block
constexpr int kMaxN = 128;       // the kernels take N <= 128 and Q <= 256
constexpr int kMaxQ = 256;
constexpr int kLdN = kMaxN + 8;  // rows of n (C, prev)
constexpr int kLdO = kBN + 4;    // floats per row of a warp's fp32 output tile
static_assert(kMaxQ <= kBlockThreads, "one thread loads one token of the chunk vectors");
static_assert(kWarps == chunk_scan_split::kWarps, "the split's warp mapping counts the block's warps");

// A block's tile: blocks from split_from on take half a tile (chunk_scan_split.h), the tile is the
// (batch b, chunk c, head h, 64 p from p0) of the call, and the rest follows from it.
struct Tile {
  int64_t Q, H, P, G, N, S;
  chunk_scan_split::BlockTile place;
  int64_t p0, h, c, b, t0;
  int valid;         // tokens of the chunk, <= 256
  int64_t g, vec;    // vec: [b,h,c,0] of dt and dA
  int nk;            // K of the n GEMM, zero columns past N
  int n_in, rows_p;
  const void* x;     // the call's x and C
  const void* C;
  int64_t c_row0;    // token-major row of token t0 in C

  __device__ __forceinline__ Tile(const ChunkScanParams& p, unsigned split_from, unsigned split_tiles)
      : Q(p.chunk), H(p.heads), P(p.headdim), G(p.groups), N(p.dstate), S(p.seqlen) {
    const int64_t p_tiles = ceil_div(P, kBN);
    place = chunk_scan_split::block_tile(blockIdx.x, split_from, split_tiles);
    int64_t tile = place.tile;
    p0 = (tile % p_tiles) * kBN;
    tile /= p_tiles;
    h = tile % H;
    tile /= H;
    c = tile % p.chunks, b = tile / p.chunks;
    t0 = c * Q;
    valid = static_cast<int>(min(Q, S - t0));
    g = h / (H / G);
    vec = ((b * H + h) * p.chunks + c) * Q;
    nk = static_cast<int>((N + 15) / 16 * 16);
    n_in = static_cast<int>(N), rows_p = static_cast<int>(min(P - p0, int64_t{kBN}));
    x = p.x.p;
    C = p.C.p;
    c_row0 = (b * S + t0) * G + g;
  }

  // A warp's 16 C rows of row block rb (none where rb < 0 or the block is past the valid tokens)
  // into its region of [16][kLdN], as one commit group of this thread's copies.
  template <class T>
  __device__ __forceinline__ void copy_c_rows(T* sRegion, int rb, int lane) const {
    if (rb >= 0 && rb * 16 < valid)
      copy_tile_async<16, kMaxN, 32>(sRegion, kLdN, static_cast<const T*>(C) + (c_row0 + int64_t{rb} * 16 * G) * N,
                                     G * N, valid - rb * 16, n_in, lane);
    cp_async_commit();
  }
  // A warp's C rows as two groups of 8, rows early_i .. early_i + 7 and kLate rows further (none
  // where early_i < 0 or is past the valid tokens), into rows 0-7 and 8-15 of its region, as one
  // commit group of this thread's copies (chunk_scan_wgmma.cu's row pairs). copy_tile_async's walk
  // of 16 rows, its source pointer moved once to the late group: one pointer, no second walk.
  template <int kLate, class T>
  __device__ __forceinline__ void copy_c_row_groups(T* sRegion, int early_i, int lane) const {
    static_assert(sizeof(T) == 2, "16-bit C: 8 values a 16-byte vector");
    if (early_i >= 0 && early_i < valid) {
      constexpr int kVecsPerRow = kMaxN / 8, kRowStep = 32 / kVecsPerRow;
      const int row = lane / kVecsPerRow, col = (lane % kVecsPerRow) * 8;
      const bool col_in = col < n_in;
      const int64_t ld = G * N;
      const T* from = static_cast<const T*>(C) + (c_row0 + int64_t{early_i} * G) * N + row * ld + col;
      T* to = sRegion + row * kLdN + col;
#pragma unroll
      for (int i = 0; i < 16 / kRowStep; ++i) {
        const int r = row + i * kRowStep;  // the region's row; rows 8-15 are the late group's
        if (i == 8 / kRowStep) from += (kLate - 8) * ld;
        cp_async16(to, from, col_in && early_i + (r < 8 ? r : kLate + r - 8) < valid);
        from += kRowStep * ld;
        to += kRowStep * kLdN;
      }
    }
    cp_async_commit();
  }
};

// Token k's scale of the carried-in term, exp(dA_k) (chunk start -> token k: not clamped), which
// reaches k only if k has the id the previous chunk ended with.
__device__ __forceinline__ float carried_in_scale(bool k_in, int32_t id_own, int32_t id_before, float dA_own) {
  float scale = 0.0f;
  if (k_in && id_own == id_before) scale = expf(dA_own);
  return scale;
}

// The f32 entering states of a tile as the block's threads load them: thread tid holds kPrevPasses
// vectors of 8 (rows prev_row + i * kPrevRowStep, columns prev_col ..), zeros past P and N, which
// become 16-bit rows in shared memory (each kernel its own layout).
constexpr int kPrevVecs = kMaxN / 8, kPrevRowStep = kBlockThreads / kPrevVecs, kPrevPasses = kBN / kPrevRowStep;

__device__ __forceinline__ void load_entering_f32(float4 (&v)[kPrevPasses][2], const float* prev, int64_t prev_row0,
                                                  int prev_row, int prev_col, int rows_p, int n_in, int64_t N) {
#pragma unroll
  for (int i = 0; i < kPrevPasses; ++i) {
    const int r = prev_row + i * kPrevRowStep;
    v[i][0] = v[i][1] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (r < rows_p && prev_col < n_in) {
      const float4* at = reinterpret_cast<const float4*>(prev + (prev_row0 + r) * N + prev_col);
      v[i][0] = at[0], v[i][1] = at[1];
    }
  }
}

// One such vector of 8, rounded to the 16-bit dtype T.
template <class T>
__device__ __forceinline__ uint4 round_entering(const float4 (&v)[2]) {
  const float4 lo = v[0], hi = v[1];
  const float values[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  return pack8<T>(values);
}

// Where a block's output rows go: its tile (batch b, chunk from token t0, head h, p from p0) and
// the tensors the epilogue reads and writes.
template <class T>
struct OutputRows {
  const T* x;
  T* out;
  T* out_x;
  int64_t b, S, t0, H, h, P, p0;
  int valid;

  __device__ __forceinline__ OutputRows(const ChunkScanParams& p, const Tile& t)
      : x(static_cast<const T*>(t.x)),
        out(static_cast<T*>(p.out.p)),
        out_x(static_cast<T*>(p.out_x.p)),
        b(t.b), S(t.S), t0(t.t0), H(t.H), h(t.h), P(t.P), p0(t.p0), valid(t.valid) {}

  // Rows first_i .. first_i + 15 of the chunk, whose sums are in sOut [16][kLdO]: each lane finishes
  // 8 consecutive p of a row (skip term, out_x before the gate, gate) and stores them with one
  // 16-byte store, rounded to x's dtype.
  __device__ __forceinline__ void store(const ChunkScanParams& p, const float* sOut, int first_i, int lane) const {
    store_rows<0>(p, sOut, first_i, lane);
  }
  // The same for two groups of 8 rows, sOut's rows 0-7 from early_i and 8-15 from early_i + kLate.
  template <int kLate>
  __device__ __forceinline__ void store_groups(const ChunkScanParams& p, const float* sOut, int early_i, int lane) const {
    store_rows<kLate - 8>(p, sOut, early_i, lane);
  }

 private:
  // sOut's rows r to the chunk's rows first_i + r, those from r = 8 on kJump rows further, up to
  // the valid length (the rows rise with r, so the first row past it ends the loop).
  template <int kJump>
  __device__ __forceinline__ void store_rows(const ChunkScanParams& p, const float* sOut, int first_i, int lane) const {
    constexpr int kOutVecs = kBN / 8, kOutRowStep = 32 / kOutVecs;
    const int out_col = (lane % kOutVecs) * 8;
    if (p0 + out_col < P) {  // P is a multiple of 8: all 8 or none
      float d_skip[8] = {};  // D of these 8 p (one value per head without hdim)
      if (p.D.p != nullptr) {
#pragma unroll
        for (int q = 0; q < 8; ++q) d_skip[q] = load(p.D, p.d_has_hdim ? h * P + p0 + out_col + q : h);
      }
#pragma unroll
      for (int r = lane / kOutVecs; r < 16; r += kOutRowStep) {
        const int jump = r >= 8 ? kJump : 0;
        if (first_i + r + jump >= valid) break;
        const int64_t at = ((b * S + t0 + first_i + r + jump) * H + h) * P + p0 + out_col;
        float y[8];
        const float4 y0 = *reinterpret_cast<const float4*>(sOut + r * kLdO + out_col);
        const float4 y1 = *reinterpret_cast<const float4*>(sOut + r * kLdO + out_col + 4);
        y[0] = y0.x, y[1] = y0.y, y[2] = y0.z, y[3] = y0.w, y[4] = y1.x, y[5] = y1.y, y[6] = y1.z, y[7] = y1.w;
        if (p.D.p != nullptr) {
          Vec8<T> xv;
          xv.raw = *reinterpret_cast<const uint4*>(x + at);
#pragma unroll
          for (int q = 0; q < 8; ++q) y[q] += d_skip[q] * Half16<T>::to(xv.h[q]);
        }
        if (p.z.p != nullptr) {
          if (out_x != nullptr) *reinterpret_cast<uint4*>(out_x + at) = pack8<T>(y);
          float zv[8];
          load8(p.z, at, zv);
#pragma unroll
          for (int q = 0; q < 8; ++q) y[q] = gate(y[q], zv[q]);
        }
        *reinterpret_cast<uint4*>(out + at) = pack8<T>(y);
      }
    }
  }
};

}  // namespace ssd_gpu::chunk_scan_tile
