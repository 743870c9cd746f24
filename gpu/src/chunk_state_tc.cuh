// SSDChunkStateFwd on tensor cores (x and B both f16 or both bf16): states[b,c,h] = X_c^T * Bw_c,
// Bw[k,n] = round_x(B[k,n] * w[k]). The tile walk, copies and weights of both tensor-core kernels,
// whose GEMM is a template argument: mma.sync (chunk_state_tc.cu, any sm_90 device) or wgmma
// (chunk_state_wgmma.cu, sm_90a).
//
// A persistent grid of two 256-thread blocks per SM walks the 64x128 (p, n) tiles of each (batch,
// chunk, head) in the order of states, in runs of a few consecutive tiles: block i takes runs i, i +
// grid, ..., so at any time the blocks hold neighbouring tiles and a group's B rows come from L2 after
// its first head, and within a run of one chunk they stay in shared memory. Each of the 8 warps owns
// 16 n columns of all 64 p over the whole chunk, so no warp waits for another's partial sums and the
// accumulators leave straight from registers. A tile's x and B rows arrive by cp.async in four groups
// of 64 tokens; the GEMM starts on the first while the others land, and as soon as every warp is past
// a group its rows take the same group of the block's next tile. So the next tile's loads are in
// flight during this tile's GEMM and its store drain, its dA, dt and sequence ids (copied with its
// first group) are in shared memory when it starts, and a block's launch and prologue are paid once,
// not per tile (with one block per tile, each block's stores drained with nothing else in flight and
// each new block's first loads were exposed). Two resident blocks cover the remaining barrier and
// load latency (a grid of one block per SM, splitting k between two warpgroups and summing through
// shared memory, was bound by that latency, not by memory). B is scaled by w and rounded to x's dtype
// in registers between ldmatrix and the MMA, the same products as scaling it in shared memory.
//
// The GEMM policy Gemm provides: the shared-memory plan (kXAt, kBAt, kVecAt, kSharedBytes, kAlign:
// the alignment of the dynamic shared memory's start that the plan needs), how x is stored (kLdX
// elements per row, kSwizzleX: 128-byte swizzled rows), landed() after a wait for copies (what must
// happen before the block barrier that publishes them to the GEMM), computes(warp, N), zero(),
// multiply(sX, sB, sW, n0, k0, ksteps) over the 16-deep steps of the 64-token group from k0 that
// reach the chunk's last valid token (a GEMM may run the whole group instead: its x and B rows
// past the valid tokens are zeros and so is w there), and store(...) of the warp's 64 p x 16 n
// accumulators.
#pragma once
#include "chunk_state_walk.h"
#include "common.cuh"
#include "mma.cuh"

namespace ssd_gpu::chunk_state_tc {

using chunk_state_walk::Cursor;
using chunk_state_walk::first_tile;
using chunk_state_walk::next_tile;
using chunk_state_walk::TileAt;
using chunk_state_walk::TileWalk;

constexpr int kBM = 64;     // p per tile
constexpr int kBN = 128;    // n per tile (the fast path takes N <= 128)
constexpr int kMaxQ = 256;  // tokens per chunk the shared tiles hold (one per thread for w)
constexpr int kWarps = 8, kBlockThreads = kWarps * 32, kBlocksPerSm = 2;
constexpr int kWarpN = kBN / kWarps;                          // n columns per warp, all kBM p
constexpr int kGroupRows = 64, kGroups = kMaxQ / kGroupRows;  // cp.async groups of tokens
constexpr int kLdB = kBN + 8;                                 // B rows padded: conflict-free ldmatrix
constexpr int kRowVecs = kMaxQ / 4;  // 16-byte vectors of a chunk's f32 or int32 row
static_assert(kMaxQ == kBlockThreads, "one thread computes the weight of one token");
// Tiles per run at most: longer runs copy B less often (on the H200 runs of up to 4 made
// chunk_state 1.17x faster than the same walk with one tile per run: 1.07x).
constexpr int kMaxRun = 4;
static_assert(kGroups == 4, "the waits below are written out for four groups");
static_assert(3 * kRowVecs <= kBlockThreads, "dA, dt and the sequence ids are copied by distinct threads");

// The parts of shared memory, one tile's worth each: the next tile's copies reuse each part once this
// tile is done with it. B [kMaxQ][kLdB]; x [kMaxQ][the policy's kLdX]; dA, dt and w [kMaxQ] in f32
// and the sequence ids [kMaxQ].
constexpr size_t kBBytes = size_t{kMaxQ} * kLdB * 2;
constexpr size_t kVecBytes = 3 * kMaxQ * sizeof(float) + kMaxQ * sizeof(int32_t);
// 228 KB of shared memory per sm_90 SM, 1 KB of it reserved per block.
constexpr bool fits_two_blocks(size_t shared_bytes) { return kBlocksPerSm * (shared_bytes + 1024) <= 228 * 1024; }

__host__ __device__ constexpr int round16(int v) { return (v + 15) / 16 * 16; }

// Where a tile's data lie.
struct TilePlace {
  int64_t b, c, g, h, p0, t0;
  int valid;  // the chunk's tokens, >= 1
};

template <class T, class Gemm>
__global__ void __launch_bounds__(kBlockThreads, kBlocksPerSm)
    chunk_state_tc_kernel(ChunkStateParams p, TileWalk walk, bool vectors_by_copy, bool ids_by_copy) {
  wait_previous_grid();
  if (p.stage_of_call) allow_next_grid();  // state_passing, which waits before it reads anything
  extern __shared__ uint4 smem[];
  unsigned char* const bytes = Gemm::aligned(reinterpret_cast<unsigned char*>(smem));
  T* const sB = reinterpret_cast<T*>(bytes + Gemm::kBAt);  // [k][n] as stored
  T* const sX = reinterpret_cast<T*>(bytes + Gemm::kXAt);  // [k][p] as stored (swizzled or padded)
  float* const sDA = reinterpret_cast<float*>(bytes + Gemm::kVecAt);
  float* const sDt = sDA + kMaxQ;
  float* const sW = sDt + kMaxQ;
  int32_t* const sIds = reinterpret_cast<int32_t*>(sW + kMaxQ);
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32;
  const int64_t H = p.heads, P = p.headdim, G = p.groups, N = p.dstate, S = p.seqlen;
  const int Q = static_cast<int>(p.chunk);
  const int k = tid;  // the token whose weight this thread computes

  const auto place = [&](const TileAt& t) {
    TilePlace at;
    at.b = t.b, at.c = t.c, at.g = t.g, at.h = at.g * walk.heads_per_group + t.hi, at.p0 = int64_t{t.pt} * kBM;
    at.t0 = at.c * Q;
    at.valid = static_cast<int>(min(static_cast<int64_t>(Q), S - at.t0));
    return at;
  };
  const auto vec_of = [&](const TilePlace& at) { return ((at.b * H + at.h) * p.chunks + at.c) * Q; };  // [b,h,c,0]

  // This thread's token of a tile's inputs that do not arrive by copy (the sequence ids, dA and dt):
  // plain loads into registers, issued before the block's first copies for its first tile, and for
  // the next tile once this tile's GEMM is done (no register holds them across it) and before the
  // next tile's last group (a load issued after copies returns after them).
  const bool token_loads = !vectors_by_copy || (p.seq_idx != nullptr && !ids_by_copy);
  int32_t id_k = 0, id_last = 0;
  float dA_end = 0.0f, dA_k = 0.0f, dt_k = 0.0f;
  const auto load_token = [&](const TileAt& t) {
    if (!token_loads || t.index >= walk.tiles) return;
    const TilePlace at = place(t);
    if (k >= at.valid) return;
    if (p.seq_idx != nullptr && !ids_by_copy) {
      const int32_t* row_ids = p.seq_idx + at.b * S + at.t0;
      id_last = row_ids[at.valid - 1];
      id_k = row_ids[k];
    }
    if (!vectors_by_copy) {
      const int64_t vec = vec_of(at);
      dA_end = load(p.dA, vec + Q - 1), dA_k = load(p.dA, vec + k), dt_k = load(p.dt, vec + k);
    }
  };

  // A tile's copies. Its dA and dt where they are f32 rows of 16-byte multiples (threads 0..63 dA,
  // 64..127 dt, Q / 4 <= 64 vectors each) and its sequence ids where their rows are (128..191): issued
  // first, into the commit group of its first x and B rows.
  const auto issue_vectors = [&](const TileAt& t) {
    if (t.index >= walk.tiles || tid >= 3 * kRowVecs) return;
    const TilePlace at = place(t);
    const int which = tid / kRowVecs, kv = (tid % kRowVecs) * 4;
    if (which == 2) {
      if (ids_by_copy && kv < at.valid) cp_async16(sIds + kv, p.seq_idx + at.b * S + at.t0 + kv, true);
    } else if (vectors_by_copy && kv < Q) {
      cp_async16((which == 0 ? sDA : sDt) + kv,
                 static_cast<const float*>(which == 0 ? p.dA.p : p.dt.p) + vec_of(at) + kv, true);
    }
  };
  // Its x and B rows from the chunk's first token, computed once for the four groups (valid 0 past
  // the walk: no copies).
  struct Rows {
    const T* x;
    const T* B;
    int valid, x_cols;
  };
  const T* const x = static_cast<const T*>(p.x.p);
  const T* const B = static_cast<const T*>(p.B.p);
  const int64_t ld_x = H * P, ld_b = G * N;
  const auto rows_of = [&](const TileAt& t) {
    Rows r{x, B, 0, 0};
    if (t.index < walk.tiles) {
      const TilePlace at = place(t);
      r.x = x + ((at.b * S + at.t0) * H + at.h) * P + at.p0;
      r.B = B + ((at.b * S + at.t0) * G + at.g) * N;
      r.valid = at.valid;
      r.x_cols = static_cast<int>(P - at.p0);
    }
    return r;
  };
  // Group j: x and B rows [64 j, 64 j + 64), zeros past the valid tokens, no copy where the group
  // lies wholly past them (the GEMM stops before it); B's only where the rows there are another
  // chunk's or group's. Always one commit group, so the wait counts are fixed. A group starts on a
  // multiple of 8 rows, so swizzled x rows keep their pattern.
  const auto issue = [&](const Rows& r, int j, bool copy_B) {
    const int k0 = j * kGroupRows;
    if (k0 < r.valid) {
      copy_tile_async<kGroupRows, kBM, kBlockThreads, Gemm::kSwizzleX>(sX + k0 * Gemm::kLdX, Gemm::kLdX,
                                                                       r.x + k0 * ld_x, ld_x, r.valid - k0, r.x_cols);
      if (copy_B)
        copy_tile_async<kGroupRows, kBN, kBlockThreads>(sB + k0 * kLdB, kLdB, r.B + k0 * ld_b, ld_b, r.valid - k0,
                                                        static_cast<int>(N));
    }
    cp_async_commit();
  };

  const int wn = warp * kWarpN;
  const bool warp_in = Gemm::computes(warp, static_cast<int>(N));
  Cursor cur = first_tile(blockIdx.x, walk);
  load_token(cur.tile);
  issue_vectors(cur.tile);
  {
    const Rows first = rows_of(cur.tile);
#pragma unroll
    for (int j = 0; j < kGroups; ++j) issue(first, j, true);
  }
  while (cur.tile.index < walk.tiles) {
    const Cursor after = next_tile(cur, walk);
    const TileAt& next = after.tile;
    const Rows next_rows = rows_of(next);
    const bool copy_B = next.b != cur.tile.b || next.c != cur.tile.c || next.g != cur.tile.g;
    const TilePlace at = place(cur.tile);
    const int rows = round16(at.valid);  // K of the GEMM, zero rows past valid

    // w[k] = exp(min(dA[Q-1] - dA[k], 0)) dt[k] for this thread's token k = tid where it enters the
    // state: it is valid and of the sequence active at the chunk's last valid token (none if that is
    // padding). 0 otherwise, rows past valid included, so those products are zeros.
    cp_async_wait<kGroups - 1>();  // group 0 has landed (this thread's copies)
    Gemm::landed();
    __syncthreads();  // ... every thread's
    bool token_in = k < at.valid;
    if (token_in && p.seq_idx != nullptr) {
      if (ids_by_copy) id_last = sIds[at.valid - 1], id_k = sIds[k];
      token_in = id_last >= 0 && id_k == id_last;
    }
    if (token_in && vectors_by_copy) dA_end = sDA[Q - 1], dA_k = sDA[k], dt_k = sDt[k];  // dA read at Q-1
    sW[k] = token_in ? within_chunk_decay(dA_end, dA_k) * dt_k : 0.0f;
    __syncthreads();  // w is visible; dA, dt and the ids are read, so the next tile's may land there

    Gemm gemm;
    gemm.zero();
    const auto multiply = [&](int j) {  // the 16-deep steps of group j below rows
      const int k0 = j * kGroupRows;
      if (!warp_in || k0 >= rows) return;
      if (rows - k0 >= kGroupRows)  // a whole group: a fixed trip count, unrolled
        gemm.multiply(sX, sB, sW, wn, k0, kGroupRows / 16);
      else
        gemm.multiply(sX, sB, sW, wn, k0, (rows - k0) / 16);
    };
    // Before multiply(j): group j has landed for every thread (the wait, then the barrier), and every
    // warp is past multiply(j - 1) (the GEMM's reads of it are complete), so group j - 1 of the next
    // tile may be copied over it (its B rows stay where the next tile has the same).
    multiply(0);
    cp_async_wait<2>();  // this tile's group 1 has landed; its groups 2, 3 may be in flight
    Gemm::landed();
    __syncthreads();
    issue_vectors(next);
    issue(next_rows, 0, copy_B);
    multiply(1);
    cp_async_wait<2>();  // group 2 has landed; group 3 and the next tile's group 0 may be in flight
    Gemm::landed();
    __syncthreads();
    issue(next_rows, 1, copy_B);
    multiply(2);
    cp_async_wait<2>();  // group 3 has landed; the next tile's groups 0, 1 may be in flight
    Gemm::landed();
    __syncthreads();
    issue(next_rows, 2, copy_B);
    multiply(3);
    __syncthreads();  // every warp is past multiply(3)
    load_token(next);
    issue(next_rows, 3, copy_B);

    // The warp's 64 p x 16 n of states[b, c, h] (P x N, n fastest) from this tile's origin.
    if (warp_in)
      gemm.store(p.states, (((at.b * p.chunks + at.c) * H + at.h) * P + at.p0) * N, static_cast<int>(P - at.p0),
                 static_cast<int>(N), wn);
    cur = after;
  }
}

// How a call's tiles are walked and what its kernel copies; the same for both GEMMs.
struct LaunchPlan {
  TileWalk walk;
  unsigned grid;
  bool vectors_by_copy, ids_by_copy;
};

// The wgmma kernel (chunk_state_wgmma.cu, built for sm_90a): launches it and returns true where the
// device is sm_90 and the environment does not set SSD_GPU_WGMMA=0; false otherwise, and the caller
// runs the mma.sync kernel.
bool launch_chunk_state_wgmma(const char* op, const ChunkStateParams& p, const LaunchPlan& plan, cudaStream_t stream);

}  // namespace ssd_gpu::chunk_state_tc
