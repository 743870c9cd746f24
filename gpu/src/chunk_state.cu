// SSDChunkStateFwd: states[b,c,h] = X_c^T * diag(w) * B_c, w[k] = exp(min(dA[Q-1] - dA[k], 0)) * dt[k]
// (seq-masked). One block per 64x64 (p, n) tile of one (batch, chunk, head): a shared-memory tiled
// fp32 GEMM over the chunk's valid tokens in steps of 32, each thread owning a 4x4 register block.
// The scaled B*w is rounded to x's dtype before the product (the contract's rounding point).
#include "common.cuh"

namespace ssd_gpu {
namespace {

constexpr int kTile = 64;  // p and n tile edge
constexpr int kStep = 32;  // tokens per reduction step
constexpr int kSub = 16;
constexpr int kPer = kTile / kSub;

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
#pragma unroll 8
      for (int kk = 0; kk < kStep; ++kk) {
        float a[kPer], bb[kPer];
#pragma unroll
        for (int r = 0; r < kPer; ++r) a[r] = sX[kk][ty + kSub * r];
#pragma unroll
        for (int s = 0; s < kPer; ++s) bb[s] = sB[kk][tx + kSub * s];
#pragma unroll
        for (int r = 0; r < kPer; ++r)
#pragma unroll
          for (int s = 0; s < kPer; ++s) acc[r][s] += a[r] * bb[s];
      }
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

ssd_status chunk_state(const ssd_chunk_state_args* args) {
  return guarded("chunk_state", args, [&] {
    const ssd_chunk_state_args& a = *args;
    const Check k{"chunk_state"};
    k.float_input("x", a.x);
    k.float_input("B", a.B);
    const TokenDims d = k.token_major(a.x, "B", a.B);
    // Q is not an argument of this op: it is the last extent of dt.
    k.float_input("dt", a.dt);
    const Shape ds = k.extents("dt", a.dt, 4, "[Bt,H,NC,Q]");
    k.positive("chunk_size", ds[3]);
    const int64_t Q = ds[3], NC = ceil_div(d.seqlen, Q);
    const Shape chunk_major{d.batch, d.heads, NC, Q};
    k.shape("dt", a.dt, chunk_major, "[Bt,H,NC,Q]");
    k.float_input("dA_cumsum", a.dA_cumsum);
    k.shape("dA_cumsum", a.dA_cumsum, chunk_major, "[Bt,H,NC,Q]");
    if (present(a.seq_idx)) k.seq_idx(a.seq_idx, d.batch, d.seqlen);
    k.output("states", a.states, {d.batch, NC, d.heads, d.headdim, d.dstate}, "[Bt,NC,H,P,N]",
             {SSD_DTYPE_F32, SSD_DTYPE_F16, SSD_DTYPE_BF16}, "a floating-point dtype (f32 by default)");
    k.contiguous("x", a.x);
    k.contiguous("B", a.B);
    k.contiguous("dt", a.dt);
    k.contiguous("dA_cumsum", a.dA_cumsum);
    if (present(a.seq_idx)) k.contiguous("seq_idx", a.seq_idx);
    k.contiguous("states", a.states);

    ChunkStateParams p{};
    p.B = in(a.B);
    p.x = in(a.x);
    p.dt = in(a.dt);
    p.dA = in(a.dA_cumsum);
    p.seq_idx = ids(a.seq_idx);
    p.states = out(a.states);
    p.batch = d.batch;
    p.seqlen = d.seqlen;
    p.heads = d.heads;
    p.headdim = d.headdim;
    p.groups = d.groups;
    p.dstate = d.dstate;
    p.chunk = Q;
    p.chunks = NC;
    launch_chunk_state("chunk_state", p, stream_of(a.stream));
  });
}

}  // namespace ssd_gpu
