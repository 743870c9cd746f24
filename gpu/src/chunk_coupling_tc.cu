// SSDChunkCouplingFwd on tensor cores (C and B of one dtype, f16 or bf16: no operand rounding).
// Square tiles (64 or 128 on a side) of each (batch, chunk, group) Q x Q matrix, 8 warps a block,
// mma.sync over all of N (<= 128) from shared memory. A block takes a contiguous run of the
// launch's tiles, in an order in which consecutive tiles share their C tile: one tile per block
// while the grid is resident, and past that a persistent grid of one block per SM whose ring of
// three slots keeps the next two tiles' copies in flight while it computes and stores the current
// one (one block per tile loaded, computed and stored serially, 2 per SM, reached 45% of the DRAM
// floor on the 75 MB grouped workload). A tile's copies come in two groups, N below and above 64,
// so the first half's mma run while the second half lands. The stores leave the mma fragments
// directly, the lanes of a quad exchanging them into 16-byte row vectors: no staging tile, no
// barrier. Zero tail, seq mask and causal skip as in the fp32 kernel. Large grids take 128-wide
// tiles, which read each row of C and B from L2 half as often as 64-wide ones. Small non-causal
// grids with Q > 64 (below the 128-wide threshold) take 64 x 128 tiles instead of 64 x 64 ones,
// one per block (chunk_coupling_wide_kernel, 8 warps of 32 x 32): fewer L2 and shared-memory reads
// per output (measured on the H200: b1 s4096 g1 n128 q256 f16, 4.85 -> 3.79 us). Those blocks take
// a single tile, so they locate it before waiting for the previous grid and copy in four groups.
#include "common.cuh"
#include "mma.cuh"

namespace ssd_gpu {
namespace {

constexpr int kMaxN = 128;         // the fast path takes N <= 128: whole rows in shared memory
constexpr int kLd = kMaxN + 8;     // padded rows: the 8 rows of an ldmatrix hit distinct banks
constexpr int kHalfN = kMaxN / 2;  // the two copy groups and GEMM halves of a tile's N
constexpr int kDepth = 3;          // ring slots: the tile being computed and the next two in flight
constexpr int kGroupsAhead = 2 * (kDepth - 1);  // commit groups issued past the current tile's first

// The warp grid of a kTile x kTile output tile (8 warps of kWM x kWN) and its ring slot.
template <int kTile>
struct CouplingTile {
  static constexpr int kWarpsI = kTile == 64 ? 4 : 2, kWarpsJ = 8 / kWarpsI;
  static constexpr int kWM = kTile / kWarpsI, kWN = kTile / kWarpsJ;
  static constexpr int kOperandBytes = kTile * kLd * 2;
  // A slot holds one C or B tile of 16-bit values and the seq ids of its kTile tokens.
  static constexpr int kSlotBytes = kOperandBytes + kTile * static_cast<int>(sizeof(int32_t));
  // Resident blocks per SM the registers must allow: narrow grids have up to 3 per SM (the
  // launcher's rule), one-tile grids of 128-wide tiles up to 2.
  static constexpr int kMinBlocks = kTile == 64 ? 3 : 2;
  static_assert(kWN == 32, "the stores assemble row vectors from groups of 4 n tiles of 8");
  static_assert(kSlotBytes % 16 == 0, "slots keep the 16-byte alignment of cp.async");
};

// Tiles of one matrix: side x side, or with causal the side (side + 1) / 2 on and below the
// diagonal (a tile wholly above it, all j > i, is undefined upstream and never written).
__host__ __device__ inline int64_t tiles_per_matrix(int64_t side, bool causal) {
  return causal ? side * (side + 1) / 2 : side * side;
}

// A position in the launch's order of tiles: matrix m = (b * chunks + c) * G + g (CB's order), then
// row tile it, then column tile jt; with the ring slots its C and B tiles take. The C slot moves on
// with each row of tiles only: the tiles of a row share their C tile.
struct Cursor {
  int64_t m;
  int b, c, g, it, jt;
  int c_slot = 0, b_slot = 0;
  bool new_row = true;  // the C tile is not the previous tile's (or there is none)

  __device__ Cursor(const CouplingParams& p, int64_t tile, int side) {
    const int64_t per = tiles_per_matrix(side, p.causal);
    m = tile / per;
    int r = static_cast<int>(tile % per);  // below 2^31: the launcher bounds the tile count
    if (p.causal) {
      it = 0;
      for (; r > it; ++it) r -= it + 1;  // row it holds the it + 1 tiles jt <= it
      jt = r;
    } else {
      it = r / side;
      jt = r % side;
    }
    const int64_t bc = m / p.groups;
    g = static_cast<int>(m % p.groups);
    c = static_cast<int>(bc % p.chunks);
    b = static_cast<int>(bc / p.chunks);
  }

  // Non-causal tiles of side_i x side_j per matrix: the wide kernel's tile of its block.
  __device__ Cursor(const CouplingParams& p, int tile, int side_i, int side_j) {
    const int per = side_i * side_j;  // the launcher bounds the tile count below 2^31
    const int mm = tile / per, r = tile - mm * per;
    it = r / side_j;
    jt = r - it * side_j;
    m = mm;
    const int groups = static_cast<int>(p.groups), chunks = static_cast<int>(p.chunks);
    const int bc = mm / groups;
    g = mm - bc * groups;
    b = bc / chunks;
    c = bc - b * chunks;
  }

  __device__ void advance(const CouplingParams& p, int side) {
    b_slot = b_slot == kDepth - 1 ? 0 : b_slot + 1;
    new_row = ++jt > (p.causal ? it : side - 1);
    if (!new_row) return;
    jt = 0;
    c_slot = c_slot == kDepth - 1 ? 0 : c_slot + 1;
    if (++it < side) return;
    it = 0;
    ++m;
    if (++g < p.groups) return;
    g = 0;
    if (++c < p.chunks) return;
    c = 0;
    ++b;
  }
};

// Where a tile lies: first row and column, the chunk's tokens within the sequence, its operand
// rows and its first output entry.
struct TileAt {
  int64_t i0, j0, valid;
  int64_t tokens;  // index in seq_idx of the chunk's first token
  int64_t rows;    // row of C and B ([Bt*S*G] rows of N) of that token in group g
  int64_t out;     // index in CB of entry (i0, j0)
  __device__ bool live() const { return i0 < valid && j0 < valid; }  // else wholly in the zero tail
};

template <int kTile, int kTileJ = kTile>  // kTile x kTileJ tiles (rows of C x rows of B)
__device__ TileAt locate(const CouplingParams& p, const Cursor& at) {
  TileAt t;
  const int64_t t0 = at.c * p.chunk;
  t.i0 = static_cast<int64_t>(at.it) * kTile;
  t.j0 = static_cast<int64_t>(at.jt) * kTileJ;
  t.valid = min(p.chunk, p.seqlen - t0);
  t.tokens = at.b * p.seqlen + t0;
  t.rows = t.tokens * p.groups + at.g;
  t.out = (at.m * p.chunk + t.i0) * p.chunk + t.j0;
  return t;
}

// The slots of ring entry s: its C tile and its B tile, each followed by the seq ids of its tokens.
template <int kTile>
__device__ __forceinline__ char* c_slot(char* ring, int s) {
  return ring + 2 * s * CouplingTile<kTile>::kSlotBytes;
}
template <int kTile>
__device__ __forceinline__ char* b_slot(char* ring, int s) {
  return ring + (2 * s + 1) * CouplingTile<kTile>::kSlotBytes;
}
template <int kTile>
__device__ __forceinline__ int32_t* slot_ids(char* slot) {
  return reinterpret_cast<int32_t*>(slot + CouplingTile<kTile>::kOperandBytes);
}

// Issues tile t's copies into its slots as kParts commit groups of kMaxN / kParts columns of N, the
// first with the seq ids (the square kernel: two, n < 64 and n >= 64), the C tile only with copy_c
// (a new row of tiles). With copy false (a tile past the block's run or in the zero tail) every
// group is empty: every tile commits kParts, which cp_async_wait counts. Tiles are kTile rows of C
// by kTileJ rows of B.
template <class T, int kTile, int kTileJ = kTile, int kParts = 2>
__device__ void issue_copies(const CouplingParams& p, const TileAt& t, bool copy, bool copy_c, char* c_dst,
                             char* b_dst) {
  constexpr int kW = kMaxN / kParts;  // columns of N in a group
  const int n = static_cast<int>(p.dstate);
  const int64_t ld = p.groups * p.dstate;
  T* const sC = reinterpret_cast<T*>(c_dst);
  T* const sB = reinterpret_cast<T*>(b_dst);
  const T* C = nullptr;
  const T* B = nullptr;
  int rows_c = 0, rows_b = 0;
  if (copy) {
    C = static_cast<const T*>(p.C.p) + (t.rows + t.i0 * p.groups) * p.dstate;
    B = static_cast<const T*>(p.B.p) + (t.rows + t.j0 * p.groups) * p.dstate;
    rows_c = static_cast<int>(min(t.valid - t.i0, static_cast<int64_t>(kTile)));  // rows past valid: zeros
    rows_b = static_cast<int>(min(t.valid - t.j0, static_cast<int64_t>(kTileJ)));
    if (copy_c) copy_tile_async<kTile, kW, kThreads>(sC, kLd, C, ld, rows_c, n);
    copy_tile_async<kTileJ, kW, kThreads>(sB, kLd, B, ld, rows_b, n);
    const int tid = static_cast<int>(threadIdx.x);
    if (p.seq_idx != nullptr && tid < kTile + kTileJ) {  // thread r: row id r; thread kTile + r: column id r
      const bool col = tid >= kTile;
      const int r = col ? tid - kTile : tid;
      const int64_t token = (col ? t.j0 : t.i0) + r;
      if (col || copy_c)  // the ids follow the slot's rows: kTile of C, kTileJ of B
        cp_async4(slot_ids<kTile>(col ? b_dst + (kTileJ - kTile) * kLd * 2 : c_dst) + r, p.seq_idx + t.tokens + token,
                  token < t.valid);
    }
  }
  cp_async_commit();
  if constexpr (kParts == 2) {  // written out: the loop below compiles the square kernels differently
    if (copy && n > kW) {
      if (copy_c) copy_tile_async<kTile, kW, kThreads>(sC + kW, kLd, C + kW, ld, rows_c, n - kW);
      copy_tile_async<kTileJ, kW, kThreads>(sB + kW, kLd, B + kW, ld, rows_b, n - kW);
    }
    cp_async_commit();
  } else {
#pragma unroll
    for (int q = 1; q < kParts; ++q) {
      const int n0 = q * kW;
      if (copy && n > n0) {
        if (copy_c) copy_tile_async<kTile, kW, kThreads>(sC + n0, kLd, C + n0, ld, rows_c, n - n0);
        copy_tile_async<kTileJ, kW, kThreads>(sB + n0, kLd, B + n0, ld, rows_b, n - n0);
      }
      cp_async_commit();
    }
  }
}

// A 4 x 4 transpose within a quad: lane tig holds w[k], its two columns (2 tig, 2 tig + 1) of n
// tile k as one 32-bit word; afterwards it holds n tile tig's four words, lane 0's first, i.e. the
// 8 consecutive columns of that tile in one row. Two rounds of exchanges, lanes 2 apart then 1 apart.
__device__ __forceinline__ uint4 quad_transpose(const uint32_t w[4], int tig) {
  const bool hi = (tig & 2) != 0, lo = (tig & 1) != 0;
  // Keep the two n tiles of this lane's half, tig & 2 and tig & 2 + 1; take lane tig ^ 2's words of them.
  const uint32_t k0 = hi ? w[2] : w[0], k1 = hi ? w[3] : w[1];
  const uint32_t r0 = __shfl_xor_sync(kFullMask, hi ? w[0] : w[2], 2);
  const uint32_t r1 = __shfl_xor_sync(kFullMask, hi ? w[1] : w[3], 2);
  // Keep n tile tig (this lane's and lane tig ^ 2's word), take lane tig ^ 1's and tig ^ 3's.
  const uint32_t own = lo ? k1 : k0, own2 = lo ? r1 : r0;
  const uint32_t u1 = __shfl_xor_sync(kFullMask, lo ? k0 : k1, 1);
  const uint32_t u3 = __shfl_xor_sync(kFullMask, lo ? r0 : r1, 1);
  // In lane order: words of lanes tig & 2 + {0, 1}, then of lanes (tig ^ 2) & 2 + {0, 1}.
  const uint32_t a0 = lo ? u1 : own, a1 = lo ? own : u1, b0 = lo ? u3 : own2, b1 = lo ? own2 : u3;
  return hi ? make_uint4(b0, b1, a0, a1) : make_uint4(a0, a1, b0, b1);
}

// The warp's block of tile t into CB, zero past the valid length and between tokens of different
// sequences, rows and columns past Q left out. Each lane stores 16-byte vectors of one row: 8
// consecutive columns (16-bit O) or 4 (f32), assembled from the mma fragments of its quad.
template <class O, class T, int kWM, int kWN>
__device__ __forceinline__ void store_rows(const CouplingParams& p, const TileAt& t, const WarpTile<T, kWM, kWN>& wt,
                                           int wm, int wn) {
  constexpr int kMT = kWM / 16, kNT = kWN / 8;
  const int lane = static_cast<int>(threadIdx.x) & 31, gid = lane / 4, tig = lane % 4;
  const int64_t Q = p.chunk;
  O* const out = static_cast<O*>(p.CB.p) + t.out;
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = wm + mt * 16 + h * 8 + gid;
      const bool row_in = t.i0 + r < Q;  // the exchanges below need every lane: only the stores wait on it
      O* const row = out + r * Q;
      if constexpr (sizeof(O) == 2) {
#pragma unroll
        for (int q = 0; q < kNT / 4; ++q) {
          uint32_t w[4];
#pragma unroll
          for (int k = 0; k < 4; ++k) w[k] = Half16<O>::pack2(wt.acc[mt][4 * q + k][2 * h], wt.acc[mt][4 * q + k][2 * h + 1]);
          const uint4 v = quad_transpose(w, tig);
          const int col = wn + q * 32 + tig * 8;
          if (row_in && t.j0 + col < Q) *reinterpret_cast<uint4*>(row + col) = v;  // Q % 8 == 0: all 8 or none
        }
      } else {
        // n tiles 2q, 2q + 1: even lanes take their odd neighbour's columns of the first, odd lanes
        // their even neighbour's of the second, so each holds 4 consecutive columns of one.
        const bool odd = (tig & 1) != 0;
#pragma unroll
        for (int q = 0; q < kNT / 2; ++q) {
          const float f0 = wt.acc[mt][2 * q][2 * h], f1 = wt.acc[mt][2 * q][2 * h + 1];
          const float s0 = wt.acc[mt][2 * q + 1][2 * h], s1 = wt.acc[mt][2 * q + 1][2 * h + 1];
          const float g0 = __shfl_xor_sync(kFullMask, odd ? f0 : s0, 1);
          const float g1 = __shfl_xor_sync(kFullMask, odd ? f1 : s1, 1);
          const float4 v = odd ? make_float4(g0, g1, s0, s1) : make_float4(f0, f1, g0, g1);
          const int col = wn + (2 * q + (odd ? 1 : 0)) * 8 + 2 * (tig & 2);
          if (row_in && t.j0 + col < Q) *reinterpret_cast<float4*>(row + col) = v;
        }
      }
    }
}

// Tile t's masks on the warp's accumulators, then the stores in CB's dtype.
template <int kTile, int kTileJ = kTile, class T, int kWM, int kWN>  // kTile x kTileJ tiles
__device__ void store_tile(const CouplingParams& p, const TileAt& t, WarpTile<T, kWM, kWN>& wt, int wm, int wn,
                           const int32_t* row_ids, const int32_t* col_ids) {
  constexpr int kMT = kWM / 16, kNT = kWN / 8;
  const int lane = static_cast<int>(threadIdx.x) & 31, gid = lane / 4, tig = lane % 4;
  const bool seq = p.seq_idx != nullptr;
  // A tile wholly inside the valid length without seq_idx keeps every entry; outside it (not live)
  // the accumulators are zero already.
  if (t.live() && (seq || t.i0 + kTile > t.valid || t.j0 + kTileJ > t.valid)) {
    bool col_in[kNT][2];
    int32_t col_id[kNT][2];
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int col = wn + nt * 8 + 2 * tig + e;
        col_in[nt][e] = t.j0 + col < t.valid;
        col_id[nt][e] = seq ? col_ids[col] : 0;
      }
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = wm + mt * 16 + h * 8 + gid;
        const bool row_in = t.i0 + r < t.valid;
        const int32_t row_id = seq ? row_ids[r] : 0;
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
          for (int e = 0; e < 2; ++e)
            if (!(row_in && col_in[nt][e] && row_id == col_id[nt][e])) wt.acc[mt][nt][2 * h + e] = 0.0f;
      }
  }
  switch (p.CB.dtype) {
    case SSD_DTYPE_F16: store_rows<__half>(p, t, wt, wm, wn); break;
    case SSD_DTYPE_BF16: store_rows<__nv_bfloat16>(p, t, wt, wm, wn); break;
    default: store_rows<float>(p, t, wt, wm, wn); break;
  }
}

// In Mamba2Fwd (stage_of_call) CB reads only the call's inputs, so it runs while state_passing
// drains, and waits for it at exit, so that the scan's wait for CB covers the states too.
struct WaitPreviousAtExit {
  __device__ ~WaitPreviousAtExit() { wait_previous_grid(); }
};

// Block k takes tiles [k T / grid, (k + 1) T / grid) of the launch's T tiles. Ring entry s holds a
// C slot and a B slot; a block uses one entry per tile it takes, at most kDepth (the launcher sizes
// shared memory by ring_slots). The copies of tile s + 2 are issued once every warp is past tile
// s - 1, whose slots they take.
template <class T, int kTile>
__global__ void __launch_bounds__(kThreads, CouplingTile<kTile>::kMinBlocks) chunk_coupling_tc_kernel(CouplingParams p) {
  if (p.stage_of_call)
    allow_next_grid();  // the scan's first wave copies its inputs meanwhile
  else
    wait_previous_grid();
  const WaitPreviousAtExit wait_at_exit;
  using Tile = CouplingTile<kTile>;
  extern __shared__ uint4 smem[];
  char* const ring = reinterpret_cast<char*>(smem);
  const int side = static_cast<int>(ceil_div(p.chunk, kTile));
  const int64_t tiles = p.batch * p.chunks * p.groups * tiles_per_matrix(side, p.causal);
  const int64_t begin = static_cast<int64_t>(blockIdx.x) * tiles / gridDim.x;
  const int64_t end = static_cast<int64_t>(blockIdx.x + 1) * tiles / gridDim.x;
  const int nk = static_cast<int>((p.dstate + 15) / 16 * 16);  // K of the GEMM, zero columns past N
  const int ksteps_lo = min(nk, kHalfN) / 16, ksteps_hi = nk / 16 - ksteps_lo;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int wm = (warp / Tile::kWarpsJ) * Tile::kWM, wn = (warp % Tile::kWarpsJ) * Tile::kWN;

  Cursor next(p, begin, side);  // the next tile to copy
  Cursor at = next;             // the tile computed
  auto issue_next = [&](int64_t tile) {
    const TileAt t = locate<kTile>(p, next);
    const bool copy = tile < end && t.live();
    issue_copies<T, kTile>(p, t, copy, next.new_row, c_slot<kTile>(ring, next.c_slot), b_slot<kTile>(ring, next.b_slot));
    next.advance(p, side);
  };
  for (int q = 0; q < kDepth - 1; ++q) issue_next(begin + q);

  for (int64_t tile = begin; tile < end; ++tile) {
    cp_async_wait<kGroupsAhead - 1>();  // this thread's copies of the tile's first half have landed
    __syncthreads();                     // everyone's; and every warp is done with tile - 1's slots
    issue_next(tile + kDepth - 1);
    const TileAt t = locate<kTile>(p, at);
    char* const cs = c_slot<kTile>(ring, at.c_slot);
    char* const bs = b_slot<kTile>(ring, at.b_slot);
    const T* const sC = reinterpret_cast<const T*>(cs);  // [i][n]
    const T* const sB = reinterpret_cast<const T*>(bs);  // [j][n]
    WarpTile<T, Tile::kWM, Tile::kWN> wt;
    wt.zero();
    if (t.live()) {
      wt.template run<true, true>(sC, kLd, sB, kLd, wm, wn, 0, ksteps_lo);
      if (ksteps_hi > 0) {
        cp_async_wait<kGroupsAhead>();  // the second half (the groups of the next two tiles may pend)
        __syncthreads();
        wt.template run<true, true>(sC, kLd, sB, kLd, wm, wn, kHalfN, ksteps_hi);
      }
    }
    store_tile<kTile>(p, t, wt, wm, wn, slot_ids<kTile>(cs), slot_ids<kTile>(bs));
    at.advance(p, side);
  }
}

// A wide tile: kWideI rows of C by kWideJ rows of B, 8 warps of 32 x 32 (2 x 4); its C slot, then its B slot.
constexpr int kWideI = 64, kWideJ = 128, kWideWarpsJ = 4, kWideWM = 32, kWideWN = 32;
constexpr int kWideSmem = CouplingTile<kWideI>::kSlotBytes + CouplingTile<kWideJ>::kSlotBytes;
constexpr int kWideParts = 4, kWideW = kMaxN / kWideParts;  // copy groups and GEMM parts of 32 columns of N
static_assert(kWideParts <= 4, "cp_async_wait_upto waits for at most 3 pending groups");

// cp.async.wait_group with a count that the caller's unrolled loop makes a constant.
__device__ __forceinline__ void cp_async_wait_upto(int pending) {
  switch (pending) {
    case 0: cp_async_wait<0>(); break;
    case 1: cp_async_wait<1>(); break;
    case 2: cp_async_wait<2>(); break;
    default: cp_async_wait<3>(); break;  // the most: kWideParts - 1
  }
}

// One 64 x 128 tile per block (the launcher's grid is resident): against two 64 x 64 tiles it reads
// the C tile from L2 once, and its 32 x 32 warp tiles load 4 fragments per 8 mma instead of 3 per 4.
// The block locates its tile (a chain of integer divisions) before it waits for the previous grid;
// its copies come in kWideParts groups of 32 columns, each part's mma starting once it has landed
// (nothing else hides the copies' latency in a one-tile block); the stores as the square kernel's.
template <class T>
__global__ void __launch_bounds__(kThreads, 2) chunk_coupling_wide_kernel(CouplingParams p) {
  // Mamba2Fwd's CB is causal and never takes this kernel; the launch-overlap steps are those of the
  // square kernel, kept so that the kernel is right for any caller.
  if (p.stage_of_call) allow_next_grid();
  const WaitPreviousAtExit wait_at_exit;
  extern __shared__ uint4 smem[];
  char* const cs = reinterpret_cast<char*>(smem);
  char* const bs = cs + CouplingTile<kWideI>::kSlotBytes;
  const int side_i = static_cast<int>(ceil_div(p.chunk, kWideI)), side_j = static_cast<int>(ceil_div(p.chunk, kWideJ));
  const Cursor at(p, static_cast<int>(blockIdx.x), side_i, side_j);
  const TileAt t = locate<kWideI, kWideJ>(p, at);
  const int nk = static_cast<int>((p.dstate + 15) / 16 * 16);  // K of the GEMM, zero columns past N
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int wm = (warp / kWideWarpsJ) * kWideWM, wn = (warp % kWideWarpsJ) * kWideWN;
  if (!p.stage_of_call) wait_previous_grid();
  issue_copies<T, kWideI, kWideJ, kWideParts>(p, t, t.live(), true, cs, bs);
  const T* const sC = reinterpret_cast<const T*>(cs);  // [i][n]
  const T* const sB = reinterpret_cast<const T*>(bs);  // [j][n]
  WarpTile<T, kWideWM, kWideWN> wt;
  wt.zero();
  if (t.live()) {
#pragma unroll
    for (int q = 0; q < kWideParts; ++q) {
      const int steps = min(nk - q * kWideW, kWideW) / 16;  // none past N: nor copies (nk % 16 == 0)
      if (steps <= 0) break;
      cp_async_wait_upto(kWideParts - 1 - q);  // part q landed (with part 0 the seq ids), later ones may pend
      __syncthreads();
      wt.template run<true, true>(sC, kLd, sB, kLd, wm, wn, q * kWideW, steps);
    }
  }
  store_tile<kWideI, kWideJ>(p, t, wt, wm, wn, slot_ids<kWideI>(cs), slot_ids<kWideJ>(bs));
}

// Ring entries a block of a `grid`-block launch over `tiles` tiles uses: its most tiles, at most kDepth.
int ring_slots(int64_t tiles, int64_t grid) {
  const int64_t most = ceil_div(tiles, grid);
  return static_cast<int>(most < kDepth ? most : kDepth);
}

template <class T, int kTile>
void launch_tiles(const char* op, const CouplingParams& p, int64_t tiles, int64_t grid, cudaStream_t stream) {
  const auto kernel = chunk_coupling_tc_kernel<T, kTile>;
  const size_t smem = 2 * static_cast<size_t>(ring_slots(tiles, grid)) * CouplingTile<kTile>::kSlotBytes;
  cuda_check(op, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
             "cudaFuncSetAttribute(chunk_coupling_tc_kernel)");
  launch_kernel(op, "launch of chunk_coupling_tc_kernel", kernel, static_cast<unsigned>(grid), kThreads, smem, stream, p);
  check_launch(op, "chunk_coupling_tc_kernel");
}

template <class T>
void launch_wide(const char* op, const CouplingParams& p, int64_t tiles, cudaStream_t stream) {
  const auto kernel = chunk_coupling_wide_kernel<T>;
  cuda_check(op, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kWideSmem),
             "cudaFuncSetAttribute(chunk_coupling_wide_kernel)");
  launch_kernel(op, "launch of chunk_coupling_wide_kernel", kernel, static_cast<unsigned>(tiles), kThreads,
                static_cast<size_t>(kWideSmem), stream, p);
  check_launch(op, "chunk_coupling_wide_kernel");
}

}  // namespace

bool launch_chunk_coupling_fast(const char* op, const CouplingParams& p, cudaStream_t stream) {
  const int32_t dt = p.C.dtype;
  if (p.B.dtype != dt || (dt != SSD_DTYPE_F16 && dt != SSD_DTYPE_BF16)) return false;
  if (p.dstate % 8 != 0 || p.dstate > kMaxN || p.chunk % 8 != 0) return false;
  if (!aligned16(p.C.p) || !aligned16(p.B.p) || !aligned16(p.CB.p)) return false;
  const int64_t matrices = p.batch * p.chunks * p.groups;
  const int64_t side128 = ceil_div(p.chunk, 128), side64 = ceil_div(p.chunk, 64);
  if (matrices * side64 * side64 > 0x7fffffff) return false;
  if (matrices == 0) return false;  // nothing to compute: the fp32 launcher's grid of one block does nothing
  const int64_t sms = multiprocessors(op);
  // 128-wide tiles once they cover three quarters of the SMs (measured on the H200: b4 s2048 g1,
  // 128 tiles on 132 SMs, 7.5 -> 6.9 us); below that 64-wide ones keep the grid wide (b1 s4096 g1:
  // 64 tiles of 128 took 6.3 us against 5.4 for 256 of 64). Then a 64-wide grid has fewer than 3
  // tiles per SM (side64 <= 2 side128): one tile per block, all resident.
  const bool wide = 4 * matrices * side128 * side128 >= 3 * sms;
  const bool f16 = dt == SSD_DTYPE_F16;
  // Non-causal grids past 64 a side take 64 x 128 tiles, a block each, where 128-wide tiles would
  // fill at most one wave: below the rule above (under 3/4 of the SMs) and just past it (b4 s2048 g1:
  // 128 tiles of 128 on 132 SMs, each block one round trip, become 256 of 64 x 128). side64 * side128
  // <= 2 side128^2 per matrix: at most 2 per SM, all resident at 2 per SM.
  const bool one_wave_of_128 = matrices * side128 * side128 <= sms;
  if (one_wave_of_128 && !p.causal && p.chunk > 64) {
    const int64_t wide_tiles = matrices * side64 * side128;
    f16 ? launch_wide<__half>(op, p, wide_tiles, stream) : launch_wide<__nv_bfloat16>(op, p, wide_tiles, stream);
    return true;
  }
  const int64_t tiles = matrices * tiles_per_matrix(wide ? side128 : side64, p.causal);
  // One tile per block while 2 blocks per SM hold them all (the 128-wide kernel's registers allow
  // 2); beyond that one persistent block per SM with the full ring (212 KB of shared memory).
  const int64_t grid = !wide || tiles <= 2 * sms ? tiles : sms;
  if (wide)
    f16 ? launch_tiles<__half, 128>(op, p, tiles, grid, stream)
        : launch_tiles<__nv_bfloat16, 128>(op, p, tiles, grid, stream);
  else
    f16 ? launch_tiles<__half, 64>(op, p, tiles, grid, stream)
        : launch_tiles<__nv_bfloat16, 64>(op, p, tiles, grid, stream);
  return true;
}

}  // namespace ssd_gpu
