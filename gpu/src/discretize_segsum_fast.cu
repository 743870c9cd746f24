// MambaDiscretizeSegsum for 16-bit B and C: one block per 16 x 64 (i, j) tile of a (batch, chunk)
// with every head, so it owns whole 16-byte runs of L (j fastest) and of G and M (h fastest). The
// Gram tile runs on tensor cores; the per-head cumsum is computed once per block in shared memory,
// and L = exp(cumsum_i - cumsum_j) (the bounds admit a difference of cumsums). The kernel writes
// ~6 MB per chunk and reads ~0.3 MB, so everything serves the stores: streaming 16-byte stores,
// L staged in shared memory as bf16 (M needs the unrounded value in the thread that has h fastest).
// Store-bound blocks need many of them resident: the B and C rows come in two K halves through one
// half-width operand tile (the second half's copy waits behind the cumsum), and the raw dt sits in
// the tile region beside it, so the workloads' shape (N = 256, H = 16, 16-bit dt) takes 54,848 bytes
// and 4 blocks fit an SM instead of 3. The staged L rows are swizzled by 16-byte chunk per head octet,
// so the lanes of one column but different heads store to different banks.
// Tiles wholly above the diagonal skip the cumsum, and copy both K halves at once into the tile
// and cumsum regions they leave free. Every output value is computed as before (same operations
// in the same order); only where operands, dt and the staged L sit, and which blocks scan dt, differ.
#include "common.cuh"
#include "discretize_segsum_layout.h"
#include "mma.cuh"

namespace ssd_gpu {
namespace {

using discretize_segsum_layout::kGramLd;
using discretize_segsum_layout::kMinBlocks;
using discretize_segsum_layout::kTI;
using discretize_segsum_layout::kTJ;
using discretize_segsum_layout::Layout;

static_assert(discretize_segsum_layout::kThreads == kThreads, "the plan counts the block's threads");
constexpr int kGemmWarps = kTJ / 16;  // warps of 16 x 16 that compute the Gram tile
constexpr int64_t kMaxN = 256;        // B and C rows of the tile: at most two halves of 128

struct FastParams {
  In dt, A_log;
  const void* B;  // [b,c,Q,g,n], f16 or bf16 (the template type)
  const void* C;
  __nv_bfloat16* L;
  __nv_bfloat16* G;
  __nv_bfloat16* M;
  float* A_cumsum;
  float* decay;
  int chunks, chunk, heads, groups, dstate;
  int row_tiles, col_tiles;
};

// The 16-byte chunk swizzle of head h's staged L rows: chunk c of a row lives at c ^ l_swizzle(h).
// The lanes of one G/M store share a column run and differ in h / 8 (the head octet), so octet o
// is moved by o * (the chunks one octet's 32 / hvec lanes span, ceil(4 / hvec), a power of 2).
__device__ __forceinline__ int l_swizzle(int h, int swz_shift) { return ((h >> 3) << swz_shift) & 7; }

// 16-byte copies of columns [k0, k0 + kw) of `rows` rows of one group's B or C into a [rows][ldk]
// tile; rows past Q and columns past N are zero-filled.
template <class T>
__device__ __forceinline__ void copy_rows(T* dst, int ldk, const T* src, int64_t row0, int rows, int valid_rows,
                                          int G, int N, int k0, int kw) {
  const int vecs = kw / 8;
  for (int e = static_cast<int>(threadIdx.x); e < rows * vecs; e += kThreads) {
    const int r = e / vecs, col = (e - r * vecs) * 8;
    const bool inside = r < valid_rows && k0 + col < N;
    cp_async16(dst + r * ldk + col, inside ? src + ((row0 + r) * G) * N + k0 + col : src, inside);
  }
}

// The raw dt of the chunk's first lmax tokens (token-major, every head) by 16-byte copies, so the
// cumsum waits for one round trip instead of one per token.
__device__ __forceinline__ void copy_dt(unsigned char* raw, const FastParams& p, int64_t bc, int lmax, int dt_bytes) {
  const int64_t row = static_cast<int64_t>(p.chunk) * p.heads * dt_bytes;  // bytes per (b, c)
  const unsigned char* src = static_cast<const unsigned char*>(p.dt.p) + bc * row;
  const int vecs = lmax * p.heads * dt_bytes / 16;  // H % 8 == 0: whole vectors
  for (int e = static_cast<int>(threadIdx.x); e < vecs; e += kThreads) cp_async16(raw + 16 * e, src + 16 * e, true);
}

// cs[l][h] = sum_{m<=l} A_h * softplus(dt[m,h]) for l < lmax, h fastest, from the raw dt tile.
// Thread (s, h) owns the fixed segment s of Q / (kThreads / H) tokens, so every block sums in the
// same order and its prefix agrees bit for bit with the block that writes A_cumsum.
__device__ void chunk_cumsum_shared(const FastParams& p, const unsigned char* raw, int lmax, float* cs, float* part) {
  const int H = p.heads, Q = p.chunk, tid = static_cast<int>(threadIdx.x);
  const float* A = part + kThreads;
  // No bias, no clamp. The head of element e = l * H + h is carried (e grows by kThreads), and the
  // stored dtype is a template argument: a division and a dtype switch per element were 15% of
  // the kernel's instructions.
  const auto softplus_all = [&](auto stored) {
    using D = decltype(stored);
    const D* values = reinterpret_cast<const D*>(raw);
    const int h_step = kThreads % H;
    int h = tid % H;
    for (int e = tid; e < lmax * H; e += kThreads) {
      cs[e] = A[h] * softplus_thr20(to_f32(values[e]));
      h += h_step;
      if (h >= H) h -= H;
    }
  };
  if (p.dt.dtype == SSD_DTYPE_F32)
    softplus_all(float{});
  else if (p.dt.dtype == SSD_DTYPE_F16)
    softplus_all(__half{});
  else
    softplus_all(__nv_bfloat16{});
  __syncthreads();
  const int segs = kThreads / H, seg_len = (Q + segs - 1) / segs;
  const int h = tid % H, s = tid / H;
  const bool owner = s < segs;
  const int lo = s * seg_len, hi = min(lmax, lo + seg_len);
  if (owner) {
    float sum = 0.0f;
    for (int l = lo; l < hi; ++l) sum += cs[l * H + h];
    part[s * H + h] = sum;
  }
  __syncthreads();
  if (owner && lo < hi) {
    float run = 0.0f;
    for (int r = 0; r < s; ++r) run += part[r * H + h];
    for (int l = lo; l < hi; ++l) {
      run += cs[l * H + h];
      cs[l * H + h] = run;
    }
  }
}

// Eight fp32 values rounded to nearest even into bf16, packed for one 16-byte store: one
// conversion per pair (cvt.rn.bf16x2) where pack8 converts one value at a time; the same bits.
__device__ __forceinline__ uint4 pack8_pairs(const float v[8]) {
  using H = Half16<__nv_bfloat16>;
  return make_uint4(H::pack2(v[0], v[1]), H::pack2(v[2], v[3]), H::pack2(v[4], v[5]), H::pack2(v[6], v[7]));
}

template <class T>
__global__ void __launch_bounds__(kThreads, kMinBlocks) discretize_segsum_fast_kernel(FastParams p) {
  wait_previous_grid();
  extern __shared__ __align__(16) unsigned char smem[];
  const int Q = p.chunk, H = p.heads, G = p.groups, N = p.dstate;
  const int dt_bytes = p.dt.dtype == SSD_DTYPE_F32 ? 4 : 2;
  const Layout lay(Q, H, G, N, dt_bytes);
  T* sC = reinterpret_cast<T*>(smem);
  T* sB = sC + kTI * lay.ldk;
  unsigned char* raw = smem + lay.operands;                     // beside the operands, until the cumsum
  __nv_bfloat16* sL = reinterpret_cast<__nv_bfloat16*>(smem);  // [h][ii][jj swizzled], after the GEMMs
  float* sGram = reinterpret_cast<float*>(smem + lay.tiles);   // [g][ii][kGramLd]
  float* cs = reinterpret_cast<float*>(smem + lay.tiles + lay.gram);
  float* part = reinterpret_cast<float*>(smem + lay.tiles + lay.gram + lay.cs);

  const int tid = static_cast<int>(threadIdx.x), warp = tid / kWarp, lane = tid % kWarp;
  int tile = static_cast<int>(blockIdx.x);
  const int jt = tile % p.col_tiles;
  tile /= p.col_tiles;
  const int it = tile % p.row_tiles;
  const int64_t bc = tile / p.row_tiles;  // b * NC + c
  const int i0 = it * kTI, j0 = jt * kTJ;
  const int rows = min(kTI, Q - i0), cols = min(kTJ, Q - j0);
  const bool writes_vectors = it == 0 && jt == 0;  // A_cumsum and decay_states of the chunk
  // L and M need the cumsum only where j < i <= i0 + rows - 1.
  // Tiles with no j < i (j0 >= i0 + rows - 1: 24 of a 256-token chunk's 64) never read the cumsum:
  // lmax = 0 skips the dt copy and the softplus scan (lmax doubles as the flag: no extra register).
  const int lmax = writes_vectors ? Q : j0 + 1 < i0 + rows ? i0 + rows : 0;
  const int k_rest = lay.nk - lay.k_half;  // the second K half's width
  const T* Cg = static_cast<const T*>(p.C) + bc * Q * G * N;
  const T* Bg = static_cast<const T*>(p.B) + bc * Q * G * N;
  const int heads_per_group = H / G;

  // A tile that skips the cumsum has its regions free: the second half's C rows go after the first
  // half's B rows and its B rows into cs (and part), so both halves are copied in one round trip.
  const bool both_halves = lmax == 0 && k_rest > 0 &&
                           sizeof(T) * (2 * kTI + kTJ) * lay.ldk <= lay.tiles &&
                           sizeof(T) * kTJ * lay.ldk <= lay.cs + lay.part;
  T* sC2 = both_halves ? sB + kTJ * lay.ldk : sC;
  T* sB2 = both_halves ? reinterpret_cast<T*>(cs) : sB;

  for (int g = 0; g < G; ++g) {
    if (g > 0) __syncthreads();  // the previous group's operands are consumed
    copy_rows(sC, lay.ldk, Cg + g * N, i0, kTI, rows, G, N, 0, lay.k_half);
    copy_rows(sB, lay.ldk, Bg + g * N, j0, kTJ, cols, G, N, 0, lay.k_half);
    if (g == 0 && lmax > 0) copy_dt(raw, p, bc, lmax, dt_bytes);
    if (both_halves) {
      copy_rows(sC2, lay.ldk, Cg + g * N, i0, kTI, rows, G, N, lay.k_half, k_rest);
      copy_rows(sB2, lay.ldk, Bg + g * N, j0, kTJ, cols, G, N, lay.k_half, k_rest);
    }
    cp_async_commit();
    if (g == 0 && lmax > 0 && tid < H) part[kThreads + tid] = -expf(load(p.A_log, tid));  // overlaps the copies
    cp_async_wait<0>();
    __syncthreads();
    // The accumulators carry over the halves, so the k-steps run in the order of one full-K pass.
    WarpTile<T, 16, 16> wt;
    wt.zero();
    if (warp < kGemmWarps) wt.template run<true, true>(sC, lay.ldk, sB, lay.ldk, 0, warp * 16, 0, lay.k_half / 16);
    if (k_rest > 0 && !both_halves) {
      __syncthreads();  // the first half is consumed
      copy_rows(sC2, lay.ldk, Cg + g * N, i0, kTI, rows, G, N, lay.k_half, k_rest);
      copy_rows(sB2, lay.ldk, Bg + g * N, j0, kTJ, cols, G, N, lay.k_half, k_rest);
      cp_async_commit();
    }
    if (g == 0 && lmax > 0) chunk_cumsum_shared(p, raw, lmax, cs, part);  // hides the second half's round trip
    if (k_rest > 0) {
      if (!both_halves) {
        cp_async_wait<0>();
        __syncthreads();
      }
      if (warp < kGemmWarps) wt.template run<true, true>(sC2, lay.ldk, sB2, lay.ldk, 0, warp * 16, 0, k_rest / 16);
    }
    if (warp < kGemmWarps) {
      float* gram = sGram + g * kTI * kGramLd;
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int r = lane / 4 + half * 8, col = warp * 16 + nt * 8 + 2 * (lane % 4);
          *reinterpret_cast<float2*>(gram + r * kGramLd + col) =
              make_float2(wt.acc[0][nt][2 * half], wt.acc[0][nt][2 * half + 1]);
        }
    }
  }
  __syncthreads();  // Gram tiles and cumsum complete; the operand tiles are free for sL

  if (writes_vectors) {
    for (int e = tid; e < Q * H; e += kThreads) {
      const int h = e / Q, l = e - h * Q;
      const int64_t at = (((bc / p.chunks) * H + h) * p.chunks + bc % p.chunks) * Q + l;
      p.A_cumsum[at] = cs[l * H + h];
      p.decay[at] = expf(cs[(Q - 1) * H + h] - cs[l * H + h]);  // exactly 1 at l = Q-1
    }
  }

  // G and M [b,c,i,j,h]: per row i a contiguous run of cols * H values; 8 heads of one j per vector.
  // Vector v = tid + k * kThreads is (ii, jj, hv), advanced with carries: the loop is issue-bound,
  // and divisions by the runtime extents would cost more than the exponentials.
  const int hvec = H / 8, row_vecs = cols * hvec;
  const int step_ii = kThreads / row_vecs, step_rem = kThreads - step_ii * row_vecs;
  const int step_jj = step_rem / hvec, step_hv = step_rem - step_jj * hvec;
  const bool one_group = heads_per_group % 8 == 0;  // the 8 heads of a vector share one Gram value
  const int swz_shift = hvec == 1 ? 2 : hvec <= 3 ? 1 : 0;  // log2 ceil(4 / hvec), see l_swizzle
  int ii = tid / row_vecs, jj = (tid - ii * row_vecs) / hvec, hv = tid - ii * row_vecs - jj * hvec;
  // The offset of (i, j, h0) in G and M, walked with the indices: + 8 per hv, + H per jj, + Q H per ii.
  int64_t at = ((bc * Q + i0 + ii) * Q + j0 + jj) * H + hv * 8;
  const int64_t row_step = static_cast<int64_t>(Q) * H;
  while (ii < rows) {
    const int h0 = hv * 8, i = i0 + ii, j = j0 + jj;
    float gv[8], lv[8];
    if (one_group) {
      const float gram = sGram[((G == 1 ? 0 : h0 / heads_per_group) * kTI + ii) * kGramLd + jj];
#pragma unroll
      for (int e = 0; e < 8; ++e) gv[e] = gram;
    } else {
      int g = h0 / heads_per_group, in_group = h0 - g * heads_per_group;  // walked, not divided, per head
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        gv[e] = sGram[(g * kTI + ii) * kGramLd + jj];
        if (++in_group == heads_per_group) in_group = 0, ++g;
      }
    }
    if (j < i) {
      const float4* ci = reinterpret_cast<const float4*>(cs + i * H + h0);
      const float4* cj = reinterpret_cast<const float4*>(cs + j * H + h0);
      const float4 a0 = ci[0], a1 = ci[1], b0 = cj[0], b1 = cj[1];
      const float di[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float dj[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
      // exp(d) as exp2(d log2 e): the product rounds relative to the (small) difference, not to
      // the cumsums, so it stays inside the exponent error the bounds charge (cs_i + cs_j).
#pragma unroll
      for (int e = 0; e < 8; ++e) lv[e] = exp2f((di[e] - dj[e]) * kLog2e);  // <= 0: the cumsum never rises
    } else {
#pragma unroll
      for (int e = 0; e < 8; ++e) lv[e] = j == i ? 1.0f : 0.0f;
    }
    float mv[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) mv[e] = j > i ? 0.0f : gv[e] * lv[e];  // upper triangle exactly +0
    // L rounded two at a time (one conversion per pair), stored as halves at the swizzled column.
    __nv_bfloat16* l_at = sL + (h0 * kTI + ii) * kTJ + (jj ^ (l_swizzle(h0, swz_shift) * 8));
#pragma unroll
    for (int e = 0; e < 8; e += 2) {
      const __nv_bfloat162 pair = __floats2bfloat162_rn(lv[e], lv[e + 1]);
      l_at[e * kTI * kTJ] = __low2bfloat16(pair);
      l_at[(e + 1) * kTI * kTJ] = __high2bfloat16(pair);
    }
    if (one_group) {  // eight copies of one rounded Gram value: one conversion
      const __nv_bfloat162 g2 = __float2bfloat162_rn(gv[0]);
      const uint32_t w = *reinterpret_cast<const uint32_t*>(&g2);
      __stcs(reinterpret_cast<uint4*>(p.G + at), make_uint4(w, w, w, w));
    } else {
      __stcs(reinterpret_cast<uint4*>(p.G + at), pack8_pairs(gv));
    }
    __stcs(reinterpret_cast<uint4*>(p.M + at), pack8_pairs(mv));
    hv += step_hv, at += 8 * step_hv;
    if (hv >= hvec) hv -= hvec, ++jj, at += H - 8 * hvec;
    jj += step_jj, at += static_cast<int64_t>(step_jj) * H;
    if (jj >= cols) jj -= cols, ++ii, at += row_step - static_cast<int64_t>(cols) * H;
    ii += step_ii, at += step_ii * row_step;
  }
  __syncthreads();

  // L [b,h,c,i,j]: per (h, i) a run of cols values; (h, ii, jv) advanced like (ii, jj, hv) above.
  const int col_vecs = cols / 8;
  const int64_t b = bc / p.chunks, c = bc % p.chunks;
  const int step_t = kThreads / col_vecs, step_jv = kThreads - step_t * col_vecs;
  const int step_h = step_t / rows, step_r = step_t - step_h * rows;
  int jv = tid % col_vecs, r = (tid / col_vecs) % rows, h = tid / col_vecs / rows;
  // The offset of (h, i0 + r, j0 + 8 jv) in L, walked with the indices: + 8 per jv, + Q per r, + NC Q Q per h.
  const int64_t head_step = static_cast<int64_t>(p.chunks) * Q * Q;
  int64_t at_L = (((b * H + h) * p.chunks + c) * Q + i0 + r) * Q + j0 + jv * 8;
  while (h < H) {
    const uint4 val = *reinterpret_cast<const uint4*>(sL + (h * kTI + r) * kTJ + (jv ^ l_swizzle(h, swz_shift)) * 8);
    __stcs(reinterpret_cast<uint4*>(p.L + at_L), val);
    jv += step_jv, at_L += 8 * step_jv;
    if (jv >= col_vecs) jv -= col_vecs, ++r, at_L += Q - 8 * col_vecs;
    r += step_r, at_L += static_cast<int64_t>(step_r) * Q;
    if (r >= rows) r -= rows, ++h, at_L += head_step - static_cast<int64_t>(rows) * Q;
    h += step_h, at_L += step_h * head_step;
  }
}

template <class T>
void launch(const FastParams& p, size_t shared, unsigned blocks, cudaStream_t stream) {
  if (shared > 48 * 1024)
    cuda_check("discretize_segsum",
               cudaFuncSetAttribute(discretize_segsum_fast_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(shared)),
               "cudaFuncSetAttribute");
  // The whole unified memory as shared memory, so the 4 blocks of ~55 KB the register budget allows fit.
  cuda_check("discretize_segsum",
             cudaFuncSetAttribute(discretize_segsum_fast_kernel<T>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxShared),
             "cudaFuncSetAttribute(carveout)");
  launch_kernel("discretize_segsum", "launch of discretize_segsum_fast_kernel", discretize_segsum_fast_kernel<T>, blocks,
                kThreads, shared, stream, p);
  check_launch("discretize_segsum", "discretize_segsum_fast_kernel");
}

}  // namespace

bool launch_discretize_segsum_fast(const ssd_discretize_segsum_args& a, cudaStream_t stream) {
  const int32_t dtype = a.B.dtype;
  if (a.C.dtype != dtype || (dtype != SSD_DTYPE_F16 && dtype != SSD_DTYPE_BF16)) return false;
  const int64_t Bt = a.B.shape[0], NC = a.B.shape[1], Q = a.B.shape[2], G = a.B.shape[3], N = a.B.shape[4];
  const int64_t H = a.A_log.shape[0];
  // 16-byte runs: N, Q and H multiples of 8 (so no vector straddles a row or a tensor edge).
  if (N % 8 != 0 || N > kMaxN || Q % 8 != 0 || H % 8 != 0 || H > kThreads) return false;
  for (const void* ptr : {a.B.data, a.C.data, a.L.data, a.G.data, a.M.data})
    if (!aligned16(ptr)) return false;
  if (!aligned16(a.dt.data)) return false;
  const Layout lay(static_cast<int>(Q), static_cast<int>(H), static_cast<int>(G), static_cast<int>(N),
                   a.dt.dtype == SSD_DTYPE_F32 ? 4 : 2);
  if (lay.total > 160 * 1024) return false;  // keep at least one block of every shape resident
  const int64_t row_tiles = ceil_div(Q, kTI), col_tiles = ceil_div(Q, kTJ);
  const int64_t blocks = Bt * NC * row_tiles * col_tiles;
  if (blocks > 0x7fffffff || Bt * NC * Q * Q * H > (int64_t{1} << 62)) return false;

  FastParams p{};
  p.dt = in(a.dt);
  p.A_log = in(a.A_log);
  p.B = a.B.data;
  p.C = a.C.data;
  p.L = static_cast<__nv_bfloat16*>(a.L.data);
  p.G = static_cast<__nv_bfloat16*>(a.G.data);
  p.M = static_cast<__nv_bfloat16*>(a.M.data);
  p.A_cumsum = static_cast<float*>(a.A_cumsum.data);
  p.decay = static_cast<float*>(a.decay_states.data);
  p.chunks = static_cast<int>(NC);
  p.chunk = static_cast<int>(Q);
  p.heads = static_cast<int>(H);
  p.groups = static_cast<int>(G);
  p.dstate = static_cast<int>(N);
  p.row_tiles = static_cast<int>(row_tiles);
  p.col_tiles = static_cast<int>(col_tiles);
  if (blocks == 0) return true;
  if (dtype == SSD_DTYPE_F16)
    launch<__half>(p, lay.total, static_cast<unsigned>(blocks), stream);
  else
    launch<__nv_bfloat16>(p, lay.total, static_cast<unsigned>(blocks), stream);
  return true;
}

}  // namespace ssd_gpu
