// SSDChunkStateFwd's tensor-core kernel (chunk_state_tc.cuh) on Hopper's warpgroup MMA, compiled for
// sm_90a alone. states^T = Bw^T X per tile: each warpgroup computes 64 n x 64 p with wgmma m64n64k16,
// A = Bw^T from registers (each warp's 16 n rows, built by the same ldmatrix.trans and scaling as the
// mma.sync kernel), B = x read by the tensor cores from a 128-byte-swizzled tile (no ldmatrix of x,
// 8 mma.sync per warp and 16-deep step become one wgmma per warpgroup). The accumulators hold 2
// adjacent p of an n row; neighbouring lanes swap one value each, so every lane stores 2 adjacent n
// of a p row as the mma.sync kernel does.
#include "chunk_state_tc.cuh"
#include "wgmma.cuh"

// Candidate for an A/B (docs/performance.md): 1 computes x's wgmma descriptor once per group and
// steps it by constants (wgmma_layout.h sw128_descriptor_plus); 0 takes each step's from its address.
#ifndef STATE_DESCRIPTOR_STEPS
#define STATE_DESCRIPTOR_STEPS 0
#endif
// Candidate for an A/B: 1 aligns the dynamic shared memory's start by an added offset, which keeps
// the pointers into it in the shared window (the w values' loads become LDS, not generic LD); 0
// aligns it by a select between two pointers.
#ifndef STATE_SHARED_LOADS
#define STATE_SHARED_LOADS 0
#endif

namespace ssd_gpu {
namespace {

using namespace chunk_state_tc;

template <class T>
struct WgmmaGemm {
  static constexpr int kLdX = kBM;  // 128-byte rows, swizzled
  static_assert(kBM * 2 == 128, "x rows are one 128-byte swizzle row");
  static constexpr bool kSwizzleX = true;
  static constexpr size_t kXBytes = size_t{kMaxQ} * kLdX * 2;
  static constexpr size_t kAlign = 1024;  // the swizzle pattern's period
  static constexpr size_t kXAt = 0, kBAt = kXBytes, kVecAt = kXBytes + kBBytes;
  static constexpr size_t kSharedBytes = kVecAt + kVecBytes + kAlign;  // with room to align the start
  static_assert(kBBytes % 16 == 0 && fits_two_blocks(kSharedBytes), "two blocks fit one SM");

  __device__ static unsigned char* aligned(unsigned char* smem) {
    if constexpr (STATE_SHARED_LOADS) {
      // The start moved by an offset alone (no select between two pointers), so the compiler keeps
      // every pointer derived from it in the shared window: shared loads instead of generic ones.
      return smem + ((kAlign - (smem_addr(smem) & (kAlign - 1))) & (kAlign - 1));
    } else {
      const unsigned offset = smem_addr(smem) & (kAlign - 1);
      return offset == 0 ? smem : smem + (kAlign - offset);
    }
  }
  // The copies' writes (generic proxy) become visible to wgmma's reads (async proxy).
  __device__ static void landed() { fence_proxy_async_shared(); }
  // wgmma is a warpgroup's instruction: all four warps of a warpgroup with any n below N take part.
  __device__ static bool computes(int warp, int N) { return warp / 4 * 64 < N; }

  float acc[kBM / 8][4];
  __device__ void zero() {
#pragma unroll
    for (int j = 0; j < kBM / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[j][e] = 0.0f;
  }

  // acc += round_T(diag(w) B)^T x over the 64-token group from token k0, this warp's A rows n0..n0+15.
  // Always the group's four 16-deep steps, not the ksteps that reach its last valid token: past it
  // w is 0 and the copies zero-filled the group's x and B rows, so the extra steps add exact zeros,
  // and the count is a constant (with the data-dependent one, ptxas serialized the wgmmas: "wgmma in
  // a divergent path").
  // Each step's A fragment is built, pinned and fenced just before its wgmma, so the tensor cores
  // run step ks while the warp builds step ks + 1's fragment (ldmatrix, scaling by w): 1.005-1.02x
  // on chunk_state, 1.005x on Mamba2Fwd 2p7b (H100). Registers wgmma reads asynchronously must not
  // change before it completes: every fragment stays live (pinned) until after the wait, so no
  // later fragment can take an earlier one's registers. When multiply returns, the group's x and B
  // rows are no longer read.
  __device__ void multiply(const T* sX, const T* sB, const float* sW, int n0, int k0, int /*ksteps*/) {
    const int lane = static_cast<int>(threadIdx.x) & 31, idx = lane >> 3, r = lane & 7, tig = lane & 3;
    uint32_t a[kGroupRows / 16][4];
    [[maybe_unused]] const uint64_t x_descriptor = sw128_mn_descriptor(sX + k0 * kLdX);
    wgmma_fence_operands(acc);
#pragma unroll
    for (int ks = 0; ks < kGroupRows / 16; ++ks) {
      const int k = k0 + ks * 16;
      // Rows k + 2 tig + {0,1} in q[0], q[2] (n0 + gid, n0 + 8 + gid), 8 rows further in q[1], q[3]:
      // the scaled B fragments of WarpTile::run_b_rows_scaled.
      uint32_t q[4];
      ldsm_x4_trans(q, sB + (k + r + (idx & 1) * 8) * kLdB + n0 + (idx >> 1) * 8);
      const float2 w_lo = *reinterpret_cast<const float2*>(sW + k + 2 * tig);
      const float2 w_hi = *reinterpret_cast<const float2*>(sW + k + 8 + 2 * tig);
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float2 v = Half16<T>::unpack2(q[e]);
        const float2 s = (e & 1) ? w_hi : w_lo;
        q[e] = Half16<T>::pack2(v.x * s.x, v.y * s.y);
      }
      // mma's A fragment of the 16 x 16 block Bw^T[n0.., k..]: (n, k), (n + 8, k), (n, k + 8), (n + 8, k + 8).
      a[ks][0] = q[0], a[ks][1] = q[2], a[ks][2] = q[1], a[ks][3] = q[3];
#pragma unroll
      for (int e = 0; e < 4; ++e) wgmma_pin(a[ks][e]);
      wgmma_fence();
      if constexpr (STATE_DESCRIPTOR_STEPS)
        wgmma_m64n64k16_rs<T>(acc, a[ks],
                              wgmma_layout::sw128_descriptor_plus(
                                  x_descriptor, static_cast<uint32_t>(ks * 16 * kLdX * sizeof(T))));
      else
        wgmma_m64n64k16_rs<T>(acc, a[ks], sw128_mn_descriptor(sX + k * kLdX));
    }
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_operands(a);
    wgmma_fence_operands(acc);
  }

  // acc[j] holds (n0 + gid (+8 in [2], [3]), p = 8 j + 2 tig + {0, 1}). Lanes gid and gid ^ 1 swap a
  // value, so the even lane holds n0 + gid, + 1 at p = 8 j + 2 tig and the odd lane the same pair at
  // p + 1: 8-byte stores. p_valid and N are multiples of 8: each (j, half) is all in or all out for
  // the pair of lanes.
  __device__ void store(Out states, int64_t tile, int p_valid, int N, int n0) const {
    const int lane = static_cast<int>(threadIdx.x) & 31, gid = lane / 4, tig = lane % 4;
    const bool odd = gid & 1;
#pragma unroll
    for (int j = 0; j < kBM / 8; ++j) {
      if (8 * j >= p_valid) break;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const float p_even = acc[j][2 * half], p_odd = acc[j][2 * half + 1];
        const float got = __shfl_xor_sync(0xffffffffu, odd ? p_even : p_odd, 4);
        const int n = n0 + half * 8 + (gid & ~1);
        const int row = 8 * j + 2 * tig + (odd ? 1 : 0);
        if (n < N) store2(states, tile + int64_t{row} * N + n, odd ? got : p_even, odd ? p_odd : got);
      }
    }
  }
};

}  // namespace

// SSD_GPU_WGMMA=0 (read once) keeps the mma.sync kernels, so the two can be compared in one library.
bool wgmma_allowed() {
  static const bool allowed = env_switch_on("SSD_GPU_WGMMA");
  return allowed;
}

bool chunk_state_tc::launch_chunk_state_wgmma(const char* op, const ChunkStateParams& p, const LaunchPlan& plan,
                                              cudaStream_t stream) {
  if (!wgmma_allowed() || compute_capability(op) != 90) return false;  // sm_90a code runs on 9.0 alone
  const auto kernel = p.x.dtype == SSD_DTYPE_F16 ? chunk_state_tc_kernel<__half, WgmmaGemm<__half>>
                                                 : chunk_state_tc_kernel<__nv_bfloat16, WgmmaGemm<__nv_bfloat16>>;
  constexpr size_t kShared = WgmmaGemm<__half>::kSharedBytes;
  cuda_check(op, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kShared)),
             "cudaFuncSetAttribute(chunk_state_tc_kernel, wgmma)");
  launch_kernel(op, "launch of chunk_state_tc_kernel (wgmma)", kernel, plan.grid, kBlockThreads, kShared, stream, p,
                plan.walk, plan.vectors_by_copy, plan.ids_by_copy);
  check_launch(op, "chunk_state_tc_kernel (wgmma)");
  return true;
}

}  // namespace ssd_gpu
