// SSDChunkStateFwd's tensor-core kernels (chunk_state_tc.cuh) on mma.sync, and the launcher that
// chooses between them: the wgmma kernel (chunk_state_wgmma.cu) where the device runs sm_90a code,
// this one elsewhere. Each of the 8 warps computes its 64 p x 16 n with m16n8k16 mma.sync: x^T by
// ldmatrix.trans from padded rows, B scaled in registers (WarpTile::run_b_rows_scaled); the
// accumulators hold 2 adjacent n of a p row, stored as 8-byte pairs.
#include "chunk_state_tc.cuh"

namespace ssd_gpu {
namespace {

using namespace chunk_state_tc;

template <class T>
struct MmaSyncGemm {
  static constexpr int kLdX = kBM + 8;  // padded rows: the eight rows of an ldmatrix hit distinct banks
  static constexpr bool kSwizzleX = false;
  static constexpr size_t kXBytes = size_t{kMaxQ} * kLdX * 2;
  static constexpr size_t kBAt = 0, kXAt = kBBytes, kVecAt = kBBytes + kXBytes;
  static constexpr size_t kSharedBytes = kVecAt + kVecBytes;
  static_assert(fits_two_blocks(kSharedBytes), "two blocks fit one SM");

  __device__ static unsigned char* aligned(unsigned char* smem) { return smem; }  // 16 bytes suffice
  __device__ static void landed() {}
  __device__ static bool computes(int warp, int N) { return warp * kWarpN < N; }  // a warp past N: nothing to store

  WarpTile<T, kBM, kWarpN> wt;
  __device__ void zero() { wt.zero(); }
  __device__ void multiply(const T* sX, const T* sB, const float* sW, int n0, int k0, int ksteps) {
    wt.run_b_rows_scaled(sX, kLdX, sB, kLdB, sW, 0, n0, k0, ksteps);
  }
  // Straight from the accumulators: rows mt*16 + gid (+8), n at n0 + nt*8 + 2 tig. p_valid and N are
  // multiples of 8, so each (mt, half, nt) store is all in or all out for the warp.
  __device__ void store(Out states, int64_t tile, int p_valid, int N, int n0) const {
    const int lane = static_cast<int>(threadIdx.x) & 31, gid = lane / 4, tig = lane % 4;
    const int64_t out = tile + n0 + 2 * tig;
#pragma unroll
    for (int mt = 0; mt < kBM / 16; ++mt)
#pragma unroll
      for (int hi = 0; hi < 2; ++hi) {
        const int r = mt * 16 + hi * 8;
        if (r >= p_valid) continue;
#pragma unroll
        for (int nt = 0; nt < kWarpN / 8; ++nt)
          if (n0 + nt * 8 < N)
            store2(states, out + (r + gid) * N + nt * 8, wt.acc[mt][nt][2 * hi], wt.acc[mt][nt][2 * hi + 1]);
      }
  }
};

}  // namespace

bool launch_chunk_state_fast(const char* op, const ChunkStateParams& p, cudaStream_t stream) {
  const int32_t dt = p.x.dtype;
  if (p.B.dtype != dt || (dt != SSD_DTYPE_F16 && dt != SSD_DTYPE_BF16)) return false;
  if (p.headdim % 8 != 0 || p.dstate % 8 != 0 || p.dstate > kBN || p.chunk > kMaxQ) return false;
  if (!aligned16(p.x.p) || !aligned16(p.B.p) || !aligned16(p.states.p)) return false;
  const int64_t p_tiles = ceil_div(p.headdim, kBM);
  const int64_t tiles = p.batch * p.chunks * p.heads * p_tiles;
  if (tiles > 0x7fffffff) return false;
  LaunchPlan plan;
  plan.vectors_by_copy = p.dA.dtype == SSD_DTYPE_F32 && p.dt.dtype == SSD_DTYPE_F32 && p.chunk % 4 == 0 &&
                         aligned16(p.dA.p) && aligned16(p.dt.p);
  // The ids of a chunk by copy where its row starts 16-byte aligned and its valid tokens are whole
  // vectors (S and Q multiples of 4), so no copy reads past the row.
  plan.ids_by_copy = p.seq_idx != nullptr && aligned16(p.seq_idx) && p.seqlen % 4 == 0 && p.chunk % 4 == 0;
  const int64_t sms = multiprocessors(op);
  const chunk_state_walk::WalkPlan walk = chunk_state_walk::plan_walk(tiles, p_tiles, p.heads / p.groups, p.groups,
                                                                      p.chunks, sms, kBlocksPerSm * sms, kMaxRun);
  plan.walk = walk.walk;
  plan.grid = static_cast<unsigned>(walk.grid);
  if (launch_chunk_state_wgmma(op, p, plan, stream)) return true;

  const auto kernel = dt == SSD_DTYPE_F16 ? chunk_state_tc_kernel<__half, MmaSyncGemm<__half>>
                                          : chunk_state_tc_kernel<__nv_bfloat16, MmaSyncGemm<__nv_bfloat16>>;
  constexpr size_t kShared = MmaSyncGemm<__half>::kSharedBytes;
  cuda_check(op, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kShared)),
             "cudaFuncSetAttribute(chunk_state_tc_kernel)");
  launch_kernel(op, "launch of chunk_state_tc_kernel (mma.sync)", kernel, plan.grid,
                kBlockThreads, kShared, stream, p, plan.walk, plan.vectors_by_copy, plan.ids_by_copy);
  check_launch(op, "chunk_state_tc_kernel (mma.sync)");
  return true;
}

}  // namespace ssd_gpu
