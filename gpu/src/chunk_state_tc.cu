// SSDChunkStateFwd on tensor cores (x and B both f16 or both bf16): states[b,c,h] = X_c^T * Bw_c,
// Bw[k,n] = round_x(B[k,n] * w[k]). A persistent grid, one block per SM: each block walks a run of
// consecutive 64x128 (p, n) tiles of one (batch, chunk, group), heads in order, so the chunk's raw
// B tile is copied once per block instead of once per head. The x tiles of the next kStages - 1
// heads are in flight by cp.async while one multiplies: the per-head work is small (a 64x128x256
// GEMM) and a single tile in flight per SM leaves the memory system idle for most of a round trip.
// B is scaled by w and rounded to x's dtype in registers between ldmatrix and mma
// (WarpTile::run_b_rows_scaled), the same products as scaling it in shared memory. Two warpgroups
// of 8 warps split the tokens k of a tile (each warp owns 16 n columns of all 64 p, so no row is
// scaled twice) and add their halves through shared memory, which also makes the state stores
// 16 bytes wide. docs/performance.md has the measured steps and what bounds the kernel now.
#include <algorithm>

#include "common.cuh"
#include "mma.cuh"

namespace ssd_gpu {
namespace {

constexpr int kBM = 64;     // p per tile
constexpr int kBN = 128;    // n per tile (the fast path takes N <= 128)
constexpr int kMaxQ = 256;  // tokens per chunk the shared tiles hold (one per thread for w)
constexpr int kStages = 3;  // x tiles in shared memory: the one in use and kStages - 1 in flight
constexpr int kGroupWarps = 8, kBlockThreads = 2 * kGroupWarps * 32;  // two warpgroups split k
constexpr int kWarpN = kBN / kGroupWarps;                              // n columns per warp
constexpr int kLdX = kBM + 8, kLdB = kBN + 8, kLdSum = kBN + 4;
static_assert(kMaxQ <= kBlockThreads, "one thread computes the weight of one token");

// Shared memory: B [kMaxQ][kLdB]; the f32 sum tile [kBM][kLdSum]; per stage x [kMaxQ][kLdX], then
// dA, dt and w [kMaxQ] in f32.
constexpr size_t kBBytes = size_t{kMaxQ} * kLdB * 2, kSumBytes = size_t{kBM} * kLdSum * sizeof(float);
constexpr size_t kXBytes = size_t{kMaxQ} * kLdX * 2, kVecBytes = 3 * kMaxQ * sizeof(float);
constexpr size_t kStageBytes = kXBytes + kVecBytes;
constexpr size_t kSharedBytes = kBBytes + kSumBytes + kStages * kStageBytes;
static_assert(kSharedBytes <= 227 * 1024, "fits the opt-in shared memory of an sm_90 block");

__host__ __device__ constexpr int64_t round16(int64_t v) { return (v + 15) / 16 * 16; }

// A tile of a group's run and where it lies: its head and first p. Runs are walked one tile at a
// time (next), so only the first tile of a run costs a division.
struct TileAt {
  int tile;
  int64_t h, p0;
  __device__ void next(int64_t P) {
    ++tile;
    p0 += kBM;
    if (p0 >= P) p0 = 0, ++h;
  }
};

template <class T>
__global__ void __launch_bounds__(kBlockThreads, 1)
    chunk_state_tc_kernel(ChunkStateParams p, int run, int runs_per_group, bool vectors_by_copy) {
  extern __shared__ uint4 smem[];
  unsigned char* const bytes = reinterpret_cast<unsigned char*>(smem);
  T* const sB = reinterpret_cast<T*>(bytes);                     // [k][n] as stored
  float* const sSum = reinterpret_cast<float*>(bytes + kBBytes);  // [p][n]
  unsigned char* const stages = bytes + kBBytes + kSumBytes;
  const auto sX = [&](int s) { return reinterpret_cast<T*>(stages + s * kStageBytes); };  // [k][p]
  const auto sVec = [&](int s, int which) {  // 0: dA, 1: dt, 2: w
    return reinterpret_cast<float*>(stages + s * kStageBytes + kXBytes) + which * kMaxQ;
  };
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32;
  const int64_t H = p.heads, P = p.headdim, G = p.groups, N = p.dstate, S = p.seqlen;
  const int Q = static_cast<int>(p.chunk);
  // Block -> (batch, chunk, group) and its run [first, last) of the group's tiles (head, p tile).
  const int p_tiles = static_cast<int>(ceil_div(P, kBM)), group_tiles = static_cast<int>(H / G) * p_tiles;
  const int64_t bcg = blockIdx.x / runs_per_group;
  const int first = static_cast<int>(blockIdx.x % runs_per_group) * run, last = min(group_tiles, first + run);
  if (first >= last) return;
  const int64_t g = bcg % G, c = (bcg / G) % p.chunks, b = bcg / (G * p.chunks);
  const int64_t t0 = c * Q;
  const int valid = static_cast<int>(min(static_cast<int64_t>(Q), S - t0));
  const int rows = static_cast<int>(round16(valid));  // K of the GEMM, zero rows past valid
  const TileAt first_at{first, g * (H / G) + first / p_tiles, static_cast<int64_t>(first % p_tiles) * kBM};
  const auto vec_of = [&](const TileAt& t) { return ((b * H + t.h) * p.chunks + c) * Q; };  // [b,h,c,0]
  // Whether this thread's token k = tid enters the state: it is valid and of the sequence active at
  // the chunk's last valid token (none if that is padding). The same for every tile of the block.
  bool token_in = tid < valid;
  if (token_in && p.seq_idx != nullptr) {
    const int32_t* row_ids = p.seq_idx + b * S + t0;
    token_in = row_ids[valid - 1] >= 0 && row_ids[tid] == row_ids[valid - 1];
  }

  const T* x = static_cast<const T*>(p.x.p);

  // Copies of the next tile to issue into stage s: its x rows (zeros past the valid tokens), and dA
  // and dt where they are f32 rows of 16-byte multiples. Always one commit group, empty past the
  // run, so the wait counts are fixed.
  TileAt issued = first_at;
  const auto issue = [&](int s) {
    if (issued.tile < last) {
      const TileAt& t = issued;
      copy_tile_async<kMaxQ, kBM, kBlockThreads>(sX(s), kLdX, x + ((b * S + t0) * H + t.h) * P + t.p0, H * P, valid,
                                                 static_cast<int>(P - t.p0));
      // dA by threads 0..63, dt by 64..127: Q / 4 <= 64 vectors each.
      if (vectors_by_copy && tid < 2 * (kMaxQ / 4)) {
        const int which = tid / (kMaxQ / 4), k = (tid % (kMaxQ / 4)) * 4;
        if (k < Q) cp_async16(sVec(s, which) + k, static_cast<const float*>(which == 0 ? p.dA.p : p.dt.p) + vec_of(t) + k, true);
      }
      issued.next(P);
    }
    cp_async_commit();
  };

  // Group 0 also holds the raw B tile of the (batch, chunk, group).
  {
    const T* B = static_cast<const T*>(p.B.p);
    copy_tile_async<kMaxQ, kBN, kBlockThreads>(sB, kLdB, B + ((b * S + t0) * G + g) * N, G * N, valid,
                                               static_cast<int>(N));
  }
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) issue(s);

  const int lane = tid & 31, gid = lane / 4, tig = lane % 4, wn = (warp % kGroupWarps) * kWarpN;
  const int half = warp / kGroupWarps;  // warpgroup 0 takes the first k steps, 1 the rest
  const int steps = rows / 16, first_step = half == 0 ? 0 : (steps + 1) / 2;
  const int my_steps = half == 0 ? (steps + 1) / 2 : steps / 2;
  // This thread's state stores: 4 n from store_n of rows store_row + i * kStoreRowStep.
  constexpr int kStoreRowStep = kBlockThreads / (kBN / 4), kStorePasses = kBM / kStoreRowStep;
  const int store_n = (tid % (kBN / 4)) * 4, store_row = tid / (kBN / 4);
  int s = 0;  // the stage of tile t
  for (TileAt t = first_at; t.tile < last; t.next(P), s = s + 1 == kStages ? 0 : s + 1) {
    cp_async_wait<kStages - 2>();  // this tile's group has landed (for this thread's copies)
    __syncthreads();               // ... for every thread's; and stage (s - 1) is free
    issue(s == 0 ? kStages - 1 : s - 1);  // tile t + kStages - 1

    // w[k] = exp(min(dA[Q-1] - dA[k], 0)) dt[k] for this thread's token k = tid where it enters.
    if (tid < kMaxQ) {
      const int k = tid;
      float w = 0.0f;
      if (token_in) {
        float dA_end, dA_k, dt_k;
        if (vectors_by_copy) {
          dA_end = sVec(s, 0)[Q - 1], dA_k = sVec(s, 0)[k], dt_k = sVec(s, 1)[k];
        } else {
          const int64_t vec = vec_of(t);
          dA_end = load(p.dA, vec + Q - 1), dA_k = load(p.dA, vec + k), dt_k = load(p.dt, vec + k);
        }
        w = within_chunk_decay(dA_end, dA_k) * dt_k;  // dA read at Q-1, as the kernels do
      }
      sVec(s, 2)[k] = w;
    }
    __syncthreads();

    WarpTile<T, kBM, kWarpN> wt;
    wt.zero();
    wt.run_b_rows_scaled(sX(s), kLdX, sB, kLdB, sVec(s, 2), 0, wn, first_step * 16, my_steps);

    // The two halves meet in the f32 tile: warpgroup 1 writes, warpgroup 0 adds. Its last readers
    // (the previous tile's stores) finished before this tile's first barrier.
    const auto visit = [&](auto&& f) {
#pragma unroll
      for (int mt = 0; mt < kBM / 16; ++mt)
#pragma unroll
        for (int hi = 0; hi < 2; ++hi)
#pragma unroll
          for (int nt = 0; nt < kWarpN / 8; ++nt)
            f(reinterpret_cast<float2*>(sSum + (mt * 16 + gid + hi * 8) * kLdSum + wn + nt * 8 + tig * 2),
              wt.acc[mt][nt][2 * hi], wt.acc[mt][nt][2 * hi + 1]);
    };
    if (half == 1) visit([](float2* at, float a, float b) { *at = make_float2(a, b); });
    __syncthreads();
    if (half == 0) visit([](float2* at, float a, float b) { *at = make_float2(a + at->x, b + at->y); });
    __syncthreads();

    // Rows of 128 n leave as 16-byte vectors of f32 (8 bytes of a 16-bit dtype), a row per 32 threads.
    if (store_n < N) {  // N is a multiple of 8: all four or none
      const int64_t at = (((b * p.chunks + c) * H + t.h) * P + t.p0 + store_row) * N + store_n;
#pragma unroll
      for (int i = 0; i < kStorePasses; ++i) {
        const int r = store_row + i * kStoreRowStep;
        if (t.p0 + r < P)
          store4(p.states, at + i * kStoreRowStep * N, *reinterpret_cast<const float4*>(sSum + r * kLdSum + store_n));
      }
    }
  }
  cp_async_wait<0>();  // no copy outlives the block
}

}  // namespace

bool launch_chunk_state_fast(const char* op, const ChunkStateParams& p, cudaStream_t stream) {
  const int32_t dt = p.x.dtype;
  if (p.B.dtype != dt || (dt != SSD_DTYPE_F16 && dt != SSD_DTYPE_BF16)) return false;
  if (p.headdim % 8 != 0 || p.dstate % 8 != 0 || p.dstate > kBN || p.chunk > kMaxQ) return false;
  if (!aligned16(p.x.p) || !aligned16(p.B.p) || !aligned16(p.states.p)) return false;
  const int64_t groups = p.batch * p.chunks * p.groups;
  const int64_t group_tiles = p.heads / p.groups * ceil_div(p.headdim, kBM);
  // About one block per SM: runs of equal length within each (batch, chunk, group).
  const int64_t run = std::min(group_tiles, std::max<int64_t>(1, ceil_div(groups * group_tiles, multiprocessors(op))));
  const int64_t runs_per_group = ceil_div(group_tiles, run);
  if (group_tiles > 0x7fffffff || groups * runs_per_group > 0x7fffffff) return false;
  const bool vectors_by_copy = p.dA.dtype == SSD_DTYPE_F32 && p.dt.dtype == SSD_DTYPE_F32 && p.chunk % 4 == 0 &&
                               aligned16(p.dA.p) && aligned16(p.dt.p);
  const auto kernel = dt == SSD_DTYPE_F16 ? chunk_state_tc_kernel<__half> : chunk_state_tc_kernel<__nv_bfloat16>;
  cuda_check(op, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSharedBytes)),
             "cudaFuncSetAttribute(chunk_state_tc_kernel)");
  kernel<<<static_cast<unsigned>(groups * runs_per_group), kBlockThreads, kSharedBytes, stream>>>(
      p, static_cast<int>(run), static_cast<int>(runs_per_group), vectors_by_copy);
  check_launch(op, "chunk_state_tc_kernel");
  return true;
}

}  // namespace ssd_gpu
