// SSDChunkStateFwd on tensor cores (x and B both f16 or both bf16): states[b,c,h] = X_c^T * Bw_c,
// Bw[k,n] = round_x(B[k,n] * w[k]). One 256-thread block per 64x128 (p, n) tile of one (batch, chunk,
// head), two blocks per SM. Each of the 8 warps owns 16 n columns of all 64 p over the whole chunk,
// so no warp waits for another's partial sums and the accumulators leave straight from the mma.sync
// layout (8-byte f32 stores, a warp's store covering 8 rows of 32 contiguous bytes). The chunk's x
// and B rows arrive by cp.async in four groups of 64 tokens; the GEMM starts on the first group while
// the others are in flight, and the second resident block covers the remaining barrier and load
// latency (a persistent grid of one block per SM, splitting k between two warpgroups and summing
// through shared memory, was bound by that latency, not by memory). Consecutive blocks are the p
// tiles and heads of one chunk, so a group's B rows come from L2 after its first head.
// B is scaled by w and rounded to x's dtype in registers between ldmatrix and mma
// (WarpTile::run_b_rows_scaled), the same products as scaling it in shared memory.
// In Mamba2Fwd the blocks below early_blocks (the first wave, scheduled while chunk_cumsum drains)
// copy x and B, the call's inputs, before they wait for it, and load dA and dt, its outputs, after;
// the later blocks find it finished and take the order of a standalone call.
#include "common.cuh"
#include "mma.cuh"

namespace ssd_gpu {
namespace {

constexpr int kBM = 64;     // p per tile
constexpr int kBN = 128;    // n per tile (the fast path takes N <= 128)
constexpr int kMaxQ = 256;  // tokens per chunk the shared tiles hold (one per thread for w)
constexpr int kWarps = 8, kBlockThreads = kWarps * 32;
constexpr int kBlocksPerSm = 2;
constexpr int kWarpN = kBN / kWarps;                      // n columns per warp, all kBM p
constexpr int kGroupRows = 64, kGroups = kMaxQ / kGroupRows;  // cp.async groups of tokens
constexpr int kLdX = kBM + 8, kLdB = kBN + 8;
static_assert(kMaxQ == kBlockThreads, "one thread computes the weight of one token");
static_assert(kGroups == 4, "the waits below are written out for four groups");

// Shared memory: B [kMaxQ][kLdB], x [kMaxQ][kLdX], then dA, dt and w [kMaxQ] in f32.
constexpr size_t kBBytes = size_t{kMaxQ} * kLdB * 2, kXBytes = size_t{kMaxQ} * kLdX * 2;
constexpr size_t kVecBytes = 3 * kMaxQ * sizeof(float);
constexpr size_t kSharedBytes = kBBytes + kXBytes + kVecBytes;
// 228 KB of shared memory per sm_90 SM, 1 KB of it reserved per block.
static_assert(kBlocksPerSm * (kSharedBytes + 1024) <= 228 * 1024, "two blocks fit one SM");

__host__ __device__ constexpr int round16(int v) { return (v + 15) / 16 * 16; }

template <class T>
__global__ void __launch_bounds__(kBlockThreads, kBlocksPerSm)
    chunk_state_tc_kernel(ChunkStateParams p, bool vectors_by_copy, unsigned early_blocks) {
  const bool early = blockIdx.x < early_blocks;
  if (!early) wait_previous_grid();
  if (p.stage_of_call) allow_next_grid();  // state_passing, which waits before it reads anything
  vectors_by_copy = vectors_by_copy && !early;
  extern __shared__ uint4 smem[];
  unsigned char* const bytes = reinterpret_cast<unsigned char*>(smem);
  T* const sB = reinterpret_cast<T*>(bytes);             // [k][n] as stored
  T* const sX = reinterpret_cast<T*>(bytes + kBBytes);   // [k][p] as stored
  float* const sDA = reinterpret_cast<float*>(bytes + kBBytes + kXBytes);
  float* const sDt = sDA + kMaxQ;
  float* const sW = sDt + kMaxQ;
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid & 31, gid = lane / 4, tig = lane % 4;
  const int64_t H = p.heads, P = p.headdim, G = p.groups, N = p.dstate, S = p.seqlen;
  const int Q = static_cast<int>(p.chunk);
  // Block -> (batch, chunk, head, p tile), p tiles fastest; the launcher keeps the grid below 2^31,
  // so one 32-bit decode.
  const unsigned p_tiles = static_cast<unsigned>(ceil_div(P, kBM));
  unsigned rest = blockIdx.x;
  const unsigned pt = rest % p_tiles;
  rest /= p_tiles;
  const unsigned hu = rest % static_cast<unsigned>(H);
  rest /= static_cast<unsigned>(H);
  const unsigned cu = rest % static_cast<unsigned>(p.chunks);
  const int64_t b = rest / static_cast<unsigned>(p.chunks), c = cu, h = hu, p0 = int64_t{pt} * kBM;
  const int64_t g = h / (H / G);
  const int64_t t0 = c * Q;
  const int valid = static_cast<int>(min(static_cast<int64_t>(Q), S - t0));  // >= 1
  const int rows = round16(valid);  // K of the GEMM, zero rows past valid
  const int64_t vec = ((b * H + h) * p.chunks + c) * Q;  // [b,h,c,0] of dt and dA

  // Loads whose latency the copies hide, issued before them: this thread's token k = tid of the
  // sequence ids and, where they are not copied, of dA and dt (a load issued after the copies
  // returns after them, and the first multiply waits for w).
  const int k = tid;
  int32_t id_k = 0, id_last = 0;
  float dA_end = 0.0f, dA_k = 0.0f, dt_k = 0.0f;
  if (k < valid) {
    if (p.seq_idx != nullptr) {
      const int32_t* row_ids = p.seq_idx + b * S + t0;
      id_last = row_ids[valid - 1];
      id_k = row_ids[k];
    }
  }
  // In an early block dA and dt are loaded after the copies and the wait.
  const auto load_vectors = [&] {
    if (k < valid) dA_end = load(p.dA, vec + Q - 1), dA_k = load(p.dA, vec + k), dt_k = load(p.dt, vec + k);
  };
  if (!vectors_by_copy && !early) load_vectors();

  // Group 0: dA and dt where they are f32 rows of 16-byte multiples (threads 0..63 dA, 64..127 dt,
  // Q / 4 <= 64 vectors each). Groups j: x and B rows [64 j, 64 j + 64), zeros past the valid
  // tokens. A group wholly past them holds no copy (the GEMM stops before it) but is committed all
  // the same, so the wait counts are fixed.
  if (vectors_by_copy && tid < 2 * (kMaxQ / 4)) {
    const int which = tid / (kMaxQ / 4), k = (tid % (kMaxQ / 4)) * 4;
    if (k < Q) cp_async16((which == 0 ? sDA : sDt) + k, static_cast<const float*>(which == 0 ? p.dA.p : p.dt.p) + vec + k, true);
  }
  {
    const T* const x = static_cast<const T*>(p.x.p) + ((b * S + t0) * H + h) * P + p0;
    const T* const B = static_cast<const T*>(p.B.p) + ((b * S + t0) * G + g) * N;
    const int64_t ld_x = H * P, ld_b = G * N;
#pragma unroll
    for (int j = 0; j < kGroups; ++j) {
      const int k0 = j * kGroupRows;
      if (k0 < valid) {
        copy_tile_async<kGroupRows, kBM, kBlockThreads>(sX + k0 * kLdX, kLdX, x + k0 * ld_x, ld_x, valid - k0,
                                                        static_cast<int>(P - p0));
        copy_tile_async<kGroupRows, kBN, kBlockThreads>(sB + k0 * kLdB, kLdB, B + k0 * ld_b, ld_b, valid - k0,
                                                        static_cast<int>(N));
      }
      cp_async_commit();
    }
  }
  if (early) {
    wait_previous_grid();
    load_vectors();
  }

  // w[k] = exp(min(dA[Q-1] - dA[k], 0)) dt[k] for this thread's token k = tid where it enters the
  // state: it is valid and of the sequence active at the chunk's last valid token (none if that is
  // padding). 0 otherwise, rows past valid included, so those products are zeros as before.
  const bool token_valid = k < valid;
  bool token_in = token_valid;
  if (token_valid && p.seq_idx != nullptr) token_in = id_last >= 0 && id_k == id_last;
  if (!vectors_by_copy) sW[k] = token_in ? within_chunk_decay(dA_end, dA_k) * dt_k : 0.0f;  // dA read at Q-1
  cp_async_wait<kGroups - 1>();  // group 0 has landed (this thread's copies)
  __syncthreads();               // ... every thread's, and w where it was loaded
  if (vectors_by_copy) {
    sW[k] = token_in ? within_chunk_decay(sDA[Q - 1], sDA[k]) * sDt[k] : 0.0f;
    __syncthreads();
  }

  const int wn = warp * kWarpN;
  const bool warp_in = wn < N;  // a warp wholly past N computes nothing it would store
  WarpTile<T, kBM, kWarpN> wt;
  wt.zero();
  const auto multiply = [&](int j) {  // the 16-deep steps of group j below rows
    const int k0 = j * kGroupRows, steps = min(kGroupRows, rows - k0) / 16;
    if (!warp_in) return;
    if (steps == kGroupRows / 16)  // a whole group: a fixed trip count, unrolled
      wt.run_b_rows_scaled(sX, kLdX, sB, kLdB, sW, 0, wn, k0, kGroupRows / 16);
    else
      wt.run_b_rows_scaled(sX, kLdX, sB, kLdB, sW, 0, wn, k0, steps);
  };
  // Group j has copies only where rows > 64 j, so every copy is waited for before the block ends.
  multiply(0);
  if (rows > 1 * kGroupRows) {
    cp_async_wait<2>();
    __syncthreads();
    multiply(1);
  }
  if (rows > 2 * kGroupRows) {
    cp_async_wait<1>();
    __syncthreads();
    multiply(2);
  }
  if (rows > 3 * kGroupRows) {
    cp_async_wait<0>();
    __syncthreads();
    multiply(3);
  }

  // Straight from the accumulators: rows mt*16 + gid (+8), n at wn + nt*8 + 2 tig. P - p0 and N are
  // multiples of 8, so each (mt, half, nt) store is all in or all out for the warp.
  if (warp_in) {
    const int64_t at = (((b * p.chunks + c) * H + h) * P + p0) * N + wn + 2 * tig;
#pragma unroll
    for (int mt = 0; mt < kBM / 16; ++mt)
#pragma unroll
      for (int hi = 0; hi < 2; ++hi) {
        const int r = mt * 16 + hi * 8;
        if (p0 + r >= P) continue;
#pragma unroll
        for (int nt = 0; nt < kWarpN / 8; ++nt)
          if (wn + nt * 8 < N)
            store2(p.states, at + (r + gid) * N + nt * 8, wt.acc[mt][nt][2 * hi], wt.acc[mt][nt][2 * hi + 1]);
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
  const bool vectors_by_copy = p.dA.dtype == SSD_DTYPE_F32 && p.dt.dtype == SSD_DTYPE_F32 && p.chunk % 4 == 0 &&
                               aligned16(p.dA.p) && aligned16(p.dt.p);
  const unsigned early_blocks = p.stage_of_call ? static_cast<unsigned>(kBlocksPerSm * multiprocessors(op)) : 0;
  const auto kernel = dt == SSD_DTYPE_F16 ? chunk_state_tc_kernel<__half> : chunk_state_tc_kernel<__nv_bfloat16>;
  cuda_check(op, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSharedBytes)),
             "cudaFuncSetAttribute(chunk_state_tc_kernel)");
  launch_kernel(op, "launch of chunk_state_tc_kernel", kernel, static_cast<unsigned>(tiles), kBlockThreads, kSharedBytes,
                stream, p, vectors_by_copy, early_blocks);
  check_launch(op, "chunk_state_tc_kernel");
  return true;
}

}  // namespace ssd_gpu
