// MambaDiscretizeSegsum (SOL-ExecBench L2/044): per (batch, chunk) the Gram matrix G = C B^T of
// each group, per head the stable-segsum decay matrix L, M = G * L (from unrounded fp32 values),
// A_cumsum and decay_states. One block per (batch, chunk, 16 rows i): it holds the steps
// a = -exp(A_log) * softplus(dt) of all heads of the chunk in shared memory, the suffix sums
// base(j) = sum_{m=j+1..i0} a[m] and the row sums sum_{m=i0+1..i} a[m], so every L entry is a sum of
// the steps in (j, i] (never a difference of cumsums). Then, 64 columns at a time, it computes the
// Gram tile (fp32 GEMM over N) and writes G and M with h fastest and L with j fastest (coalesced).
#include "common.cuh"

namespace ssd_gpu {
namespace {

constexpr int kRows = 16;  // rows i per block (kThreads / kRows threads per row of the Gram tile)
constexpr int kCols = 64;  // columns j per pass
constexpr int kStep = 32;  // reduction step over N
constexpr int kColsPerThread = kCols / (kThreads / kRows);

struct DiscretizeParams : Dims {
  In dt, A_log, B, C;
  __nv_bfloat16* L;
  __nv_bfloat16* G;
  __nv_bfloat16* M;
  float* A_cumsum;
  float* decay;
  int64_t heads_per_pass;  // heads whose steps fit in shared memory at once
};

constexpr size_t kStaticShared = sizeof(float) * (kStep * (kRows + 1) + kStep * (kCols + 1) + kRows * (kCols + 1));
// Per-head strides in shared memory are odd, so lanes that walk heads hit distinct banks.
__host__ __device__ inline int64_t head_stride(int64_t Q) { return Q | 1; }
constexpr int kRowStride = kRows + 1;
inline size_t dynamic_shared(int64_t heads, int64_t Q) {
  return sizeof(float) * static_cast<size_t>(heads * (2 * head_stride(Q) + kRowStride));
}

// L[i,j] of one head: 1 on the diagonal, 0 above it, exp(sum of the steps in (j, i]) below it.
__device__ __forceinline__ float decay_entry(const float* steps, const float* base, const float* row_sum, int64_t i0,
                                             int ii, int64_t i, int64_t j) {
  if (j > i) return 0.0f;
  if (j == i) return 1.0f;
  if (j < i0) return expf(base[j] + row_sum[ii]);  // (j, i0] + (i0, i]
  float s = 0.0f;
  for (int64_t m = j + 1; m <= i; ++m) s += steps[m];
  return expf(s);
}

__global__ void __launch_bounds__(kThreads) discretize_segsum_kernel(DiscretizeParams p) {
  extern __shared__ float dynamic[];
  __shared__ float sCt[kStep][kRows + 1];  // C^T [n][i]
  __shared__ float sBt[kStep][kCols + 1];  // B^T [n][j]
  __shared__ float sGram[kRows][kCols + 1];
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / kWarp, lane = tid % kWarp;
  const int64_t Q = p.chunk, H = p.heads, NG = p.groups, N = p.dstate, NC = p.chunks;
  const int64_t heads_per_group = H / NG;
  const int64_t HB = p.heads_per_pass;
  const int64_t QS = head_stride(Q);
  float* steps = dynamic;                  // [HB][QS]
  float* base = dynamic + HB * QS;         // [HB][QS]: sum_{m=j+1..i0} a[m] for j < i0
  float* row_sum = dynamic + 2 * HB * QS;  // [HB][kRowStride]: sum_{m=i0+1..i} a[m]
  const int64_t row_tiles = ceil_div(Q, kRows);
  const int64_t tiles = p.batch * NC * row_tiles;

  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t it = tile % row_tiles;
    const int64_t bc = tile / row_tiles;  // b * NC + c
    const int64_t c = bc % NC, b = bc / NC;
    const int64_t i0 = it * kRows;
    const int rows = static_cast<int>(min(static_cast<int64_t>(kRows), Q - i0));

    for (int64_t hb0 = 0; hb0 < H; hb0 += HB) {
      const int64_t nh = min(HB, H - hb0);
      __syncthreads();  // shared memory is reused across passes and tiles
      const int nh32 = static_cast<int>(nh);  // Q * nh fits in shared memory, so in 32 bits
      for (int e = tid; e < static_cast<int>(Q) * nh32; e += kThreads) {
        const int m = e / nh32, hl = e - m * nh32;
        const int64_t h = hb0 + hl;
        const float A = -expf(load(p.A_log, h));  // softplus only: no bias, no clamp
        steps[hl * QS + m] = A * softplus_thr20(load(p.dt, (bc * Q + m) * H + h));
      }
      __syncthreads();

      for (int64_t hl = warp; hl < nh; hl += kThreads / kWarp) {
        const float* a = steps + hl * QS;
        if (it == 0) {  // A_cumsum and decay_states, once per (b, h, c)
          const int64_t vec = ((b * H + hb0 + hl) * NC + c) * Q;
          float carry = 0.0f;
          for (int64_t m0 = 0; m0 < Q; m0 += kWarp) {
            const int64_t m = m0 + lane;
            const float s = prefix_step(m < Q ? a[m] : 0.0f, carry, Q - 1 - m0);
            if (m < Q) p.A_cumsum[vec + m] = s;
            carry = __shfl_sync(kFullMask, s, kWarp - 1);
          }
          const float total = carry;  // bit-identical to A_cumsum[Q-1], so decay_states[Q-1] = exp(0) = 1
          carry = 0.0f;
          for (int64_t m0 = 0; m0 < Q; m0 += kWarp) {
            const int64_t m = m0 + lane;
            const float s = prefix_step(m < Q ? a[m] : 0.0f, carry, Q - 1 - m0);
            if (m < Q) p.decay[vec + m] = expf(total - s);
            carry = __shfl_sync(kFullMask, s, kWarp - 1);
          }
        }
        // base(j) for j < i0: suffix sums, lane 0 nearest to i0.
        float carry = 0.0f;
        for (int64_t top = i0 - 1; top >= 0; top -= kWarp) {
          const int64_t j = top - lane;
          const float s = warp_inclusive_scan(j >= 0 ? a[j + 1] : 0.0f) + carry;
          if (j >= 0) base[hl * QS + j] = s;
          carry = __shfl_sync(kFullMask, s, kWarp - 1);
        }
      }
      for (int64_t hl = tid; hl < nh; hl += kThreads) {
        float r = 0.0f;
        for (int ii = 0; ii < rows; ++ii) {
          if (ii > 0) r += steps[hl * QS + i0 + ii];
          row_sum[hl * kRowStride + ii] = r;
        }
      }
      __syncthreads();

      const int64_t g_first = hb0 / heads_per_group, g_last = (hb0 + nh - 1) / heads_per_group;
      for (int64_t j0 = 0; j0 < Q; j0 += kCols) {
        const int cols = static_cast<int>(min(static_cast<int64_t>(kCols), Q - j0));
        for (int64_t g = g_first; g <= g_last; ++g) {
          // Gram tile G[i0 + ii, j0 + jj] = sum_n C[i, g, n] B[j, g, n].
          const int ii_own = tid / (kThreads / kRows), jj_own = tid % (kThreads / kRows);
          float acc[kColsPerThread] = {};
          for (int64_t n0 = 0; n0 < N; n0 += kStep) {
            __syncthreads();
            for (int e = tid; e < kRows * kStep; e += kThreads) {
              const int r = e / kStep, kk = e % kStep;
              const int64_t n = n0 + kk;
              sCt[kk][r] = (n < N && r < rows) ? load(p.C, ((bc * Q + i0 + r) * NG + g) * N + n) : 0.0f;
            }
            for (int e = tid; e < kCols * kStep; e += kThreads) {
              const int r = e / kStep, kk = e % kStep;
              const int64_t n = n0 + kk;
              sBt[kk][r] = (n < N && r < cols) ? load(p.B, ((bc * Q + j0 + r) * NG + g) * N + n) : 0.0f;
            }
            __syncthreads();
#pragma unroll 8
            for (int kk = 0; kk < kStep; ++kk) {
              const float cv = sCt[kk][ii_own];
#pragma unroll
              for (int s = 0; s < kColsPerThread; ++s) acc[s] += cv * sBt[kk][jj_own + (kThreads / kRows) * s];
            }
          }
#pragma unroll
          for (int s = 0; s < kColsPerThread; ++s) sGram[ii_own][jj_own + (kThreads / kRows) * s] = acc[s];
          __syncthreads();

          const int64_t h_lo = max(hb0, g * heads_per_group), h_hi = min(hb0 + nh, (g + 1) * heads_per_group);
          const int nhg = static_cast<int>(h_hi - h_lo);  // intra-tile indices stay 32-bit (cheap division)
          // G and M [b,c,i,j,h]: per row i, the run (j0..j0+cols) x (h_lo..h_hi), h fastest.
          for (int ii = 0; ii < rows; ++ii) {
            const int64_t i = i0 + ii;
            const int64_t row_at = ((bc * Q + i) * Q + j0) * H + h_lo;
            for (int e = tid; e < cols * nhg; e += kThreads) {
              const int jj = e / nhg, hh = e - jj * nhg;
              const int64_t j = j0 + jj, hl = h_lo + hh - hb0;
              const float gv = sGram[ii][jj];
              const float lv = decay_entry(steps + hl * QS, base + hl * QS, row_sum + hl * kRowStride, i0, ii, i, j);
              const int64_t at = row_at + static_cast<int64_t>(jj) * H + hh;
              p.G[at] = __float2bfloat16_rn(gv);
              p.M[at] = __float2bfloat16_rn(j > i ? 0.0f : gv * lv);  // upper triangle exactly +0
            }
          }
          // L [b,h,c,i,j]: per head, the rows x cols block, j fastest.
          for (int hh = 0; hh < nhg; ++hh) {
            const int64_t h = h_lo + hh, hl = h - hb0;
            const int64_t block_at = (((b * H + h) * NC + c) * Q + i0) * Q + j0;
            for (int e = tid; e < rows * cols; e += kThreads) {
              const int ii = e / cols, jj = e - ii * cols;
              const int64_t i = i0 + ii, j = j0 + jj;
              const float lv = decay_entry(steps + hl * QS, base + hl * QS, row_sum + hl * kRowStride, i0, ii, i, j);
              p.L[block_at + static_cast<int64_t>(ii) * Q + jj] = __float2bfloat16_rn(lv);
            }
          }
        }
      }
    }
  }
}

}  // namespace

void launch_discretize_segsum(const ssd_discretize_segsum_args& a, const Dims& dims, cudaStream_t stream) {
#ifndef SSD_GPU_REFERENCE_ONLY
  if (launch_discretize_segsum_fast(a, stream)) return;
#endif
  const int64_t Bt = dims.batch, NC = dims.chunks, Q = dims.chunk, H = dims.heads;
  // As many heads per pass as fit in the default 48 KiB; a Q too long for one head opts in to more.
  // (The one argument check made here, not in the entry point: it depends on the device's limit.)
  const size_t per_head = dynamic_shared(1, Q);
  const size_t default_budget = 48 * 1024 - kStaticShared;
  int64_t heads_per_pass = std::min<int64_t>(H, static_cast<int64_t>(default_budget / per_head));
  if (heads_per_pass < 1) {
    int device = 0, optin = 0;
    cuda_check("discretize_segsum", cudaGetDevice(&device), "cudaGetDevice");
    cuda_check("discretize_segsum", cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
               "cudaDeviceGetAttribute");
    if (static_cast<size_t>(optin) < kStaticShared + per_head)
      fail("discretize_segsum", "hidden_states",
           "chunk size Q = " + std::to_string(Q) + " needs " + std::to_string(kStaticShared + per_head) +
               " bytes of shared memory per block; the device allows " + std::to_string(optin),
           SSD_STATUS_UNSUPPORTED);
    heads_per_pass = 1;
  }
  const size_t shared = dynamic_shared(heads_per_pass, Q);
  if (shared > default_budget)
    cuda_check("discretize_segsum",
               cudaFuncSetAttribute(discretize_segsum_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(shared)),
               "cudaFuncSetAttribute");

  DiscretizeParams p{};
  p.dt = in(a.dt);
  p.A_log = in(a.A_log);
  p.B = in(a.B);
  p.C = in(a.C);
  p.L = static_cast<__nv_bfloat16*>(a.L.data);
  p.G = static_cast<__nv_bfloat16*>(a.G.data);
  p.M = static_cast<__nv_bfloat16*>(a.M.data);
  p.A_cumsum = static_cast<float*>(a.A_cumsum.data);
  p.decay = static_cast<float*>(a.decay_states.data);
  static_cast<Dims&>(p) = dims;
  p.heads_per_pass = heads_per_pass;
  discretize_segsum_kernel<<<grid_for(Bt * NC * ceil_div(Q, kRows)), kThreads, shared, stream>>>(p);
  check_launch("discretize_segsum", "discretize_segsum_kernel");
}

}  // namespace ssd_gpu
