// Tensor-core building blocks of the fast kernels: 16-bit operand traits, 8-wide vector loads that
// convert any storage dtype to fp32, ldmatrix / mma.sync m16n8k16 wrappers and a warp-tile GEMM
// over shared-memory tiles. Products of f16/bf16 operands are exact in fp32 and accumulate in
// fp32, so the tensor cores change only the summation order of the fp32 kernels, never a rounding
// point of the contract.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "tensor_access.cuh"
#include "wgmma_layout.h"

namespace ssd_gpu {

// ---- 16-bit operand types ------------------------------------------------------------------------
template <class T>
struct Half16;
// from/to convert one value; pack2/unpack2 convert the two values of one 32-bit register (lower
// index in the low half, as mma.sync fragments hold them) with one instruction where one exists.
template <>
struct Half16<__half> {
  static constexpr int32_t kDtype = SSD_DTYPE_F16;
  __device__ static __half from(float v) { return __float2half_rn(v); }
  __device__ static float to(__half v) { return __half2float(v); }
  __device__ static uint32_t pack2(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
  __device__ static float2 unpack2(uint32_t u) { return __half22float2(*reinterpret_cast<const __half2*>(&u)); }
};
template <>
struct Half16<__nv_bfloat16> {
  static constexpr int32_t kDtype = SSD_DTYPE_BF16;
  __device__ static __nv_bfloat16 from(float v) { return __float2bfloat16_rn(v); }
  __device__ static float to(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static uint32_t pack2(float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
  __device__ static float2 unpack2(uint32_t u) {
    return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&u));
  }
};

// Eight consecutive 16-bit values: one 16-byte load or store.
template <class T>
union Vec8 {
  uint4 raw;
  T h[8];
};

// Eight consecutive elements t[i..i+7] of any storage dtype as fp32. Vector loads (one 16-byte
// load for f16/bf16, two for f32): i must be a multiple of 8 and the base 16-byte aligned, which
// the launchers check before choosing a fast kernel.
__device__ __forceinline__ void load8(In t, int64_t i, float v[8]) {
  if (t.dtype == SSD_DTYPE_F32) {
    const float4* q = reinterpret_cast<const float4*>(static_cast<const float*>(t.p) + i);
    const float4 a = q[0], b = q[1];
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
  } else if (t.dtype == SSD_DTYPE_F16) {
    Vec8<__half> q;
    q.raw = *reinterpret_cast<const uint4*>(static_cast<const __half*>(t.p) + i);
#pragma unroll
    for (int e = 0; e < 8; ++e) v[e] = __half2float(q.h[e]);
  } else {
    Vec8<__nv_bfloat16> q;
    q.raw = *reinterpret_cast<const uint4*>(static_cast<const __nv_bfloat16*>(t.p) + i);
#pragma unroll
    for (int e = 0; e < 8; ++e) v[e] = __bfloat162float(q.h[e]);
  }
}

// Eight fp32 values rounded to nearest even into T, packed for one 16-byte shared-memory store.
template <class T>
__device__ __forceinline__ uint4 pack8(const float v[8]) {
  Vec8<T> q;
#pragma unroll
  for (int e = 0; e < 8; ++e) q.h[e] = Half16<T>::from(v[e]);
  return q.raw;
}

// Two adjacent outputs t[i], t[i+1] (i even) in the output's dtype, one 8- or 4-byte store.
__device__ __forceinline__ void store2(Out t, int64_t i, float a, float b) {
  switch (t.dtype) {
    case SSD_DTYPE_F16: *reinterpret_cast<__half2*>(static_cast<__half*>(t.p) + i) = __floats2half2_rn(a, b); break;
    case SSD_DTYPE_BF16:
      *reinterpret_cast<__nv_bfloat162*>(static_cast<__nv_bfloat16*>(t.p) + i) = __floats2bfloat162_rn(a, b);
      break;
    default: *reinterpret_cast<float2*>(static_cast<float*>(t.p) + i) = make_float2(a, b); break;
  }
}

// Four adjacent outputs t[i..i+3] (i a multiple of 4, the base 16-byte aligned): one 16- or 8-byte store.
__device__ __forceinline__ void store4(Out t, int64_t i, float4 v) {
  if (t.dtype == SSD_DTYPE_F32) {
    *reinterpret_cast<float4*>(static_cast<float*>(t.p) + i) = v;
  } else {
    store2(t, i, v.x, v.y);
    store2(t, i + 2, v.z, v.w);
  }
}

// Eight consecutive outputs t[i..i+7] (i a multiple of 8, the base 16-byte aligned) in the output's
// dtype: one 16-byte store (two for f32).
__device__ __forceinline__ void store8(Out t, int64_t i, const float v[8]) {
  if (t.dtype == SSD_DTYPE_F32) {
    float4* q = reinterpret_cast<float4*>(static_cast<float*>(t.p) + i);
    q[0] = make_float4(v[0], v[1], v[2], v[3]);
    q[1] = make_float4(v[4], v[5], v[6], v[7]);
  } else if (t.dtype == SSD_DTYPE_F16) {
    *reinterpret_cast<uint4*>(static_cast<__half*>(t.p) + i) = pack8<__half>(v);
  } else {
    *reinterpret_cast<uint4*>(static_cast<__nv_bfloat16*>(t.p) + i) = pack8<__nv_bfloat16>(v);
  }
}

__host__ __device__ __forceinline__ bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// ---- cp.async: global -> shared without registers ---------------------------------------------------
// 16 bytes from src to dst (both 16-byte aligned); with pred false the source size is 0: nothing
// is read at src and dst is zero-filled, which is how tile tails become zeros.
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool pred) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  const int bytes = pred ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(bytes));
}
// 4 bytes (a seq id) the same way; the 4-byte size goes through L1 (.ca), the only form allowed.
__device__ __forceinline__ void cp_async4(void* dst, const void* src, bool pred) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(pred ? 4 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// A block of kThreads threads copies a kRows x kCols tile of E from global memory (row stride
// ld_src elements, from `src`) into shared memory (row stride ld_dst, from `dst`), 16 bytes per
// cp.async. Thread t owns the vector at column (t % V) * (16 / sizeof(E)) of rows t / V + i *
// (kThreads / V), V the vectors per row: a fixed trip count, no division per vector, and one source
// pointer advanced by a constant stride. Rows at or past rows_in, and vectors whose first column is
// at or past cols_in, are zero-filled: their cp.async names the walked address with a source size
// of 0, so nothing is read there (the address may lie past the tensor; no select or branch per
// vector, which had nvcc recompute each row address: docs/performance.md).
// `tid` is the thread's index among the kThreads copying (a warp copying alone passes its lane).
// kSwizzle128: rows of 128 bytes (ld_dst == kCols) in the layout of wgmma's 128-byte-swizzled
// operands (wgmma_layout.h; dst on a 1024-byte boundary or a multiple of 8 rows past one); a
// thread's rows then differ by multiples of 8, so its vector keeps one place.
template <int kRows, int kCols, int kThreads, bool kSwizzle128 = false, class E>
__device__ __forceinline__ void copy_tile_async(E* dst, int ld_dst, const E* src, int64_t ld_src, int rows_in,
                                                int cols_in, int tid = static_cast<int>(threadIdx.x)) {
  constexpr int kVec = 16 / static_cast<int>(sizeof(E)), kVecsPerRow = kCols / kVec;
  static_assert(kCols % kVec == 0 && kThreads % kVecsPerRow == 0, "whole vectors, whole rows per pass");
  constexpr int kRowStep = kThreads / kVecsPerRow, kPasses = (kRows + kRowStep - 1) / kRowStep;
  static_assert(!kSwizzle128 || (kCols * sizeof(E) == 128 && kRowStep % 8 == 0), "swizzled: 128-byte rows, 8-row steps");
  const int row = tid / kVecsPerRow, col = (tid % kVecsPerRow) * kVec;
  const bool col_in = col < cols_in;
  const E* from = src + row * ld_src + col;
  const int64_t from_step = kRowStep * ld_src;
  E* to = dst + row * ld_dst + (kSwizzle128 ? wgmma_layout::sw128_vector(row, col / kVec) * kVec : col);
#pragma unroll
  for (int i = 0; i < kPasses; ++i) {
    const int r = row + i * kRowStep;
    if (kRows % kRowStep != 0 && r >= kRows) break;
    cp_async16(to, from, col_in && r < rows_in);
    from += from_step;
    to += kRowStep * ld_dst;
  }
}

// ---- mbarriers that cp.async copies arrive on ------------------------------------------------------
// A block's threads wait for one copy group without a block barrier: every thread issues its
// share, then arrives on the group's mbarrier (initialized for all of them) once its copies land.
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count));
}
// The mbarrier counts one arrival of this thread once all of its earlier cp.asyncs have landed.
__device__ __forceinline__ void mbar_arrive_on_copies(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
// Waits until the mbarrier's first phase has completed (every thread's copies before its arrival
// are visible to this thread). Each barrier here is used for one phase only.
__device__ __forceinline__ void mbar_wait_first_phase(uint64_t* bar) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
      "@!done bra wait_%=;\n"
      "}\n" ::"r"(smem_addr(bar))
      : "memory");
}

// ---- ldmatrix and mma.sync -----------------------------------------------------------------------
__device__ __forceinline__ void ldsm_x4(uint32_t r[4], const void* smem) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}
__device__ __forceinline__ void ldsm_x4_trans(uint32_t r[4], const void* smem) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}

// d += a * b for one 16x8x16 block, fp32 accumulation.
template <class T>
__device__ __forceinline__ void mma16816(float d[4], const uint32_t a[4], const uint32_t b[2]);
template <>
__device__ __forceinline__ void mma16816<__half>(float d[4], const uint32_t a[4], const uint32_t b[2]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
template <>
__device__ __forceinline__ void mma16816<__nv_bfloat16>(float d[4], const uint32_t a[4], const uint32_t b[2]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// ---- Warp-tile GEMM over shared-memory tiles -------------------------------------------------------
// acc[WM x WN] += A[WM x K] * B[K x WN] for one warp. Shared tiles are row-major with a leading
// dimension in elements (a multiple of 8, padded by 8 so the eight 16-byte rows of an ldmatrix hit
// distinct banks). A is stored [m][k] (kAKContig) or [k][m]; B is stored [n][k] (kBKContig) or [k][n];
// the transposed layouts use ldmatrix.trans, so no operand is ever transposed in memory. The
// layouts are template arguments of run(), so one accumulator can sum products of both kinds.
// Accumulator layout (mma.sync's): acc[mt][nt][0,1] at row mt*16 + lane/4, columns nt*8 + 2*(lane%4)
// + {0,1}; acc[mt][nt][2,3] eight rows further down.
template <class T, int WM, int WN>
struct WarpTile {
  static_assert(WM % 16 == 0 && WN % 16 == 0, "warp tiles are multiples of 16x16");
  static constexpr int kMT = WM / 16, kNT = WN / 8;
  float acc[kMT][kNT][4];

  __device__ __forceinline__ void zero() {
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[mt][nt][e] = 0.0f;
  }

  // A 16-row tile's rows scaled: rows lane/4 by lo, rows lane/4 + 8 by hi (the accumulator layout).
  __device__ __forceinline__ void scale_rows(float lo, float hi) {
    static_assert(kMT == 1, "one factor per half of 16 rows");
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt) {
      acc[0][nt][0] *= lo;
      acc[0][nt][1] *= lo;
      acc[0][nt][2] *= hi;
      acc[0][nt][3] *= hi;
    }
  }

  // The accumulators into a row-major f32 tile of `ld` floats per row, the warp's block at (m0, n0):
  // for an epilogue through shared memory or a tile that other warps read.
  __device__ __forceinline__ void store_f32(float* tile, int ld, int m0, int n0) const {
    const int lane = static_cast<int>(threadIdx.x) & 31, gid = lane / 4, tig = lane % 4;
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
        for (int half = 0; half < 2; ++half)
          *reinterpret_cast<float2*>(tile + (m0 + mt * 16 + gid + half * 8) * ld + n0 + nt * 8 + 2 * tig) =
              make_float2(acc[mt][nt][2 * half], acc[mt][nt][2 * half + 1]);
  }

  // K = ksteps * 16 starting at column/row k0 of the tiles; m0, n0: the warp's origin in the tiles.
  template <bool kAKContig, bool kBKContig>
  __device__ __forceinline__ void run(const T* sA, int lda, const T* sB, int ldb, int m0, int n0, int k0, int ksteps) {
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int idx = lane >> 3, r = lane & 7;
    for (int ks = 0; ks < ksteps; ++ks) {
      const int k = k0 + ks * 16;
      uint32_t a[kMT][4], b[kNT][2];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        const int m = m0 + mt * 16;
        if constexpr (kAKContig)
          ldsm_x4(a[mt], sA + (m + r + (idx & 1) * 8) * lda + k + (idx >> 1) * 8);
        else
          ldsm_x4_trans(a[mt], sA + (k + r + (idx >> 1) * 8) * lda + m + (idx & 1) * 8);
      }
#pragma unroll
      for (int np = 0; np < kNT / 2; ++np) {
        const int n = n0 + np * 16;
        uint32_t q[4];
        if constexpr (kBKContig)
          ldsm_x4(q, sB + (n + r + (idx >> 1) * 8) * ldb + k + (idx & 1) * 8);
        else
          ldsm_x4_trans(q, sB + (k + r + (idx & 1) * 8) * ldb + n + (idx >> 1) * 8);
        b[2 * np][0] = q[0], b[2 * np][1] = q[1], b[2 * np + 1][0] = q[2], b[2 * np + 1][1] = q[3];
      }
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt) mma16816<T>(acc[mt][nt], a[mt], b[nt]);
    }
  }

  // acc += A * round_T(diag(w) B) over ksteps 16-deep steps from row k0: B stored [k][n], each of
  // its rows k scaled by w[k] (fp32, shared memory) and rounded to T in registers right after
  // ldmatrix, so a scaled copy of B never goes through shared memory. A stored [k][m].
  __device__ __forceinline__ void run_b_rows_scaled(const T* sA, int lda, const T* sB, int ldb, const float* w, int m0,
                                                    int n0, int k0, int ksteps) {
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int idx = lane >> 3, r = lane & 7, tig = lane & 3;
    for (int ks = 0; ks < ksteps; ++ks) {
      const int k = k0 + ks * 16;
      uint32_t a[kMT][4], b[kNT][2];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
        ldsm_x4_trans(a[mt], sA + (k + r + (idx >> 1) * 8) * lda + m0 + mt * 16 + (idx & 1) * 8);
      // This thread's B registers hold rows k + 2 tig + {0,1} (first) and 8 rows further (second).
      const float2 w_lo = *reinterpret_cast<const float2*>(w + k + 2 * tig);
      const float2 w_hi = *reinterpret_cast<const float2*>(w + k + 8 + 2 * tig);
#pragma unroll
      for (int np = 0; np < kNT / 2; ++np) {
        uint32_t q[4];
        ldsm_x4_trans(q, sB + (k + r + (idx & 1) * 8) * ldb + n0 + np * 16 + (idx >> 1) * 8);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float2 v = Half16<T>::unpack2(q[e]);
          const float2 s = (e & 1) ? w_hi : w_lo;
          q[e] = Half16<T>::pack2(v.x * s.x, v.y * s.y);
        }
        b[2 * np][0] = q[0], b[2 * np][1] = q[1], b[2 * np + 1][0] = q[2], b[2 * np + 1][1] = q[3];
      }
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt) mma16816<T>(acc[mt][nt], a[mt], b[nt]);
    }
  }

  // Where this lane's ldmatrix.trans rows start for B stored [k][n] (ld ldb): the tile's 16-deep
  // step at row k and columns from n0 reads from here (step_a_regs_at).
  __device__ static __forceinline__ const T* lane_rows_kn(const T* sB, int ldb, int k, int n0) {
    const int lane = static_cast<int>(threadIdx.x) & 31, idx = lane >> 3, r = lane & 7;
    return sB + (k + r + (idx & 1) * 8) * ldb + n0 + (idx >> 1) * 8;
  }

  // step_a_regs for B stored [k][n] from the lane's row address (lane_rows_kn), so a loop over k
  // advances one pointer instead of recomputing the lane's offsets.
  __device__ __forceinline__ void step_a_regs_at(const uint32_t a[4], const T* lane_rows) {
    static_assert(kMT == 1, "register A fragments cover 16 rows");
#pragma unroll
    for (int np = 0; np < kNT / 2; ++np) {
      uint32_t q[4];
      ldsm_x4_trans(q, lane_rows + np * 16);
      const uint32_t b0[2] = {q[0], q[1]}, b1[2] = {q[2], q[3]};
      mma16816<T>(acc[0][2 * np], a, b0);
      mma16816<T>(acc[0][2 * np + 1], a, b1);
    }
  }

  // One 16-deep step with the A fragment already in registers (kMT == 1), e.g. probabilities or
  // coefficients computed from an accumulator: acc += a * B[k..k+15][n0..n0+WN).
  template <bool kBKContig>
  __device__ __forceinline__ void step_a_regs(const uint32_t a[4], const T* sB, int ldb, int n0, int k) {
    static_assert(kMT == 1, "register A fragments cover 16 rows");
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int idx = lane >> 3, r = lane & 7;
#pragma unroll
    for (int np = 0; np < kNT / 2; ++np) {
      const int n = n0 + np * 16;
      uint32_t q[4];
      if constexpr (kBKContig)
        ldsm_x4(q, sB + (n + r + (idx >> 1) * 8) * ldb + k + (idx & 1) * 8);
      else
        ldsm_x4_trans(q, sB + (k + r + (idx & 1) * 8) * ldb + n + (idx >> 1) * 8);
      const uint32_t b0[2] = {q[0], q[1]}, b1[2] = {q[2], q[3]};
      mma16816<T>(acc[0][2 * np], a, b0);
      mma16816<T>(acc[0][2 * np + 1], a, b1);
    }
  }
};

}  // namespace ssd_gpu
