// SSDChunkStateFwd: states[b,c,h] = X_c^T * diag(w) * B_c, w[k] = exp(min(dA[Q-1] - dA[k], 0)) * dt[k]
// (seq-masked). One block per 64x64 (p, n) tile of one (batch, chunk, head): a shared-memory tiled
// fp32 GEMM over the chunk's valid tokens in steps of 32, each thread owning a 4x4 register block.
// The scaled B*w is rounded to x's dtype before the product (the contract's rounding point).
#include "common.cuh"
#include "register_tile.cuh"

namespace ssd_gpu {
namespace {

// register_tile.cuh's 64 x 64 tiles (p, n), reduced over the tokens in steps of kStep.
using namespace register_tile;  // kTile, kStep, kSub, kPer

__global__ void __launch_bounds__(kThreads) chunk_state_kernel(ChunkStateParams p) {
  __shared__ float sX[kStep][kTile];  // [k][p]
  __shared__ float sB[kStep][kTile];  // [k][n], already scaled by w and rounded
  __shared__ float sW[kStep];
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % kSub, ty = tid / kSub;
  const int64_t Q = p.chunk, H = p.heads, P = p.headdim, G = p.groups, N = p.dstate;
  const int64_t p_tiles = ceil_div(P, kTile), n_tiles = ceil_div(N, kTile);
  const int64_t tiles = p.batch * p.chunks * H * p_tiles * n_tiles;

  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t n0 = (tile % n_tiles) * kTile;
    const int64_t p0 = ((tile / n_tiles) % p_tiles) * kTile;
    const int64_t h = (tile / (n_tiles * p_tiles)) % H;
    const int64_t c = (tile / (n_tiles * p_tiles * H)) % p.chunks;
    const int64_t b = tile / (n_tiles * p_tiles * H * p.chunks);
    const int64_t g = h / (H / G);
    const int64_t t0 = c * Q;
    const int64_t valid = min(Q, p.seqlen - t0);
    const int64_t vec = ((b * H + h) * p.chunks + c) * Q;  // [b,h,c,0] of dt and dA
    const float dA_end = load(p.dA, vec + Q - 1);          // read at Q-1, as the kernels do
    const int32_t* row_ids = p.seq_idx != nullptr ? p.seq_idx + b * p.seqlen + t0 : nullptr;
    const int32_t last_id = row_ids != nullptr ? row_ids[valid - 1] : 0;

    float acc[kPer][kPer] = {};
    for (int64_t k0 = 0; k0 < valid; k0 += kStep) {
      __syncthreads();
      if (tid < kStep) {
        const int64_t k = k0 + tid;
        float w = 0.0f;
        // Only tokens of the sequence active at the chunk's last valid token; none if it is padding.
        const bool same = row_ids == nullptr || (k < valid && last_id >= 0 && row_ids[k] == last_id);
        if (k < valid && same) w = within_chunk_decay(dA_end, load(p.dA, vec + k)) * load(p.dt, vec + k);
        sW[tid] = w;
      }
      __syncthreads();
      for (int e = tid; e < kStep * kTile; e += kThreads) {
        const int kk = e / kTile, col = e % kTile;
        const int64_t k = k0 + kk, t = t0 + k;
        float xv = 0.0f, bv = 0.0f;
        if (k < valid && p0 + col < P) xv = load(p.x, ((b * p.seqlen + t) * H + h) * P + p0 + col);
        if (k < valid && n0 + col < N) bv = round_to(p.x.dtype, load(p.B, ((b * p.seqlen + t) * G + g) * N + n0 + col) * sW[kk]);
        sX[kk][col] = xv;
        sB[kk][col] = bv;
      }
      __syncthreads();
      register_tile::multiply_step(acc, sX, sB, ty, tx);
    }

    const int64_t out_base = ((b * p.chunks + c) * H + h) * P;
#pragma unroll
    for (int r = 0; r < kPer; ++r) {
      const int64_t pp = p0 + ty + kSub * r;
      if (pp >= P) continue;
#pragma unroll
      for (int s = 0; s < kPer; ++s) {
        const int64_t n = n0 + tx + kSub * s;
        if (n < N) store(p.states, (out_base + pp) * N + n, acc[r][s]);
      }
    }
  }
}

}  // namespace

void launch_chunk_state(const char* op, const ChunkStateParams& p, cudaStream_t stream) {
#ifndef SSD_GPU_REFERENCE_ONLY
  if (launch_chunk_state_fast(op, p, stream)) return;
#endif
  const int64_t tiles = p.batch * p.chunks * p.heads * ceil_div(p.headdim, kTile) * ceil_div(p.dstate, kTile);
  chunk_state_kernel<<<grid_for(tiles), kThreads, 0, stream>>>(p);
  check_launch(op, "chunk_state_kernel");
}

}  // namespace ssd_gpu
