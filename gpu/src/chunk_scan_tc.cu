// SSDChunkScanFwd on tensor cores (x and C both f16 or both bf16), in the shape of flash attention:
// one block per (batch, chunk, head, 64 head-dim p) and the whole chunk of tokens i, 8 warps.
//   carried-in term: C [i][n] times the entering state prev [p][n] (rounded to C's dtype in shared
//   memory), scaled per row by exp(dA[i]) (0 where seq_idx cuts the carry);
//   causal term: per 16 tokens k, the coefficients round_x(cb[i,k] exp(min(dA[i]-dA[k],0)) dt[k])
//   are built in registers in the accumulator layout, which is the A-fragment layout of the next
//   mma.sync, and multiplied by x [k][p]. The fragments take the block's 16 tokens in an order in
//   which a lane's four are consecutive (x's rows are read in the same order), so a lane's cb
//   values of a block are one 16- or 8-byte load per row.
// Work is balanced and warps never wait for each other: a warp owns two 16-row blocks, w and
// 15 - w (one of them in a split tile, below), whose causal lengths add up to the same 17 blocks of 16 tokens for every warp (Q = 256;
// a 128-row tile of 8 warps had its last warp do 16 blocks and its first one 9, and a block
// barrier per step made every warp wait for the longest). The chunk's whole x tile is copied once
// at the start in four groups of 64 tokens, each with an mbarrier that the cp.asyncs of every
// thread arrive on, so a warp waits only for the group it is about to read; cb rows belong to one
// warp, so they are read straight into registers, one 16-token block ahead. C rows are per warp too (its own region,
// which then holds the warp's fp32 output rows for 16-byte stores).
// cb is read in x's dtype or in f32 (Mamba2Fwd's, computed once per (chunk, group) by
// SSDChunkCouplingFwd and shared by every head of the group from L2).
// A last wave at most half full (tiles % slots of kBlocksPerSm per SM, after whole waves) would run
// its blocks alone on their SMs, each warp's pair of row blocks one after the other: there each
// tile is split over two blocks in which every warp takes one row block (the pairs of warps 0-3,
// then of 4-7), so the tile takes the time of its longest row block instead of a pair, and the
// SMs left idle fill. Each row block is computed as in a whole block: same outputs, bit for bit.
// In Mamba2Fwd the blocks below early_blocks (the first wave, scheduled while the stages before
// drain) copy x and C, the call's inputs, before they wait for those stages, and read dA, dt and
// the entering states, their outputs, after; the later blocks find them finished and take the
// order of a standalone call.
#include <type_traits>

#include "chunk_scan_split.h"
#include "chunk_scan_tile.cuh"
#include "chunk_scan_wgmma.h"
#include "common.cuh"
#include "mma.cuh"

namespace ssd_gpu {
namespace {

using chunk_scan_tile::kBlockThreads;
using chunk_scan_tile::kBN;
using chunk_scan_tile::kLdN;
using chunk_scan_tile::kLdO;
using chunk_scan_tile::kMaxN;
using chunk_scan_tile::kMaxQ;
using chunk_scan_tile::kPrevPasses;
using chunk_scan_tile::kPrevRowStep;
using chunk_scan_tile::kPrevVecs;
using chunk_scan_tile::kWarps;

constexpr int kBlocksPerSm = 2;
constexpr int kGroup = 64;     // tokens k per x copy group
constexpr int kGroups = kMaxQ / kGroup;
constexpr int kLdX = kBN + 8;  // rows of 64 p (x)

// Shared memory, in bytes: x [kMaxQ][kLdX] and prev [kBN][kLdN] of T, the warps' regions (16 C
// rows [16][kLdN] of T, later 16 fp32 output rows [16][kLdO]), dA, dt and the row scales [kMaxQ]
// in f32, one mbarrier per x group.
template <class T>
struct Layout {
  static constexpr size_t kX = 0;
  static constexpr size_t kPrev = kX + sizeof(T) * kMaxQ * kLdX;
  static constexpr size_t kRegionBytes = sizeof(T) * 16 * kLdN;
  static constexpr size_t kRegions = kPrev + sizeof(T) * kBN * kLdN;
  static constexpr size_t kVectors = kRegions + kWarps * kRegionBytes;
  static constexpr size_t kBars = kVectors + 3 * sizeof(float) * kMaxQ;
  static constexpr size_t kBytes = kBars + sizeof(uint64_t) * kGroups;
  static_assert(16 * kLdO * sizeof(float) <= kRegionBytes, "a warp's output rows fit in its region");
  static_assert(kRegions % 16 == 0 && kVectors % 16 == 0 && kBars % 8 == 0, "aligned areas");
};

// cb of one 16-token block for this thread: rows lo and hi, tokens 4 tig .. 4 tig + 3 (one 16- or
// 8-byte load per row; the k order of the mma fragments below).
struct CbQuad {
  float lo[4], hi[4];
};

template <class T, bool kCbF32>
__global__ void __launch_bounds__(kBlockThreads, kBlocksPerSm)
    chunk_scan_tc_kernel(ChunkScanParams p, unsigned early_blocks, unsigned split_from, unsigned split_tiles) {
  using L = Layout<T>;
  extern __shared__ uint4 smem[];
  unsigned char* const bytes = reinterpret_cast<unsigned char*>(smem);
  T* const sX = reinterpret_cast<T*>(bytes + L::kX);
  T* const sPrev = reinterpret_cast<T*>(bytes + L::kPrev);
  float* const sDA = reinterpret_cast<float*>(bytes + L::kVectors);  // [Q] dA of the chunk
  float* const sDt = sDA + kMaxQ;                                    // [Q] dt of the chunk
  float* const sRowScale = sDt + kMaxQ;                              // [Q]
  uint64_t* const bars = reinterpret_cast<uint64_t*>(bytes + L::kBars);

  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid & 31, gid = lane / 4, tig = lane % 4;
  T* const sRegion = reinterpret_cast<T*>(bytes + L::kRegions + warp * L::kRegionBytes);
  const chunk_scan_tile::Tile t(p, split_from, split_tiles);
  const chunk_scan_split::BlockTile place = t.place;
  const int64_t Q = t.Q, H = t.H, P = t.P, G = t.G, N = t.N, S = t.S;
  const int64_t p0 = t.p0, h = t.h, c = t.c, b = t.b, t0 = t.t0, g = t.g, vec = t.vec;
  const int valid = t.valid, nk = t.nk, n_in = t.n_in, rows_p = t.rows_p;
  const T* x = static_cast<const T*>(t.x);

  // A warp's 16-row blocks (w and 15 - w of a whole tile, one of them in half a tile) and the
  // block's last one, past which no x row is read (chunk_scan_split.h).
  const int row_blocks = (valid + 15) / 16;
  const chunk_scan_split::WarpRows own = chunk_scan_split::warp_row_blocks(warp, row_blocks, place.split, place.half);
  const int x_rows_read = min(valid, 16 * (chunk_scan_split::last_row_block(row_blocks, place.split, place.half) + 1));

  const bool early = blockIdx.x < early_blocks;
  if (!early) wait_previous_grid();
  // Loads whose latency the copies hide: issued first (the mbarrier arrivals below are compiler
  // memory barriers, so they would otherwise wait behind the whole x tile). Thread t holds token t
  // of the chunk vectors and 4 vectors of 8 of the f32 entering states (zeros past P and N). An
  // early block copies x and C first, then waits, then loads these.
  const int k_own = tid;
  const bool k_in = k_own < valid;
  float dA_own = 0.0f, dt_own = 0.0f;
  int32_t id_own = 0, id_before = 0;
  if (k_in && p.seq_idx != nullptr) {
    const int32_t* row = p.seq_idx + b * S;
    id_own = row[t0 + k_own];
    id_before = c >= 1 ? row[t0 - 1] : 0;
  }
  const bool prev_f32 = p.states.dtype == SSD_DTYPE_F32;
  const int64_t prev_row0 = ((b * p.chunks + c) * H + h) * P + p0;
  const int prev_col = (tid % kPrevVecs) * 8, prev_row = tid / kPrevVecs;
  float4 prev_v[kPrevPasses][2];
  const auto load_stage_outputs = [&] {
    if (k_in) {
      dA_own = load(p.dA, vec + k_own);
      dt_own = load(p.dt, vec + k_own);
    }
    if (prev_f32)
      chunk_scan_tile::load_entering_f32(prev_v, static_cast<const float*>(p.states.p), prev_row0, prev_row, prev_col,
                                         rows_p, n_in, N);
  };
  const auto copy_prev_16 = [&] {
    if (!prev_f32) {
      const T* prev = static_cast<const T*>(p.states.p);
      copy_tile_async<kBN, kMaxN, kBlockThreads>(sPrev, kLdN, prev + prev_row0 * N, N, rows_p, n_in);
    }
  };
  if (!early) load_stage_outputs();

  if (tid == 0) {
#pragma unroll
    for (int j = 0; j < kGroups; ++j) mbar_init(&bars[j], kBlockThreads);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  // Copy groups of every thread: (1) its warp's C rows of the first row block, (2) the 16-bit
  // entering states, (3..6) x in groups of 64 tokens, zeros past the valid length, each group also
  // arriving on its mbarrier. Empty groups are committed too, so the wait counts are fixed.
  t.copy_c_rows(sRegion, own.first, lane);
  if (!early) copy_prev_16();
  cp_async_commit();
  const int x_groups = (x_rows_read + kGroup - 1) / kGroup;
#pragma unroll
  for (int j = 0; j < kGroups; ++j) {
    if (j < x_groups)
      copy_tile_async<kGroup, kBN, kBlockThreads>(sX + j * kGroup * kLdX, kLdX,
                                                  x + ((b * S + t0 + j * kGroup) * H + h) * P + p0, H * P,
                                                  valid - j * kGroup, rows_p);
    mbar_arrive_on_copies(&bars[j]);
    cp_async_commit();
  }
  if (early) {
    wait_previous_grid();
    load_stage_outputs();
    copy_prev_16();
    cp_async_commit();
  }

  // Chunk vectors and row scales; zeros past the valid length up to whole 16-token blocks (the
  // coefficient loop reads them before masking).
  const int row_blocks_padded = row_blocks * 16;
  if (k_own < row_blocks_padded) {
    // cb is taken as given: the causal term is not masked.
    const float scale = chunk_scan_tile::carried_in_scale(k_in, id_own, id_before, dA_own);
    sDA[k_own] = dA_own;
    sDt[k_own] = dt_own;
    sRowScale[k_own] = scale;
  }
  if (prev_f32) {  // rounded to C's dtype
#pragma unroll
    for (int i = 0; i < kPrevPasses; ++i)
      *reinterpret_cast<uint4*>(sPrev + (prev_row + i * kPrevRowStep) * kLdN + prev_col) =
          chunk_scan_tile::round_entering<T>(prev_v[i]);
  }
  // This thread's C rows and prev copies (in an early block the prev copies came last), then every
  // thread's, and the vectors.
  if (early)
    cp_async_wait<0>();
  else
    cp_async_wait<kGroups>();
  __syncthreads();

  const chunk_scan_tile::OutputRows<T> rows(p, t);
  const int64_t cb_base = ((b * p.chunks + c) * G + g) * Q;
  const float* cb_f32 = static_cast<const float*>(p.cb.p);
  const T* cb_16 = static_cast<const T*>(p.cb.p);
  float* const sOut = reinterpret_cast<float*>(sRegion);  // [16][kLdO]

#pragma unroll 1
  for (int phase = 0; phase < 2; ++phase) {
    const int rb = phase == 0 ? own.first : own.second;
    if (rb < 0 || rb * 16 >= valid) break;
    if (phase == 1) {
      t.copy_c_rows(sRegion, rb, lane);
      cp_async_wait<0>();
      __syncwarp();
    }
    const int first_i = rb * 16;

    // This thread's cb rows (a row past the valid length reads the block's first row instead: its
    // outputs are never stored, and an mma row depends on its own row of A alone), and the first
    // block's values, in flight during the carried-in term.
    const int i_lo = first_i + gid, i_hi = i_lo + 8;
    const int64_t row_lo = cb_base + (i_lo < valid ? i_lo : first_i), row_hi = cb_base + (i_hi < valid ? i_hi : first_i);
    const auto load_cb = [&](int kb, bool diagonal) {
      CbQuad v;
      const int k = kb * 16 + 4 * tig;
#pragma unroll
      for (int e = 0; e < 4; ++e) v.lo[e] = v.hi[e] = 0.0f;
      if (!diagonal || k < valid) {  // k % 4 == 0 and Q % 8 == 0: k + 3 < Q
        if constexpr (kCbF32) {
          const float4 lo = __ldg(reinterpret_cast<const float4*>(cb_f32 + row_lo * Q + k));
          const float4 hi = __ldg(reinterpret_cast<const float4*>(cb_f32 + row_hi * Q + k));
          v.lo[0] = lo.x, v.lo[1] = lo.y, v.lo[2] = lo.z, v.lo[3] = lo.w;
          v.hi[0] = hi.x, v.hi[1] = hi.y, v.hi[2] = hi.z, v.hi[3] = hi.w;
        } else {
          const uint2 lo = __ldg(reinterpret_cast<const uint2*>(cb_16 + row_lo * Q + k));
          const uint2 hi = __ldg(reinterpret_cast<const uint2*>(cb_16 + row_hi * Q + k));
          const float2 l0 = Half16<T>::unpack2(lo.x), l1 = Half16<T>::unpack2(lo.y);
          const float2 h0 = Half16<T>::unpack2(hi.x), h1 = Half16<T>::unpack2(hi.y);
          v.lo[0] = l0.x, v.lo[1] = l0.y, v.lo[2] = l1.x, v.lo[3] = l1.y;
          v.hi[0] = h0.x, v.hi[1] = h0.y, v.hi[2] = h1.x, v.hi[3] = h1.y;
        }
      }
      return v;
    };
    auto cur = load_cb(0, rb == 0);

    // Carried-in term.
    WarpTile<T, 16, kBN> acc;
    acc.zero();
    acc.template run<true, true>(sRegion, kLdN, sPrev, kLdN, 0, 0, 0, nk / 16);
    acc.scale_rows(sRowScale[i_lo], sRowScale[i_hi]);

    // Causal blocks 0 .. rb; only the last, the diagonal one, needs the mask k <= i.
    const float dA_lo = sDA[i_lo], dA_hi = sDA[i_hi];
    // Walked 16 tokens per block; this lane's four tokens of a block are 2 tig further on (4 tig).
    const float* dA_k = sDA + 2 * tig;
    const float* dt_k = sDt + 2 * tig;
    // The k order of the fragments: the mma's k 2 t + e (t < 4, e < 2) is token 4 t + e of the block
    // and its k 8 + 2 t + e is token 4 t + 2 + e, so that a lane's four tokens are consecutive (one
    // cb load per row, one float4 of dA and dt). x's rows are read in that order: the lane that
    // names row r of ldmatrix.trans's matrix idx (WarpTile::lane_rows_kn) names the token it is.
    const T* x_rows;
    {
      const int idx = lane >> 3, r = lane & 7;
      x_rows = sX + (4 * (r >> 1) + (r & 1) + 2 * (idx & 1)) * kLdX + (idx >> 1) * 8;
    }
    auto block = [&](const CbQuad& cb, auto masked) {
      const float4 dAk = *reinterpret_cast<const float4*>(dA_k + 2 * tig);
      const float4 dtk = *reinterpret_cast<const float4*>(dt_k + 2 * tig);
      const float dAv[4] = {dAk.x, dAk.y, dAk.z, dAk.w}, dtv[4] = {dtk.x, dtk.y, dtk.z, dtk.w};
      float lo[4], hi[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        lo[e] = cb.lo[e] * within_chunk_decay_exp2(dA_lo, dAv[e]) * dtv[e];
        hi[e] = cb.hi[e] * within_chunk_decay_exp2(dA_hi, dAv[e]) * dtv[e];
        if constexpr (decltype(masked)::value) {
          // Within the block: rows gid and gid + 8, token 4 tig + e.
          if (4 * tig + e > gid) lo[e] = 0.0f;
          if (4 * tig + e > gid + 8) hi[e] = 0.0f;
        }
      }
      // Fragment registers: logical k 2 tig + {0,1} (tokens 4 tig + {0,1}), then 8 + 2 tig + {0,1}.
      const uint32_t a[4] = {Half16<T>::pack2(lo[0], lo[1]), Half16<T>::pack2(hi[0], hi[1]),
                             Half16<T>::pack2(lo[2], lo[3]), Half16<T>::pack2(hi[2], hi[3])};
      acc.step_a_regs_at(a, x_rows);
      dA_k += 16, dt_k += 16, x_rows += 16 * kLdX;
    };
#pragma unroll 1
    for (int kb = 0; kb < rb; ++kb) {
      if (kb % (kGroup / 16) == 0) mbar_wait_first_phase(&bars[kb / (kGroup / 16)]);
      const auto next = load_cb(kb + 1, kb + 1 == rb);
      block(cur, std::false_type{});
      cur = next;
    }
    if (rb % (kGroup / 16) == 0) mbar_wait_first_phase(&bars[rb / (kGroup / 16)]);
    block(cur, std::true_type{});

    // Epilogue through the warp's region (its C rows are dead): the accumulators go to fp32 rows,
    // then each lane finishes 8 consecutive p of a row (skip term, out_x before the gate, gate)
    // and stores them with one 16-byte store.
    __syncwarp();
    acc.store_f32(sOut, kLdO, 0, 0);
    __syncwarp();
    rows.store(p, sOut, first_i, lane);
    __syncwarp();  // the region's reads are done before the next phase copies C rows into it
  }
  // No copy, and no arrival on an mbarrier, outlives the block.
  cp_async_wait<0>();
#pragma unroll
  for (int j = 0; j < kGroups; ++j) mbar_wait_first_phase(&bars[j]);
}

}  // namespace

// x, C and cb of one 16-bit dtype, or cb in f32; the kernel is launched when the conditions hold.
bool launch_chunk_scan_fast(const char* op, const ChunkScanParams& p, cudaStream_t stream) {
  const int32_t dt = p.x.dtype;
  if (p.C.dtype != dt || (dt != SSD_DTYPE_F16 && dt != SSD_DTYPE_BF16)) return false;
  const bool cb_f32 = p.cb.dtype == SSD_DTYPE_F32;
  if (!cb_f32 && p.cb.dtype != dt) return false;
  if (p.states.dtype != SSD_DTYPE_F32 && p.states.dtype != dt) return false;
  if (p.headdim % 8 != 0 || p.dstate % 8 != 0 || p.chunk % 8 != 0) return false;
  if (p.dstate > kMaxN || p.chunk > kMaxQ) return false;
  for (const void* q : {p.x.p, p.C.p, p.states.p, static_cast<const void*>(p.out.p), p.cb.p})
    if (!aligned16(q)) return false;
  if (p.out_x.p != nullptr && !aligned16(p.out_x.p)) return false;
  if (p.z.p != nullptr && !aligned16(p.z.p)) return false;
  if (p.out.dtype != dt || (p.out_x.p != nullptr && p.out_x.dtype != dt)) return false;
  const int64_t tiles = p.batch * p.chunks * p.heads * ceil_div(p.headdim, kBN);
  if (tiles > 0x7fffffff) return false;
  if (launch_chunk_scan_wgmma(op, p, tiles, stream)) return true;
  const bool f16 = dt == SSD_DTYPE_F16;
  const auto kernel = cb_f32 ? (f16 ? chunk_scan_tc_kernel<__half, true> : chunk_scan_tc_kernel<__nv_bfloat16, true>)
                             : (f16 ? chunk_scan_tc_kernel<__half, false> : chunk_scan_tc_kernel<__nv_bfloat16, false>);
  const size_t smem = f16 ? Layout<__half>::kBytes : Layout<__nv_bfloat16>::kBytes;
  cuda_check(op, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
             "cudaFuncSetAttribute(chunk_scan_tc_kernel)");
  const int64_t slots = kBlocksPerSm * multiprocessors(op);
  const unsigned early_blocks = p.stage_of_call ? static_cast<unsigned>(slots) : 0;
  const chunk_scan_split::Split split = chunk_scan_split::plan_split(tiles, slots);
  launch_kernel(op, "launch of chunk_scan_tc_kernel", kernel, static_cast<unsigned>(split.from + 2 * split.tiles),
                kBlockThreads, smem, stream, p, early_blocks, static_cast<unsigned>(split.from),
                static_cast<unsigned>(split.tiles));
  check_launch(op, "chunk_scan_tc_kernel");
  return true;
}

}  // namespace ssd_gpu
