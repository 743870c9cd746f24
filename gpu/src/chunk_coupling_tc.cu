// SSDChunkCouplingFwd on tensor cores (C and B of one dtype, f16 or bf16: no operand rounding).
// One block per square tile (64 or 128 on a side) of one (batch, chunk, group) Q x Q matrix, 8
// warps. The C and B row tiles (N <= 128) arrive by cp.async in one round trip, then mma.sync over
// all of N. Zero tail, seq mask and causal skip exactly as in the fp32 kernel. Large grids take
// 128-wide tiles, which read each row of C and B from L2 half as often as 64-wide ones.
#include "common.cuh"
#include "mma.cuh"

namespace ssd_gpu {
namespace {

constexpr int kMaxN = 128;  // the fast path takes N <= 128: whole rows in shared memory
constexpr int kLd = kMaxN + 8;

// The warp grid of a kTile x kTile output tile: 8 warps of kWM x kWN each.
template <int kTile>
struct CouplingTile {
  static constexpr int kWarpsI = kTile == 64 ? 4 : 2, kWarpsJ = 8 / kWarpsI;
  static constexpr int kWM = kTile / kWarpsI, kWN = kTile / kWarpsJ;
  static constexpr int kLdOut = kTile + 8;  // f32 staging rows: float2 stores of 4 rows x 4 lanes hit distinct banks
  static constexpr size_t kOperandBytes = 2 * static_cast<size_t>(kTile) * kLd * 2;  // C and B tiles of T
  static constexpr size_t kStagingBytes = static_cast<size_t>(kTile) * kLdOut * sizeof(float);
  static constexpr size_t kBytes = (kOperandBytes > kStagingBytes ? kOperandBytes : kStagingBytes) +
                                   2 * kTile * sizeof(int32_t);
};

// In Mamba2Fwd (stage_of_call) CB reads only the call's inputs, so it runs while state_passing
// drains, and waits for it at exit (whichever return), so that the scan's wait for CB covers the
// states too.
struct WaitPreviousAtExit {
  __device__ ~WaitPreviousAtExit() { wait_previous_grid(); }
};

template <class T, int kTile>
__global__ void __launch_bounds__(kThreads) chunk_coupling_tc_kernel(CouplingParams p) {
  if (p.stage_of_call)
    allow_next_grid();  // the scan's first wave copies its inputs meanwhile
  else
    wait_previous_grid();
  const WaitPreviousAtExit wait_at_exit;
  using Tile = CouplingTile<kTile>;
  extern __shared__ uint4 smem[];
  T* const sC = reinterpret_cast<T*>(smem);  // [i][n]
  T* const sB = sC + kTile * kLd;             // [j][n]
  int32_t* const sRowId = reinterpret_cast<int32_t*>(reinterpret_cast<char*>(smem) + Tile::kBytes) - 2 * kTile;
  int32_t* const sColId = sRowId + kTile;
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32;
  const int64_t Q = p.chunk, N = p.dstate, G = p.groups, side = ceil_div(Q, kTile);
  int64_t tile = blockIdx.x;
  const int64_t j0 = (tile % side) * kTile;
  tile /= side;
  const int64_t i0 = (tile % side) * kTile;
  tile /= side;
  const int64_t g = tile % G;
  tile /= G;
  const int64_t c = tile % p.chunks, b = tile / p.chunks;
  // Causal: a tile whose every entry has j > i is undefined upstream and never written.
  if (p.causal && j0 > i0 + kTile - 1) return;
  const int64_t t0 = c * Q, valid = min(Q, p.seqlen - t0);
  const T* Cp = static_cast<const T*>(p.C.p);
  const T* Bp = static_cast<const T*>(p.B.p);

  if (p.seq_idx != nullptr) {
    for (int e = tid; e < 2 * kTile; e += kThreads) {
      const int64_t r = e % kTile;
      const int64_t token = (e < kTile ? i0 : j0) + r;
      const int32_t id = token < valid ? p.seq_idx[b * p.seqlen + t0 + token] : 0;
      (e < kTile ? sRowId : sColId)[r] = id;
    }
  }

  WarpTile<T, Tile::kWM, Tile::kWN> wt;
  wt.zero();
  const int wm = (warp / Tile::kWarpsJ) * Tile::kWM, wn = (warp % Tile::kWarpsJ) * Tile::kWN;
  if (i0 < valid && j0 < valid) {  // otherwise the tile lies in the zero tail
    const int64_t row_base = (b * p.seqlen + t0) * G + g;  // token-major row of token t0
    const int nk = static_cast<int>((N + 15) / 16 * 16);   // K of the GEMM, zero columns past N
    const int n_in = static_cast<int>(N);
    copy_tile_async<kTile, kMaxN, kThreads>(sC, kLd, Cp + (row_base + i0 * G) * N, G * N, static_cast<int>(valid - i0), n_in);
    copy_tile_async<kTile, kMaxN, kThreads>(sB, kLd, Bp + (row_base + j0 * G) * N, G * N, static_cast<int>(valid - j0), n_in);
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
    wt.template run<true, true>(sC, kLd, sB, kLd, wm, wn, 0, nk / 16);
  }
  __syncthreads();  // the operand tiles are free; the seq ids are visible

  // Epilogue through an f32 tile over the operands: each thread masks and stores 8 consecutive j
  // of a row at once, so a warp writes whole rows with 16-byte stores.
  float* const sOut = reinterpret_cast<float*>(smem);
  wt.store_f32(sOut, Tile::kLdOut, wm, wn);
  __syncthreads();
  // Thread t stores the 8 j from out_col of rows out_row + i * kRowStep of the tile.
  constexpr int kVecs = kTile / 8, kRowStep = kThreads / kVecs;
  const int out_col = (tid % kVecs) * 8, out_row = tid / kVecs;
  const int64_t j = j0 + out_col;
  if (j >= Q) return;  // Q is a multiple of 8: all 8 columns or none
  const int32_t* col_ids = sColId + out_col;
  int64_t at = ((((b * p.chunks + c) * G + g) * Q) + i0 + out_row) * Q + j;
#pragma unroll 2
  for (int r = out_row; r < kTile; r += kRowStep, at += kRowStep * Q) {
    const int64_t i = i0 + r;
    if (i >= Q) break;
    float v[8];
    const float4 lo = *reinterpret_cast<const float4*>(sOut + r * Tile::kLdOut + out_col);
    const float4 hi = *reinterpret_cast<const float4*>(sOut + r * Tile::kLdOut + out_col + 4);
    v[0] = lo.x, v[1] = lo.y, v[2] = lo.z, v[3] = lo.w, v[4] = hi.x, v[5] = hi.y, v[6] = hi.z, v[7] = hi.w;
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      if (i >= valid || j + q >= valid) v[q] = 0.0f;
      if (p.seq_idx != nullptr && sRowId[r] != col_ids[q]) v[q] = 0.0f;
    }
    store8(p.CB, at, v);
  }
}

template <class T, int kTile>
void launch_tile(const char* op, const CouplingParams& p, int64_t tiles, cudaStream_t stream) {
  const auto kernel = chunk_coupling_tc_kernel<T, kTile>;
  const size_t smem = CouplingTile<kTile>::kBytes;
  cuda_check(op, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
             "cudaFuncSetAttribute(chunk_coupling_tc_kernel)");
  launch_kernel(op, "launch of chunk_coupling_tc_kernel", kernel, static_cast<unsigned>(tiles), kThreads, smem, stream, p);
  check_launch(op, "chunk_coupling_tc_kernel");
}

}  // namespace

bool launch_chunk_coupling_fast(const char* op, const CouplingParams& p, cudaStream_t stream) {
  const int32_t dt = p.C.dtype;
  if (p.B.dtype != dt || (dt != SSD_DTYPE_F16 && dt != SSD_DTYPE_BF16)) return false;
  if (p.dstate % 8 != 0 || p.dstate > kMaxN || p.chunk % 8 != 0) return false;
  if (!aligned16(p.C.p) || !aligned16(p.B.p) || !aligned16(p.CB.p)) return false;
  const int64_t matrices = p.batch * p.chunks * p.groups;
  const int64_t side128 = ceil_div(p.chunk, 128), side64 = ceil_div(p.chunk, 64);
  if (matrices * side64 * side64 > 0x7fffffff) return false;
  // 128-wide tiles once they cover three quarters of the SMs (measured on the H200: b4 s2048 g1,
  // 128 tiles on 132 SMs, 7.5 -> 6.9 us); below that 64-wide ones keep the grid wide (b1 s4096 g1:
  // 64 tiles of 128 took 6.3 us against 5.4 for 256 of 64).
  const bool wide = 4 * matrices * side128 * side128 >= 3 * multiprocessors(op);
  const bool f16 = dt == SSD_DTYPE_F16;
  if (wide)
    f16 ? launch_tile<__half, 128>(op, p, matrices * side128 * side128, stream)
        : launch_tile<__nv_bfloat16, 128>(op, p, matrices * side128 * side128, stream);
  else
    f16 ? launch_tile<__half, 64>(op, p, matrices * side64 * side64, stream)
        : launch_tile<__nv_bfloat16, 64>(op, p, matrices * side64 * side64, stream);
  return true;
}

}  // namespace ssd_gpu
