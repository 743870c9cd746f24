// SSDChunkScanFwd on Hopper's warpgroup MMA, compiled for sm_90a alone: chunk_scan_tc.cu's kernel
// (same tiles, inputs, coefficients, carried-in term and epilogue) with both terms on wgmma
// m64n64k16. A warpgroup owns a 64-row slab of the chunk (16 rows per warp) and its four
// warps share each 16-token step: each builds its rows' coefficients in registers (the A operand, in
// mma.sync's fragment layout) and the tensor cores read x straight from a 128-byte-swizzled tile, so
// no warp loads x fragments (ldmatrix) or issues eight mma.sync per step, and a step's tensor work
// runs while the warps build the next step's coefficients. x's rows are stored in the fragments' k
// order (chunk_scan_slabs.h) so a lane's cb values stay one load per row.
// Slabs are balanced as the row blocks of chunk_scan_tc.cu are: warpgroup 0 takes slabs 0 and 3,
// warpgroup 1 slabs 1 and 2 (5 groups of 64 tokens each). A warp's 16 rows are an early and a late
// group of 8 (warp_rows: 0-7 with 32-39, ..., 24-31 with 56-63). In a slab's last group (its
// diagonal) a row group's steps past its own are zeros, not computed, and its own step is masked
// k <= i, so each warp builds about the same share of the diagonal; every warp of the warpgroup still
// takes part in each wgmma. The carried-in term C prev runs on wgmma too, before the causal steps
// and onto the same accumulators: each warp's 16 C rows are the A fragments (ldmatrix from its
// region), and prev is stored as the K-major B operand (rows p, 128-byte-swizzled atoms of 64 n), so
// the tensor cores read it once per step where each warp's mma.sync read all of it again.
// Factored decay: where the chunk's dA is finite, at most 0 and non-increasing (every real
// dA_cumsum: A <= 0, dt' >= 0; one block-wide vote), the decay of a token k before the slab's first
// row i0 splits there: exp(dA[i]-dA[k]) = exp(dA[i]-dA[i0]) exp(dA[i0]-dA[k]), both factors at most 1.
// The groups before the diagonal then take the coefficients round_x(cb[i,k] u[k]) with the column
// factor u[k] = exp(dA[i0]-dA[k]) dt[k] computed once per slab into shared memory (a multiply per
// coefficient instead of an exponential), the carried-in term is scaled by exp(dA[i0]), and the row
// factor exp(dA[i]-dA[i0]) scales the accumulators once before the diagonal group, which keeps the
// exact form. Each coefficient is rounded once as before, so its error is the same fraction of its
// term; only f16 can overflow where the exact coefficient does not (u[k] is up to exp(dA[i0]-dA[i])
// larger), and a slab whose factored coefficients left f16's range is computed again, exact.
#include <cfloat>
#include <type_traits>

#include "chunk_scan_slabs.h"
#include "chunk_scan_split.h"
#include "chunk_scan_tile.cuh"
#include "chunk_scan_wgmma.h"
#include "common.cuh"
#include "mma.cuh"
#include "wgmma.cuh"

// Candidate for an A/B (docs/performance.md): 1 tests the factored f16 coefficients' range on their
// packed fragments (a half2 max per two coefficients, after the rounding) instead of on the fp32
// values (an fp32 max per coefficient, before it); 0 keeps the fp32 test.
#ifndef SCAN_F16_RANGE_PACKED
#define SCAN_F16_RANGE_PACKED 0
#endif
// Candidate for an A/B: 1 computes the wgmma descriptors of x and prev once per group and steps
// them by constants (wgmma_layout.h sw128_descriptor_plus); 0 takes each step's from its address.
#ifndef SCAN_DESCRIPTOR_STEPS
#define SCAN_DESCRIPTOR_STEPS 0
#endif
// Candidate for an A/B: 1 loads a step's cb values at constant offsets from the group's first
// (two row pointers per group), bounded by the valid length only where the step can be the
// diagonal group's; 0 computes each load's index and tests both at run time.
#ifndef SCAN_CB_STEPS
#define SCAN_CB_STEPS 0
#endif
// Candidate for an A/B: 1 computes the diagonal group of a factored slab by the hardware's 2^x alone,
// and factors a slab only where its diagonal group's decays stay at least 2^-125 (then the values
// are exp2f's, without its fix-up for results below fp32's normal range, and without the clamp at
// 0, which the monotone dA of a factored slab never needs); 0 takes exp2f's every time.
#ifndef SCAN_DIAGONAL_NORMAL_EXP
#define SCAN_DIAGONAL_NORMAL_EXP 0
#endif

namespace ssd_gpu {
namespace {

// 2^x by the hardware's approximation alone, subnormal results flushed to 0: exp2f's value wherever
// x >= -126, since exp2f (ex2.approx.f32) adds its range fix-up only for results below 2^-126.
__device__ __forceinline__ float exp2_normal(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// A packed pair of f16 values as __half2.
__device__ __forceinline__ __half2 as_half2(uint32_t bits) {
  __half2 h;
  static_assert(sizeof(h) == sizeof(bits), "two f16 values in 32 bits");
  memcpy(&h, &bits, sizeof(h));
  return h;
}

using chunk_scan_slabs::k_row_of_token;
using chunk_scan_slabs::kLateOffset;
using chunk_scan_slabs::kSlabRows;

using chunk_scan_tile::kBlockThreads;
using chunk_scan_tile::kBN;  // head-dim p per block: one 128-byte swizzled row of x
using chunk_scan_tile::kLdN;
using chunk_scan_tile::kLdO;
using chunk_scan_tile::kMaxN;
using chunk_scan_tile::kMaxQ;
using chunk_scan_tile::kPrevPasses;
using chunk_scan_tile::kPrevRowStep;
using chunk_scan_tile::kPrevVecs;
using chunk_scan_tile::kWarps;

constexpr int kBlocksPerSm = 2;
constexpr int kSlabs = kMaxQ / kSlabRows;
constexpr int kStepsPerSlab = kSlabRows / 16;
static_assert(kStepsPerSlab == chunk_scan_slabs::kStepsPerGroup && chunk_scan_slabs::kLog2eF == kLog2e,
              "the host-tested step logic counts the kernel's steps and uses its log2 e");
constexpr size_t kAlign = 1024;  // the swizzle pattern's period
static_assert(kMaxQ == kBlockThreads, "one thread holds one token of the chunk vectors");
static_assert(kWarps == 4 * chunk_scan_slabs::kWarpgroups, "a warpgroup is 4 warps");

// Shared memory from a 1024-byte boundary, in bytes: x [kMaxQ][kBN] of T (swizzled, k order), prev
// [kBN p][kMaxN n] of T (K-major: two swizzled atoms of 64 n), the warps' regions (16 C rows
// [16][kLdN] of T, later 16 fp32 output rows [16][kLdO]), dA, dt and the row scales [kMaxQ] in f32,
// each warpgroup's column factors [kMaxQ] in f32, one mbarrier per x group (slab).
template <class T>
struct Layout {
  static constexpr size_t kX = 0;
  static constexpr size_t kPrev = kX + sizeof(T) * kMaxQ * kBN;
  static constexpr size_t kRegionBytes = sizeof(T) * 16 * kLdN;
  static constexpr size_t kRegions = kPrev + sizeof(T) * kBN * kMaxN;
  static constexpr size_t kVectors = kRegions + kWarps * kRegionBytes;
  static constexpr size_t kColumns = kVectors + 3 * sizeof(float) * kMaxQ;
  static constexpr size_t kBars = kColumns + chunk_scan_slabs::kWarpgroups * sizeof(float) * kMaxQ;
  static constexpr size_t kBytes = kBars + sizeof(uint64_t) * kSlabs;
  static constexpr size_t kLaunchBytes = kBytes + kAlign;  // with room to align the start
  static_assert(16 * kLdO * sizeof(float) <= kRegionBytes, "a warp's output rows fit in its region");
  static_assert(kPrev % 1024 == 0, "prev's atoms start on the swizzle's period");
  static_assert(kRegions % 16 == 0 && kVectors % 16 == 0 && kBars % 8 == 0, "aligned areas");
  static_assert(2 * kLaunchBytes <= 227 * 1024, "two blocks fit one SM");
};

// cb of one 16-token block for this thread: rows lo and hi, tokens 4 tig .. 4 tig + 3, as loaded
// (one 16- or 8-byte load per row); 16-bit values are converted where they are used, so the block
// loaded ahead holds 4 registers instead of 8.
template <class T, bool kCbF32>
struct CbQuad {
  using Raw = std::conditional_t<kCbF32, float4, uint2>;
  Raw lo{}, hi{};  // zeros: +0 in either dtype
  __device__ static float4 widen(const Raw& v) {
    if constexpr (kCbF32) {
      return v;
    } else {
      const float2 a = Half16<T>::unpack2(v.x), b = Half16<T>::unpack2(v.y);
      return make_float4(a.x, a.y, b.x, b.y);
    }
  }
};

// Copies x's 64 tokens of slab j (64 p each) into its 8 KB of the tile: token t at k row
// k_row_of_token(t), its 16-byte vector v at the swizzled place. Thread t copies vector t % 8 of
// tokens t / 8 and t / 8 + 32 (the same k row order and swizzle phase: 32 is a multiple of 16).
// Tokens at or past rows_in, and vectors at or past cols_in, are zero-filled.
template <class T>
__device__ __forceinline__ void copy_x_slab(T* sSlab, const T* src, int64_t ld_src, int rows_in, int cols_in) {
  const int tid = static_cast<int>(threadIdx.x), token = tid / 8, vec = tid % 8;
  const int k = k_row_of_token(token);
  T* const to = sSlab + k * kBN + wgmma_layout::sw128_vector(k, vec) * 8;
  const T* const from = src + token * ld_src + vec * 8;
  const bool col_in = vec * 8 < cols_in;
#pragma unroll
  for (int i = 0; i < 2; ++i) cp_async16(to + i * 32 * kBN, from + i * 32 * ld_src, col_in && token + 32 * i < rows_in);
}

// A named barrier of this warpgroup's 128 threads (id 1 + warpgroup; 0 is __syncthreads'), and the
// same barrier voting whether v holds for any of them.
// The ids are immediates, so the kernel reserves 3 barriers, not all 16.
__device__ __forceinline__ void warpgroup_sync(int warpgroup) {
  if (warpgroup == 0)
    asm volatile("bar.sync 1, 128;\n" ::: "memory");
  else
    asm volatile("bar.sync 2, 128;\n" ::: "memory");
}
__device__ __forceinline__ bool warpgroup_any(bool v, int warpgroup) {
  unsigned any;
  if (warpgroup == 0)
    asm volatile("{\n.reg .pred p, q;\nsetp.ne.u32 p, %1, 0;\nbar.red.or.pred q, 1, 128, p;\nselp.u32 %0, 1, 0, q;\n}\n"
                 : "=r"(any)
                 : "r"(static_cast<unsigned>(v))
                 : "memory");
  else
    asm volatile("{\n.reg .pred p, q;\nsetp.ne.u32 p, %1, 0;\nbar.red.or.pred q, 2, 128, p;\nselp.u32 %0, 1, 0, q;\n}\n"
                 : "=r"(any)
                 : "r"(static_cast<unsigned>(v))
                 : "memory");
  return any != 0;
}

template <class T, bool kCbF32>
__global__ void __launch_bounds__(kBlockThreads, kBlocksPerSm)
    chunk_scan_wgmma_kernel(ChunkScanParams p, unsigned early_blocks, unsigned split_from, unsigned split_tiles) {
  using L = Layout<T>;
  extern __shared__ uint4 smem[];
  unsigned char* bytes = reinterpret_cast<unsigned char*>(smem);
  bytes += (kAlign - (smem_addr(bytes) & (kAlign - 1))) & (kAlign - 1);
  T* const sX = reinterpret_cast<T*>(bytes + L::kX);
  T* const sPrev = reinterpret_cast<T*>(bytes + L::kPrev);
  float* const sDA = reinterpret_cast<float*>(bytes + L::kVectors);  // [Q] dA of the chunk
  float* const sDt = sDA + kMaxQ;                                    // [Q] dt of the chunk
  float* const sRowScale = sDt + kMaxQ;                              // [Q]
  float* const sColumns = reinterpret_cast<float*>(bytes + L::kColumns);  // [warpgroup][Q]
  uint64_t* const bars = reinterpret_cast<uint64_t*>(bytes + L::kBars);

  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid & 31, gid = lane / 4, tig = lane % 4;
  const int warpgroup = warp / 4, wl = warp % 4;  // wl: the warp's rows within its warpgroup's slab (warp_rows)
  T* const sRegion = reinterpret_cast<T*>(bytes + L::kRegions + warp * L::kRegionBytes);
  const chunk_scan_tile::Tile t(p, split_from, split_tiles);
  const chunk_scan_split::BlockTile place = t.place;
  const int64_t Q = t.Q, H = t.H, P = t.P, G = t.G, N = t.N, S = t.S;
  const int64_t p0 = t.p0, h = t.h, c = t.c, b = t.b, t0 = t.t0, g = t.g, vec = t.vec;
  const int valid = t.valid, n_in = t.n_in, rows_p = t.rows_p;
  const T* x = static_cast<const T*>(t.x);

  const int slabs = (valid + kSlabRows - 1) / kSlabRows;
  const chunk_scan_slabs::Slabs own = chunk_scan_slabs::warpgroup_slabs(warpgroup, slabs, place.split, place.half);
  const int x_rows_read = min(valid, kSlabRows * (chunk_scan_slabs::last_slab(slabs, place.split, place.half) + 1));

  const bool early = blockIdx.x < early_blocks;
  if (!early) wait_previous_grid();
  // As chunk_scan_tc.cu: thread t holds token t of the chunk vectors and 4 vectors of 8 of the f32
  // entering states; an early block copies x and C first, then waits, then loads these.
  const int k_own = tid;
  const bool k_in = k_own < valid;
  float dA_own = 0.0f, dt_own = 0.0f, dA_before_own = 0.0f;  // dA of tokens k and k - 1
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
      if (k_own >= 1) dA_before_own = load(p.dA, vec + k_own - 1);
    }
    if (prev_f32)
      chunk_scan_tile::load_entering_f32(prev_v, static_cast<const float*>(p.states.p), prev_row0, prev_row, prev_col,
                                         rows_p, n_in, N);
  };
  // 16-bit states into prev's K-major atoms (wgmma_layout.h): atom a holds n 64 a .. 64 a + 63 of
  // every p row, at the place sw128_k_place gives its first value.
  constexpr int kAtomN = 64, kAtoms = kMaxN / kAtomN;
  static_assert(kBN == wgmma_layout::kSw128AtomRows, "prev's p rows fill one atom");
  const auto copy_prev_16 = [&] {
    if (!prev_f32) {
      const T* prev = static_cast<const T*>(p.states.p) + prev_row0 * N;
#pragma unroll
      for (int a = 0; a < kAtoms; ++a) {
        T* const atom = sPrev + wgmma_layout::sw128_k_place(0, a * kAtomN) / sizeof(T);
        copy_tile_async<kBN, kAtomN, kBlockThreads, true>(atom, kAtomN, prev + a * kAtomN, N, rows_p,
                                                          n_in - a * kAtomN);
      }
    }
  };
  if (!early) load_stage_outputs();

  if (tid == 0) {
#pragma unroll
    for (int j = 0; j < kSlabs; ++j) mbar_init(&bars[j], kBlockThreads);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  // Copy groups of every thread: (1) its warp's C rows of its first slab, (2) the 16-bit entering
  // states, (3..6) x by slab, zeros past the valid length, each slab also arriving on its mbarrier.
  t.copy_c_row_groups<kLateOffset>(
      sRegion, own.first >= 0 ? own.first * kSlabRows + chunk_scan_slabs::warp_rows(wl).early : -1, lane);
  if (!early) copy_prev_16();
  cp_async_commit();
  const int x_slabs = (x_rows_read + kSlabRows - 1) / kSlabRows;
#pragma unroll
  for (int j = 0; j < kSlabs; ++j) {
    if (j < x_slabs)
      copy_x_slab(sX + j * kSlabRows * kBN, x + ((b * S + t0 + j * kSlabRows) * H + h) * P + p0, H * P,
                  valid - j * kSlabRows, rows_p);
    mbar_arrive_on_copies(&bars[j]);
    cp_async_commit();
  }
  if (early) {
    wait_previous_grid();
    load_stage_outputs();
    copy_prev_16();
    cp_async_commit();
  }

  // Chunk vectors and row scales for every token of the tile, zeros past the valid length (a slab's
  // steps read them before masking).
  {
    const float scale = chunk_scan_tile::carried_in_scale(k_in, id_own, id_before, dA_own);
    sDA[k_own] = dA_own;
    sDt[k_own] = dt_own;
    sRowScale[k_own] = scale;
  }
  if (prev_f32) {  // rounded to C's dtype, at their places in prev's atoms
#pragma unroll
    for (int i = 0; i < kPrevPasses; ++i) {
      const int r = prev_row + i * kPrevRowStep;
      *reinterpret_cast<uint4*>(reinterpret_cast<unsigned char*>(sPrev) + wgmma_layout::sw128_k_place(r, prev_col)) =
          chunk_scan_tile::round_entering<T>(prev_v[i]);
    }
  }
  if (early)
    cp_async_wait<0>();
  else
    cp_async_wait<kSlabs>();
  fence_proxy_async_shared();  // prev's stores and copies, before wgmma reads them after the barrier
  // The barrier votes whether the chunk's dA allows the factored decay (finite, at most 0,
  // non-increasing over the valid tokens; NaN fails every comparison).
  const bool monotone_own =
      !k_in | ((fabsf(dA_own) <= FLT_MAX) & (dA_own <= 0.0f) & ((k_own == 0) | (dA_own <= dA_before_own)));
  const bool factored = __syncthreads_and(monotone_own) != 0;

  const chunk_scan_tile::OutputRows<T> rows(p, t);
  const int64_t cb_base = ((b * p.chunks + c) * G + g) * Q;
  const float* cb_f32 = static_cast<const float*>(p.cb.p);
  const T* cb_16 = static_cast<const T*>(p.cb.p);
  float* const sOut = reinterpret_cast<float*>(sRegion);  // [16][kLdO]

#pragma unroll 1
  for (int phase = 0; phase < 2; ++phase) {
    const int slab = phase == 0 ? own.first : own.second;  // the same for the warpgroup's four warps
    if (slab < 0) break;
    // The warp's rows: two groups of 8 of the slab, from early_i and early_i + kLateOffset
    // (chunk_scan_slabs.h).
    const int i0 = slab * kSlabRows, early_i = i0 + chunk_scan_slabs::warp_rows(wl).early;
    const bool rows_in = early_i < valid;  // a warp past the valid rows still takes part in each wgmma
    if (phase == 1) {
      t.copy_c_row_groups<kLateOffset>(sRegion, early_i, lane);
      cp_async_wait<0>();
      __syncwarp();
    }

    // This thread's cb rows (a row past the valid length reads the last valid row instead: its
    // outputs are never stored, and an mma row depends on its own row of A alone).
    const int i_lo = early_i + gid, i_hi = i_lo + kLateOffset;
    const int64_t row_lo = cb_base + min(i_lo, valid - 1), row_hi = cb_base + min(i_hi, valid - 1);
    using Cb = CbQuad<T, kCbF32>;
    const auto load_cb = [&](int kb, bool diagonal) {
      Cb v;
      const int k = kb * 16 + 4 * tig;
      if (!diagonal || k < valid) {  // k % 4 == 0 and Q % 8 == 0: k + 3 < Q
        if constexpr (kCbF32) {
          v.lo = __ldg(reinterpret_cast<const float4*>(cb_f32 + row_lo * Q + k));
          v.hi = __ldg(reinterpret_cast<const float4*>(cb_f32 + row_hi * Q + k));
        } else {
          v.lo = __ldg(reinterpret_cast<const uint2*>(cb_16 + row_lo * Q + k));
          v.hi = __ldg(reinterpret_cast<const uint2*>(cb_16 + row_hi * Q + k));
        }
      }
      return v;
    };
    // The same loads from two row pointers (4 values a Raw, 4 Raws a step of 16 tokens), given a
    // group's pointers and the step within it, so that an unrolled group's loads take constant
    // offsets; `bounded`: the step may lie in the diagonal group, whose tokens can pass valid.
    using CbRaw = typename Cb::Raw;
    [[maybe_unused]] const CbRaw* const cb_lo_row =
        reinterpret_cast<const CbRaw*>(kCbF32 ? static_cast<const void*>(cb_f32 + row_lo * Q + 4 * tig)
                                              : static_cast<const void*>(cb_16 + row_lo * Q + 4 * tig));
    [[maybe_unused]] const CbRaw* const cb_hi_row =
        reinterpret_cast<const CbRaw*>(kCbF32 ? static_cast<const void*>(cb_f32 + row_hi * Q + 4 * tig)
                                              : static_cast<const void*>(cb_16 + row_hi * Q + 4 * tig));
    [[maybe_unused]] const auto load_cb_in_group = [&](const CbRaw* lo_group, const CbRaw* hi_group, int grp, int step,
                                                       bool bounded) {
      Cb v;
      if (!bounded || (grp * kStepsPerSlab + step) * 16 + 4 * tig < valid) {
        v.lo = __ldg(lo_group + step * 4);
        v.hi = __ldg(hi_group + step * 4);
      }
      return v;
    };

    // The column factors of the slab's factored groups (warpgroup-wide: every row of the slab has
    // the same first row i0), once the warpgroup's reads of the previous slab's are done.
    float* const sColumn = sColumns + warpgroup * kMaxQ;
    const bool factored_slab = factored && slab > 0;
    if (factored_slab) {
      warpgroup_sync(warpgroup);
      const float dA_first = sDA[i0];
      for (int k = tid % 128; k < i0; k += 128) sColumn[k] = within_chunk_decay_exp2(dA_first, sDA[k]) * sDt[k];
      warpgroup_sync(warpgroup);
    }

    WarpTile<T, 16, kBN> acc;
    // acc += C prev over all of N's 8 steps of 16 (C and prev are zeros past N): a step count taken
    // from N put the wgmmas under a branch, and ptxas then serialized every wgmma of the kernel
    // (tools/wgmma_guard.sh). The warp's A fragments come from its region's 16 C rows (a warp past
    // the valid rows reads stale rows there, whose sums are never stored); two fragments in turn,
    // each rebuilt only once the wgmma that read it has completed.
    const auto carried_in = [&] {
      const int idx = lane >> 3, r = lane & 7;
      const T* const lane_row = sRegion + (r + (idx & 1) * 8) * kLdN + (idx >> 1) * 8;
      uint32_t a[2][4];
      [[maybe_unused]] const uint64_t prev_descriptor = sw128_k_descriptor(sPrev, 0);
      wgmma_fence_operands(acc.acc[0]);
#pragma unroll
      for (int ks = 0; ks < kMaxN / 16; ++ks) {
        uint32_t(&frag)[4] = a[ks % 2];
        if (ks >= 2) {
          wgmma_wait<1>();
#pragma unroll
          for (int e = 0; e < 4; ++e) wgmma_pin(frag[e]);
        }
        ldsm_x4(frag, lane_row + ks * 16);
#pragma unroll
        for (int e = 0; e < 4; ++e) wgmma_pin(frag[e]);
        wgmma_fence();
        if constexpr (SCAN_DESCRIPTOR_STEPS)
          wgmma_m64n64k16_rs_kmajor<T>(acc.acc[0], frag,
                                       wgmma_layout::sw128_descriptor_plus(prev_descriptor,
                                                                           wgmma_layout::sw128_k_step_offset(ks)));
        else
          wgmma_m64n64k16_rs_kmajor<T>(acc.acc[0], frag, sw128_k_descriptor(sPrev, ks));
        wgmma_commit();
      }
      wgmma_wait<0>();
      wgmma_fence_operands(a);
      wgmma_fence_operands(acc.acc[0]);
    };
    const int last_step = slab * kStepsPerSlab + kStepsPerSlab - 1;
    // Whether the diagonal group's decays are all normal, given monotone dA (the block's vote);
    // warpgroup-uniform (shared-memory values and the slab). Rows past the valid ones (dA 0 there)
    // are never stored.
    const bool normal_diagonal = SCAN_DIAGONAL_NORMAL_EXP && factored &&
                                 chunk_scan_slabs::diagonal_decays_normal(sDA[i0], sDA[min(i0 + kSlabRows, valid) - 1]);
    // The slab into acc, its groups before the diagonal factored (kFactored) or exact. Returns false,
    // before the diagonal, where a factored f16 coefficient left f16's range (anywhere in the
    // warpgroup); the caller then runs the slab again, exact.
    const auto run_slab = [&](auto factored_tag) {
      constexpr bool kFactored = decltype(factored_tag)::value;
      auto cur = load_cb(0, slab == 0);  // in flight during the carried-in term
      // dA of the rows and of i0; the factored groups need neither, so the rows' are read after them.
      const float dA_first = sDA[i0];
      float dA_lo = 0.0f, dA_hi = 0.0f;
      if constexpr (!kFactored) dA_lo = sDA[i_lo], dA_hi = sDA[i_hi];

      // Carried-in term (the warpgroup's wgmma): exp(dA[i]) C prev, or exp(dA[i0]) C prev where the
      // row factor exp(dA[i]-dA[i0]) comes with the factored groups (sRowScale is 0 where seq_idx
      // cuts the carry, or where exp(dA[i]) is below fp32's range, as it is then too).
      acc.zero();
      carried_in();
      if (rows_in) {  // (rows past the valid ones are never stored; unscaled, ptxas spilled here)
        float scale_lo = sRowScale[i_lo], scale_hi = sRowScale[i_hi];
        if constexpr (kFactored) {
          const float chunk_start_decay = expf(dA_first);
          scale_lo = scale_lo != 0.0f ? chunk_start_decay : 0.0f;
          scale_hi = scale_hi != 0.0f ? chunk_start_decay : 0.0f;
        }
        acc.scale_rows(scale_lo, scale_hi);
      }

      [[maybe_unused]] float largest = 0.0f;  // of the factored f16 coefficients
      [[maybe_unused]] __half2 largest_packed = __floats2half2_rn(0.0f, 0.0f);  // the same, rounded
      // The coefficients of step kb into a: exact as chunk_scan_tc.cu, or factored
      // round_x(cb[i,k] exp(dA[i0]-dA[k]) dt[k]); in the diagonal group (exact), tokens past the
      // row are zeros (row and token within the slab: early + gid or late + gid, 16 ks + 4 tig + e),
      // and the early rows' are not computed at all past their own step (lo_live false).
      const auto coefficients = [&](uint32_t a[4], const Cb& cb_raw, int kb, int ks, auto diagonal, auto factor,
                                    auto normal, bool lo_live) {
        // exp(min(dA[i]-dA[k], 0)) of the exact form; with `normal` (the diagonal group of a slab
        // where that holds) the clamp and exp2f's range fix-up are left out.
        const auto decay = [&](float dA_row, float dA_k) {
          if constexpr (decltype(normal)::value)
            return exp2_normal((dA_row - dA_k) * kLog2e);
          else
            return within_chunk_decay_exp2(dA_row, dA_k);
        };
        const float4 cb_lo = Cb::widen(cb_raw.lo), cb_hi = Cb::widen(cb_raw.hi);
        const float cbl[4] = {cb_lo.x, cb_lo.y, cb_lo.z, cb_lo.w}, cbh[4] = {cb_hi.x, cb_hi.y, cb_hi.z, cb_hi.w};
        float lo[4], hi[4];
        if constexpr (decltype(factor)::value) {
          const float4 column = *reinterpret_cast<const float4*>(sColumn + kb * 16 + 4 * tig);
          const float cv[4] = {column.x, column.y, column.z, column.w};
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            lo[e] = cbl[e] * cv[e];
            hi[e] = cbh[e] * cv[e];
            if constexpr (std::is_same_v<T, __half> && !SCAN_F16_RANGE_PACKED)
              largest = fmaxf(largest, fmaxf(fabsf(lo[e]), fabsf(hi[e])));
          }
        } else {
          const float4 dAk = *reinterpret_cast<const float4*>(sDA + kb * 16 + 4 * tig);
          const float4 dtk = *reinterpret_cast<const float4*>(sDt + kb * 16 + 4 * tig);
          const float dAv[4] = {dAk.x, dAk.y, dAk.z, dAk.w}, dtv[4] = {dtk.x, dtk.y, dtk.z, dtk.w};
#pragma unroll
          for (int e = 0; e < 4; ++e) lo[e] = 0.0f;
          if (!decltype(diagonal)::value || lo_live) {
#pragma unroll
            for (int e = 0; e < 4; ++e) lo[e] = cbl[e] * decay(dA_lo, dAv[e]) * dtv[e];
          }
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            hi[e] = cbh[e] * decay(dA_hi, dAv[e]) * dtv[e];
            if constexpr (decltype(diagonal)::value) {
              const int token = 16 * ks + 4 * tig + e;
              if (token > chunk_scan_slabs::warp_rows(wl).early + gid) lo[e] = 0.0f;
              if (token > chunk_scan_slabs::warp_rows(wl).late + gid) hi[e] = 0.0f;
            }
          }
        }
        a[0] = Half16<T>::pack2(lo[0], lo[1]), a[1] = Half16<T>::pack2(hi[0], hi[1]);
        a[2] = Half16<T>::pack2(lo[2], lo[3]), a[3] = Half16<T>::pack2(hi[2], hi[3]);
        if constexpr (std::is_same_v<T, __half> && SCAN_F16_RANGE_PACKED && decltype(factor)::value) {
#pragma unroll
          for (int e = 0; e < 4; ++e) largest_packed = __hmax2(largest_packed, __habs2(as_half2(a[e])));
        }
      };
      // One group: its x slab has landed (this warp's view of every thread's copies, then made
      // visible to the tensor cores' reads), then each step's fragment is built, pinned and fenced
      // just before its wgmma, so step ks's tensor work runs while step ks + 1's fragment is built.
      // Two fragments in turn, each step its own commit group: a fragment is built again only once
      // the wgmma that read it has completed (at most one group pending), and stays pinned until
      // then, so no other value takes its registers while a wgmma may still read them.
      const auto group = [&](int grp, auto diagonal, auto factor, auto normal) {
        mbar_wait_first_phase(&bars[grp]);
        fence_proxy_async_shared();
        uint32_t a[2][4];
        [[maybe_unused]] const uint64_t x_descriptor = sw128_mn_descriptor(sX + grp * kStepsPerSlab * 16 * kBN);
        [[maybe_unused]] const CbRaw* const cb_lo_group = cb_lo_row + grp * kStepsPerSlab * 4;
        [[maybe_unused]] const CbRaw* const cb_hi_group = cb_hi_row + grp * kStepsPerSlab * 4;
        wgmma_fence_operands(acc.acc[0]);
#pragma unroll
        for (int ks = 0; ks < kStepsPerSlab; ++ks) {
          const int kb = grp * kStepsPerSlab + ks;
          uint32_t(&frag)[4] = a[ks % 2];
          Cb next;
          if constexpr (SCAN_CB_STEPS) {
            const chunk_scan_slabs::NextCb to = chunk_scan_slabs::next_cb(grp, ks, slab, decltype(diagonal)::value);
            if (to.loads) next = load_cb_in_group(cb_lo_group, cb_hi_group, grp, ks + 1, to.bounded);
          } else if (kb < last_step) {
            next = load_cb(kb + 1, kb + 1 >= i0 / 16);
          }
          if (ks >= 2) {
            wgmma_wait<1>();
#pragma unroll
            for (int e = 0; e < 4; ++e) wgmma_pin(frag[e]);
          }
          // In the diagonal group a row group's coefficients end at its own step: the early group's
          // at step early / 16, the late group's at late / 16 (never before the early one's).
          const chunk_scan_slabs::WarpRows own_rows = chunk_scan_slabs::warp_rows(wl);  // within the slab
          const bool lo_live = !decltype(diagonal)::value || 16 * ks <= own_rows.early + 7;
          const bool hi_live = !decltype(diagonal)::value || 16 * ks <= own_rows.late + 7;
          if (!hi_live) {
#pragma unroll
            for (int e = 0; e < 4; ++e) frag[e] = 0u;  // tokens past both of the warp's row groups
          } else {
            coefficients(frag, cur, kb, ks, diagonal, factor, normal, lo_live);
          }
#pragma unroll
          for (int e = 0; e < 4; ++e) wgmma_pin(frag[e]);
          wgmma_fence();
          if constexpr (SCAN_DESCRIPTOR_STEPS)
            wgmma_m64n64k16_rs<T>(
                acc.acc[0], frag,
                wgmma_layout::sw128_descriptor_plus(x_descriptor, static_cast<uint32_t>(ks * 16 * kBN * sizeof(T))));
          else
            wgmma_m64n64k16_rs<T>(acc.acc[0], frag, sw128_mn_descriptor(sX + kb * 16 * kBN));
          wgmma_commit();
          cur = next;
        }
        wgmma_wait<0>();
        wgmma_fence_operands(a);
        wgmma_fence_operands(acc.acc[0]);
      };
#pragma unroll 1
      for (int grp = 0; grp < slab; ++grp) group(grp, std::false_type{}, factored_tag, std::false_type{});
      if constexpr (kFactored) {
        // f16's largest finite value is 65504 (anything from 65520 on rounds to inf; the rounded
        // coefficients' max is inf exactly where one of them left the range).
        if constexpr (std::is_same_v<T, __half> && SCAN_F16_RANGE_PACKED)
          largest = fmaxf(__low2float(largest_packed), __high2float(largest_packed));
        if constexpr (std::is_same_v<T, __half>)
          if (warpgroup_any(largest > 65504.0f, warpgroup)) return false;
        dA_lo = sDA[i_lo], dA_hi = sDA[i_hi];
        acc.scale_rows(within_chunk_decay_exp2(dA_lo, dA_first), within_chunk_decay_exp2(dA_hi, dA_first));
      }
      group(slab, std::true_type{}, std::false_type{},
            std::bool_constant<kFactored && SCAN_DIAGONAL_NORMAL_EXP != 0>{});
      return true;
    };
    if (!factored_slab || (SCAN_DIAGONAL_NORMAL_EXP && !normal_diagonal) || !run_slab(std::true_type{}))
      run_slab(std::false_type{});

    // Epilogue through the warp's region (its C rows are dead), as chunk_scan_tc.cu.
    if (rows_in) {
      __syncwarp();
      acc.store_f32(sOut, kLdO, 0, 0);
      __syncwarp();
      rows.template store_groups<kLateOffset>(p, sOut, early_i, lane);
    }
    __syncwarp();  // the region's reads are done before the next phase copies C rows into it
  }
  // No copy, and no arrival on an mbarrier, outlives the block.
  cp_async_wait<0>();
#pragma unroll
  for (int j = 0; j < kSlabs; ++j) mbar_wait_first_phase(&bars[j]);
}

}  // namespace

bool launch_chunk_scan_wgmma(const char* op, const ChunkScanParams& p, int64_t tiles, cudaStream_t stream) {
  if (!wgmma_allowed() || compute_capability(op) != 90) return false;  // sm_90a code runs on 9.0 alone
  const bool f16 = p.x.dtype == SSD_DTYPE_F16, cb_f32 = p.cb.dtype == SSD_DTYPE_F32;
  const auto kernel = cb_f32 ? (f16 ? chunk_scan_wgmma_kernel<__half, true> : chunk_scan_wgmma_kernel<__nv_bfloat16, true>)
                             : (f16 ? chunk_scan_wgmma_kernel<__half, false>
                                    : chunk_scan_wgmma_kernel<__nv_bfloat16, false>);
  constexpr size_t kShared = Layout<__half>::kLaunchBytes;
  static_assert(Layout<__nv_bfloat16>::kLaunchBytes == kShared, "one plan for both 16-bit dtypes");
  cuda_check(op, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kShared)),
             "cudaFuncSetAttribute(chunk_scan_wgmma_kernel)");
  const int64_t slots = kBlocksPerSm * multiprocessors(op);
  const unsigned early_blocks = p.stage_of_call ? static_cast<unsigned>(slots) : 0;
  const chunk_scan_split::Split split = chunk_scan_split::plan_split(tiles, slots);
  launch_kernel(op, "launch of chunk_scan_wgmma_kernel", kernel, static_cast<unsigned>(split.from + 2 * split.tiles),
                kBlockThreads, kShared, stream, p, early_blocks, static_cast<unsigned>(split.from),
                static_cast<unsigned>(split.tiles));
  check_launch(op, "chunk_scan_wgmma_kernel");
  return true;
}

}  // namespace ssd_gpu
