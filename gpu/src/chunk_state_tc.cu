// SSDChunkStateFwd on tensor cores (x and B both f16 or both bf16): states[b,c,h] = X_c^T * Bw_c,
// Bw[k,n] = round_x(B[k,n] * w[k]). One block per 64x128 (p, n) tile of one (batch, chunk, head),
// the whole head for P = 64, N <= 128, so x is read once. The block issues the cp.async copies of
// the chunk's whole x and B tiles (up to 256 tokens) at once, computes the weights while they fly,
// scales B in shared memory, then runs the GEMM: one memory round trip per block, two blocks per SM.
#include "common.cuh"
#include "mma.cuh"

namespace ssd_gpu {
namespace {

constexpr int kBM = 64;     // p per tile
constexpr int kBN = 128;    // n per tile (the fast path takes N <= 128)
constexpr int kMaxQ = 256;  // tokens per chunk the shared tiles hold
constexpr int kLdX = kBM + 8, kLdB = kBN + 8;

__host__ __device__ constexpr int64_t round16(int64_t v) { return (v + 15) / 16 * 16; }
inline size_t shared_bytes(int64_t Q) {
  return static_cast<size_t>(round16(Q)) * ((kLdX + kLdB) * 2 + sizeof(float));
}

template <class T>
__global__ void __launch_bounds__(kThreads, 2) chunk_state_tc_kernel(ChunkStateParams p) {
  extern __shared__ uint4 smem[];
  const int64_t Q = p.chunk, H = p.heads, P = p.headdim, G = p.groups, N = p.dstate, S = p.seqlen;
  T* sX = reinterpret_cast<T*>(smem);  // [k][p]
  T* sB = sX + round16(Q) * kLdX;      // [k][n], then scaled by w and rounded to x's dtype
  float* sW = reinterpret_cast<float*>(sB + round16(Q) * kLdB);
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32;
  const int64_t p_tiles = ceil_div(P, kBM);
  int64_t tile = blockIdx.x;
  const int64_t p0 = (tile % p_tiles) * kBM;
  tile /= p_tiles;
  const int64_t h = tile % H;
  tile /= H;
  const int64_t c = tile % p.chunks, b = tile / p.chunks;
  const int64_t g = h / (H / G), t0 = c * Q, valid = min(Q, S - t0);
  const int rows = static_cast<int>(round16(valid));  // K of the GEMM, zero rows past valid
  const T* x = static_cast<const T*>(p.x.p);
  const T* B = static_cast<const T*>(p.B.p);

  // Each thread copies one 16-byte column chunk of every 32nd x row and every 16th B row.
  {
    const int col = (tid % (kBM / 8)) * 8;
    const bool col_in = p0 + col < P;
    const T* src = x + ((b * S + t0) * H + h) * P + p0 + col;
    const int64_t stride = H * P;
    for (int r = tid / (kBM / 8); r < rows; r += kThreads / (kBM / 8)) {
      const bool in = r < valid && col_in;
      cp_async16(sX + r * kLdX + col, in ? src + r * stride : x, in);
    }
  }
  {
    const int col = (tid % (kBN / 8)) * 8;
    const bool col_in = col < N;
    const T* src = B + ((b * S + t0) * G + g) * N + col;
    const int64_t stride = G * N;
    for (int r = tid / (kBN / 8); r < rows; r += kThreads / (kBN / 8)) {
      const bool in = r < valid && col_in;
      cp_async16(sB + r * kLdB + col, in ? src + r * stride : B, in);
    }
  }
  cp_async_commit();

  // Weights while the copies fly: w[k] = exp(min(dA[Q-1] - dA[k], 0)) dt[k], only for tokens of the
  // sequence active at the chunk's last valid token (none if it is padding).
  const int64_t vec = ((b * H + h) * p.chunks + c) * Q;  // [b,h,c,0] of dt and dA
  const float dA_end = load(p.dA, vec + Q - 1);          // read at Q-1, as the kernels do
  const int32_t* row_ids = p.seq_idx != nullptr ? p.seq_idx + b * S + t0 : nullptr;
  const int32_t last_id = row_ids != nullptr ? row_ids[valid - 1] : 0;
  for (int k = tid; k < valid; k += kThreads) {
    const bool same = row_ids == nullptr || (last_id >= 0 && row_ids[k] == last_id);
    sW[k] = same ? within_chunk_decay(dA_end, load(p.dA, vec + k)) * load(p.dt, vec + k) : 0.0f;
  }
  cp_async_wait<0>();
  __syncthreads();
  {
    const int col = (tid % (kBN / 8)) * 8;
    if (col < N) {
#pragma unroll 4
      for (int r = tid / (kBN / 8); r < valid; r += kThreads / (kBN / 8)) {
        uint4 q = *reinterpret_cast<const uint4*>(sB + r * kLdB + col);
        const float w = sW[r];
        uint32_t* u = reinterpret_cast<uint32_t*>(&q);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float2 v = Half16<T>::unpack2(u[e]);
          u[e] = Half16<T>::pack2(v.x * w, v.y * w);  // B * w rounded to x's dtype
        }
        *reinterpret_cast<uint4*>(sB + r * kLdB + col) = q;
      }
    }
  }
  __syncthreads();

  WarpTile<T, 32, 32> wt;
  wt.zero();
  const int wm = (warp / 4) * 32, wn = (warp % 4) * 32;
  wt.template run<false, false>(sX, kLdX, sB, kLdB, wm, wn, 0, rows / 16);

  const int lane = tid & 31, gid = lane / 4, tig = lane % 4;
  const int64_t out_base = ((b * p.chunks + c) * H + h) * P;
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int64_t pp = p0 + wm + mt * 16 + gid + half * 8;
      if (pp >= P) continue;
#pragma unroll
      for (int nt = 0; nt < 4; ++nt) {
        const int64_t n = wn + nt * 8 + tig * 2;
        if (n < N) store2(p.states, (out_base + pp) * N + n, wt.acc[mt][nt][2 * half], wt.acc[mt][nt][2 * half + 1]);
      }
    }
}

}  // namespace

bool launch_chunk_state_fast(const char* op, const ChunkStateParams& p, cudaStream_t stream) {
  const int32_t dt = p.x.dtype;
  if (p.B.dtype != dt || (dt != SSD_DTYPE_F16 && dt != SSD_DTYPE_BF16)) return false;
  if (p.headdim % 8 != 0 || p.dstate % 8 != 0 || p.dstate > kBN || p.chunk > kMaxQ) return false;
  if (!aligned16(p.x.p) || !aligned16(p.B.p) || !aligned16(p.states.p)) return false;
  const int64_t tiles = p.batch * p.chunks * p.heads * ceil_div(p.headdim, kBM);
  if (tiles > 0x7fffffff) return false;
  const size_t smem = shared_bytes(p.chunk);
  const auto kernel = dt == SSD_DTYPE_F16 ? chunk_state_tc_kernel<__half> : chunk_state_tc_kernel<__nv_bfloat16>;
  cuda_check(op, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
             "cudaFuncSetAttribute(chunk_state_tc_kernel)");
  kernel<<<static_cast<unsigned>(tiles), kThreads, smem, stream>>>(p);
  check_launch(op, "chunk_state_tc_kernel");
  return true;
}

}  // namespace ssd_gpu
