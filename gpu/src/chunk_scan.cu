// SSDChunkScanFwd: y = m(t) exp(dA[i]) C_t . prev + sum_{k<=i} round_x(cb[i,k] exp(min(dA[i]-dA[k],0))
// dt[k]) x_k + D x_t, then the z gate. One block per 64x64 (token, p) tile of one (batch, chunk,
// head): two shared-memory tiled fp32 GEMMs into one 4x4 register block per thread, first the
// carried-in term over N (entering states rounded to C's dtype), then the causal term over the
// tokens k <= i (coefficients built on the fly from cb, dA and dt, rounded to x's dtype).
#include "common.cuh"
#include "register_tile.cuh"

namespace ssd_gpu {
namespace {

// register_tile.cuh's 64 x 64 tiles (tokens i, head-dim p), reduced in steps of kStep over n,
// then over tokens k.
using namespace register_tile;  // kTile, kStep, kSub, kPer

__global__ void __launch_bounds__(kThreads) chunk_scan_kernel(ChunkScanParams p) {
  __shared__ float sL[kStep][kTile + 1];  // left operand, transposed: C^T [n][i], then coef^T [k][i]
  __shared__ float sR[kStep][kTile + 1];  // right operand: prev^T [n][p], then x [k][p]
  __shared__ float sRowDA[kTile], sRowScale[kTile];
  __shared__ float sColDA[kStep], sColDt[kStep];
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % kSub, ty = tid / kSub;
  const int64_t Q = p.chunk, H = p.heads, P = p.headdim, G = p.groups, N = p.dstate, S = p.seqlen;
  const int64_t i_tiles = ceil_div(Q, kTile), p_tiles = ceil_div(P, kTile);
  const int64_t tiles = p.batch * p.chunks * H * i_tiles * p_tiles;

  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t p0 = (tile % p_tiles) * kTile;
    const int64_t i0 = ((tile / p_tiles) % i_tiles) * kTile;
    const int64_t h = (tile / (p_tiles * i_tiles)) % H;
    const int64_t c = (tile / (p_tiles * i_tiles * H)) % p.chunks;
    const int64_t b = tile / (p_tiles * i_tiles * H * p.chunks);
    const int64_t t0 = c * Q;
    const int64_t valid = min(Q, S - t0);
    if (i0 >= valid) continue;  // rows in the padded tail: token-major outputs exist only for t < S
    const int64_t g = h / (H / G);
    const int64_t vec = ((b * H + h) * p.chunks + c) * Q;  // [b,h,c,0] of dt and dA

    __syncthreads();  // shared memory is reused across tiles
    if (tid < kTile) {
      const int64_t i = i0 + tid;
      float dA_i = 0.0f, scale = 0.0f;
      if (i < valid) {
        dA_i = load(p.dA, vec + i);
        // The carried-in state reaches token t only if t has the id the previous chunk ended
        // with (0 before the first chunk). cb is taken as given: the causal term is not masked.
        bool carries = true;
        if (p.seq_idx != nullptr) {
          const int32_t* row = p.seq_idx + b * S;
          carries = row[t0 + i] == (c >= 1 ? row[t0 - 1] : 0);
        }
        if (carries) scale = expf(dA_i);  // chunk start -> token i: not clamped
      }
      sRowDA[tid] = dA_i;
      sRowScale[tid] = scale;
    }

    float acc[kPer][kPer] = {};
    // Carried-in term: C_c (rows i) times the entering state prev[b,c,h] (rounded to C's dtype).
    const int64_t prev_base = ((b * p.chunks + c) * H + h) * P;
    for (int64_t n0 = 0; n0 < N; n0 += kStep) {
      __syncthreads();
      for (int e = tid; e < kTile * kStep; e += kThreads) {
        const int r = e / kStep, kk = e % kStep;
        const int64_t n = n0 + kk;
        float cv = 0.0f, sv = 0.0f;
        if (n < N && i0 + r < valid) cv = load(p.C, ((b * S + t0 + i0 + r) * G + g) * N + n);
        if (n < N && p0 + r < P) sv = round_to(p.C.dtype, load(p.states, (prev_base + p0 + r) * N + n));
        sL[kk][r] = cv;
        sR[kk][r] = sv;
      }
      __syncthreads();
      register_tile::multiply_step(acc, sL, sR, ty, tx);
    }
#pragma unroll
    for (int r = 0; r < kPer; ++r)
#pragma unroll
      for (int s = 0; s < kPer; ++s) acc[r][s] *= sRowScale[ty + kSub * r];

    // Causal within-chunk term over tokens k <= i (k < valid).
    const int64_t k_end = min(valid, i0 + kTile);
    const int64_t cb_base = ((b * p.chunks + c) * G + g) * Q;
    for (int64_t k0 = 0; k0 < k_end; k0 += kStep) {
      __syncthreads();
      if (tid < kStep) {
        const int64_t k = k0 + tid;
        sColDA[tid] = k < valid ? load(p.dA, vec + k) : 0.0f;
        sColDt[tid] = k < valid ? load(p.dt, vec + k) : 0.0f;
      }
      __syncthreads();
      for (int e = tid; e < kTile * kStep; e += kThreads) {
        const int r = e / kStep, kk = e % kStep;
        const int64_t i = i0 + r, k = k0 + kk;
        float coef = 0.0f;
        if (i < valid && k <= i)
          coef = round_to(p.x.dtype, load(p.cb, (cb_base + i) * Q + k) * within_chunk_decay(sRowDA[r], sColDA[kk]) *
                                         sColDt[kk]);
        sL[kk][r] = coef;
      }
      for (int e = tid; e < kStep * kTile; e += kThreads) {
        const int kk = e / kTile, col = e % kTile;
        const int64_t k = k0 + kk;
        float xv = 0.0f;
        if (k < valid && p0 + col < P) xv = load(p.x, ((b * S + t0 + k) * H + h) * P + p0 + col);
        sR[kk][col] = xv;
      }
      __syncthreads();
      register_tile::multiply_step(acc, sL, sR, ty, tx);
    }

    // Epilogue: skip term, out_x (before the gate), gate, stores in x's dtype.
#pragma unroll
    for (int r = 0; r < kPer; ++r) {
      const int64_t i = i0 + ty + kSub * r;
      if (i >= valid) continue;
#pragma unroll
      for (int s = 0; s < kPer; ++s) {
        const int64_t pp = p0 + tx + kSub * s;
        if (pp >= P) continue;
        const int64_t at = ((b * S + t0 + i) * H + h) * P + pp;
        float y = acc[r][s];
        if (p.D.p != nullptr) y += load(p.D, p.d_has_hdim ? h * P + pp : h) * load(p.x, at);
        if (p.z.p != nullptr) {
          if (p.out_x.p != nullptr) store(p.out_x, at, y);
          y = gate(y, load(p.z, at));
        }
        store(p.out, at, y);
      }
    }
  }
}

}  // namespace

void launch_chunk_scan(const char* op, const ChunkScanParams& p, cudaStream_t stream) {
#ifndef SSD_GPU_REFERENCE_ONLY
  if (launch_chunk_scan_fast(op, p, stream)) return;
#endif
  const int64_t tiles = p.batch * p.chunks * p.heads * ceil_div(p.chunk, kTile) * ceil_div(p.headdim, kTile);
  chunk_scan_kernel<<<grid_for(tiles), kThreads, 0, stream>>>(p);
  check_launch(op, "chunk_scan_kernel");
}

}  // namespace ssd_gpu
