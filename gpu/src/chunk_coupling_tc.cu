// SSDChunkCouplingFwd on tensor cores (C and B of one dtype, f16 or bf16: no operand rounding).
// One block per 64x64 tile of one (batch, chunk, group) Q x Q matrix, 8 warps of 16x32. The C and B
// row tiles (N <= 128) arrive by cp.async in one round trip, then mma.sync over all of N. Zero tail,
// seq mask and causal skip exactly as in the fp32 kernel.
#include "common.cuh"
#include "mma.cuh"

namespace ssd_gpu {
namespace {

constexpr int kBT = 64;  // output tile edge (i and j)
constexpr int kMaxN = 128;  // the fast path takes N <= 128: whole rows in shared memory
constexpr int kLd = kMaxN + 8;

template <class T>
__global__ void __launch_bounds__(kThreads) chunk_coupling_tc_kernel(CouplingParams p) {
  __shared__ alignas(16) T sC[kBT * kLd];  // [i][n]
  __shared__ alignas(16) T sB[kBT * kLd];  // [j][n]
  __shared__ int32_t sRowId[kBT], sColId[kBT];
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32;
  const int64_t Q = p.chunk, N = p.dstate, G = p.groups, side = ceil_div(Q, kBT);
  int64_t tile = blockIdx.x;
  const int64_t j0 = (tile % side) * kBT;
  tile /= side;
  const int64_t i0 = (tile % side) * kBT;
  tile /= side;
  const int64_t g = tile % G;
  tile /= G;
  const int64_t c = tile % p.chunks, b = tile / p.chunks;
  // Causal: a tile whose every entry has j > i is undefined upstream and never written.
  if (p.causal && j0 > i0 + kBT - 1) return;
  const int64_t t0 = c * Q, valid = min(Q, p.seqlen - t0);
  const T* Cp = static_cast<const T*>(p.C.p);
  const T* Bp = static_cast<const T*>(p.B.p);

  if (p.seq_idx != nullptr && tid < 2 * kBT) {
    const int64_t r = tid % kBT;
    const int64_t token = (tid < kBT ? i0 : j0) + r;
    const int32_t id = token < valid ? p.seq_idx[b * p.seqlen + t0 + token] : 0;
    (tid < kBT ? sRowId : sColId)[r] = id;
  }

  WarpTile<T, 16, 32> wt;
  wt.zero();
  const int wm = (warp / 2) * 16, wn = (warp % 2) * 32;
  if (i0 < valid && j0 < valid) {  // otherwise the tile lies in the zero tail
    const int64_t row_base = (b * p.seqlen + t0) * G + g;  // token-major row of token t0
    const int nk = static_cast<int>((N + 15) / 16 * 16);   // K of the GEMM, zero columns past N
    for (int e = tid; e < kBT * (nk / 8); e += kThreads) {
      const int r = e / (nk / 8), col = (e % (nk / 8)) * 8;
      const bool in_c = col < N && i0 + r < valid, in_b = col < N && j0 + r < valid;
      cp_async16(sC + r * kLd + col, in_c ? Cp + (row_base + (i0 + r) * G) * N + col : Cp, in_c);
      cp_async16(sB + r * kLd + col, in_b ? Bp + (row_base + (j0 + r) * G) * N + col : Bp, in_b);
    }
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
    wt.template run<true, true>(sC, kLd, sB, kLd, wm, wn, 0, nk / 16);
  }
  __syncthreads();  // the seq ids are visible

  const int lane = tid & 31, gid = lane / 4, tig = lane % 4;
  const int64_t out_base = ((b * p.chunks + c) * G + g) * Q;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int ri = wm + gid + half * 8;
    const int64_t i = i0 + ri;
    if (i >= Q) continue;
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) {
      const int cj = wn + nt * 8 + tig * 2;
      const int64_t j = j0 + cj;
      if (j >= Q) continue;  // j + 1 < Q too: Q is a multiple of 8
      float v[2];
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        v[e] = (i < valid && j + e < valid) ? wt.acc[0][nt][2 * half + e] : 0.0f;
        if (p.seq_idx != nullptr && sRowId[ri] != sColId[cj + e]) v[e] = 0.0f;
      }
      store2(p.CB, (out_base + i) * Q + j, v[0], v[1]);
    }
  }
}

}  // namespace

bool launch_chunk_coupling_fast(const char* op, const CouplingParams& p, cudaStream_t stream) {
  const int32_t dt = p.C.dtype;
  if (p.B.dtype != dt || (dt != SSD_DTYPE_F16 && dt != SSD_DTYPE_BF16)) return false;
  if (p.dstate % 8 != 0 || p.dstate > kMaxN || p.chunk % 8 != 0) return false;
  if (!aligned16(p.C.p) || !aligned16(p.B.p) || !aligned16(p.CB.p)) return false;
  const int64_t side = ceil_div(p.chunk, kBT);
  const int64_t tiles = p.batch * p.chunks * p.groups * side * side;
  if (tiles > 0x7fffffff) return false;
  if (dt == SSD_DTYPE_F16)
    chunk_coupling_tc_kernel<__half><<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(p);
  else
    chunk_coupling_tc_kernel<__nv_bfloat16><<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(p);
  check_launch(op, "chunk_coupling_tc_kernel");
  return true;
}

}  // namespace ssd_gpu
