// SSDChunkScanFwd on tensor cores (x and C both f16 or both bf16), in the shape of flash attention:
// one block per 128 tokens i x 64 head-dim p of one (batch, chunk, head), 8 warps of 16 rows each.
//   carried-in term: C [i][n] times the entering state prev [p][n] (rounded to C's dtype in shared
//   memory), scaled per row by exp(dA[i]) (0 where seq_idx cuts the carry);
//   causal term: per 64 tokens k, the coefficients round_x(cb[i,k] exp(min(dA[i]-dA[k],0)) dt[k])
//   are built in registers in the accumulator layout, which is the A-fragment layout of the next
//   mma.sync, and multiplied by x [k][p]. x and cb of the next 64 tokens arrive by cp.async while
//   the current ones are used (two stages). The epilogue (skip term, z gate) goes through a
//   shared fp32 tile, so stores are 16 bytes per thread and the unrolled code stays small.
// cb is read in x's dtype or in f32 (Mamba2Fwd's, computed once per (chunk, group) by
// SSDChunkCouplingFwd and shared by every head of the group from L2). The f32 cb tile is twice as
// large, so its second stage reuses the C and prev tiles, which are dead after the carried-in term.
#include <type_traits>

#include "common.cuh"
#include "mma.cuh"

namespace ssd_gpu {
namespace {

constexpr int kWarps = 8;
constexpr int kBlockThreads = kWarps * 32;
constexpr int kBM = 16 * kWarps;  // tokens i per block
constexpr int kBN = 64;           // head-dim p per block
constexpr int kBK = 64;           // tokens k per causal step
constexpr int kMaxN = 128;        // the fast path takes N <= 128 and Q <= 256
constexpr int kMaxQ = 256;
constexpr int kLdN = kMaxN + 8;   // rows of n (C, prev, B)
constexpr int kLdK = kBK + 8;     // rows of 64 k (16-bit cb) or 64 p (x)
constexpr int kLdKf = kBK + 8;    // rows of 64 k of the f32 cb (float2 reads of 8 rows hit distinct banks)

// Shared memory, in elements of T unless noted. The area from stage 0 to the end (both stages, or
// stage 0 alone when stage 1 lies over C and prev) also holds the f32 staging of prev (before the
// causal steps) and the fp32 output tile (after them).
template <bool kCbF32>
struct Layout {
  static constexpr int kC = 0;                                  // C [kBM][kLdN]
  static constexpr int kPrev = kC + kBM * kLdN;                 // prev rounded [kBN][kLdN]
  static constexpr int kStage0 = kPrev + kBN * kLdN;            // per stage: x [kBK][kLdK], then
  static constexpr int kXSize = kBK * kLdK;                     // cb [kBM][kLdK] of T or
  static constexpr int kOpSize = kCbF32 ? 2 * kBM * kLdKf : kBM * kLdK;  // [kBM][kLdKf] of f32
  static constexpr int kStageSize = kXSize + kOpSize;
  static constexpr int kStage1 = kCbF32 ? kC : kStage0 + kStageSize;  // f32: over C and prev
  static constexpr int kEnd = kStage0 + (kCbF32 ? 1 : 2) * kStageSize;
  static constexpr size_t kBytes = 2 * static_cast<size_t>(kEnd) + sizeof(float) * (2 * kMaxQ + kBM);
  static constexpr size_t kStagingBytes = 2 * static_cast<size_t>(kEnd - kStage0);
  static_assert(kBN * kMaxN * 4 <= kStagingBytes, "the f32 staging of prev fits from stage 0 on");
  static_assert(!kCbF32 || kStageSize <= kStage0, "stage 1 fits over the C and prev tiles");
  __device__ static constexpr int stage(int j) { return (j & 1) ? kStage1 : kStage0; }
};

template <class T, bool kCbF32>
__global__ void __launch_bounds__(kBlockThreads, 2) chunk_scan_tc_kernel(ChunkScanParams p) {
  using L = Layout<kCbF32>;
  extern __shared__ uint4 smem[];
  T* const base = reinterpret_cast<T*>(smem);
  T* const sC = base + L::kC;
  T* const sPrev = base + L::kPrev;
  float* const sDA = reinterpret_cast<float*>(base + L::kEnd);  // [Q] dA of the chunk
  float* const sDt = sDA + kMaxQ;                               // [Q] dt of the chunk
  float* const sRowScale = sDt + kMaxQ;                         // [kBM]

  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid & 31, gid = lane / 4, tig = lane % 4;
  const int64_t Q = p.chunk, H = p.heads, P = p.headdim, G = p.groups, N = p.dstate, S = p.seqlen;
  const int64_t i_tiles = ceil_div(Q, kBM), p_tiles = ceil_div(P, kBN);
  int64_t tile = blockIdx.x;
  const int64_t p0 = (tile % p_tiles) * kBN;
  tile /= p_tiles;
  const int64_t i0 = (tile % i_tiles) * kBM;
  tile /= i_tiles;
  const int64_t h = tile % H;
  tile /= H;
  const int64_t c = tile % p.chunks, b = tile / p.chunks;
  const int64_t t0 = c * Q, valid = min(Q, S - t0);
  if (i0 >= valid) return;  // rows in the padded tail: token-major outputs exist only for t < S
  const int64_t g = h / (H / G);
  const int64_t vec = ((b * H + h) * p.chunks + c) * Q;  // [b,h,c,0] of dt and dA
  const int nk = static_cast<int>((N + 15) / 16 * 16);   // K of the n GEMMs, zero columns past N
  const T* x = static_cast<const T*>(p.x.p);
  const T* C = static_cast<const T*>(p.C.p);
  const int64_t c_row0 = (b * S + t0) * G + g;  // token-major row of token t0 in C

  // Group 0: the C rows of the block and the entering states: 16-bit ones (Mamba2Fwd stores them in
  // C's dtype) straight into their tile, f32 ones staged in the stage buffers and rounded below.
  // Sizes within the block's tiles: at most 256, so 32-bit.
  const int n_in = static_cast<int>(N), rows_i = static_cast<int>(min(valid - i0, int64_t{kBM}));
  const int rows_p = static_cast<int>(min(P - p0, int64_t{kBN}));
  float* const stage_prev = reinterpret_cast<float*>(base + L::kStage0);  // [kBN][kMaxN] f32
  copy_tile_async<kBM, kMaxN, kBlockThreads>(sC, kLdN, C + (c_row0 + i0 * G) * N, G * N, rows_i, n_in);
  const bool prev_f32 = p.states.dtype == SSD_DTYPE_F32;
  const int64_t prev_row0 = ((b * p.chunks + c) * H + h) * P + p0;
  if (prev_f32) {
    const float* prev = static_cast<const float*>(p.states.p);
    copy_tile_async<kBN, kMaxN, kBlockThreads>(stage_prev, kMaxN, prev + prev_row0 * N, N, rows_p, n_in);
  } else {
    const T* prev = static_cast<const T*>(p.states.p);
    copy_tile_async<kBN, kMaxN, kBlockThreads>(sPrev, kLdN, prev + prev_row0 * N, N, rows_p, n_in);
  }
  cp_async_commit();

  // Chunk vectors and row scales while the copies fly.
  const int64_t k_end = min(valid, i0 + kBM);  // causal: tokens k <= i < i0 + kBM
  // Zeros past k_end up to whole steps: the coefficient loop reads them before masking.
  const int64_t k_steps = ceil_div(k_end, kBK) * kBK, k_steps_end = k_steps < kMaxQ ? k_steps : kMaxQ;
  for (int k = tid; k < k_steps_end; k += kBlockThreads) {
    const bool in = k < k_end;
    sDA[k] = in ? load(p.dA, vec + k) : 0.0f;
    sDt[k] = in ? load(p.dt, vec + k) : 0.0f;
  }
  if (tid < kBM) {
    const int64_t i = i0 + tid;
    float scale = 0.0f;
    if (i < valid) {
      // The carried-in state reaches token t only if t has the id the previous chunk ended with
      // (0 before the first chunk). cb is taken as given: the causal term is not masked.
      bool carries = true;
      if (p.seq_idx != nullptr) {
        const int32_t* row = p.seq_idx + b * S;
        carries = row[t0 + i] == (c >= 1 ? row[t0 - 1] : 0);
      }
      if (carries) scale = expf(load(p.dA, vec + i));  // chunk start -> token i: not clamped
    }
    sRowScale[tid] = scale;
  }
  cp_async_wait<0>();
  __syncthreads();
  if (prev_f32) {
    constexpr int kVecs = kMaxN / 8, kRowStep = kBlockThreads / kVecs;
    const int col = (tid % kVecs) * 8;
#pragma unroll
    for (int r = tid / kVecs; r < kBN; r += kRowStep) {
      float v[8];
      const float4 lo = *reinterpret_cast<const float4*>(stage_prev + r * kMaxN + col);
      const float4 hi = *reinterpret_cast<const float4*>(stage_prev + r * kMaxN + col + 4);
      v[0] = lo.x, v[1] = lo.y, v[2] = lo.z, v[3] = lo.w, v[4] = hi.x, v[5] = hi.y, v[6] = hi.z, v[7] = hi.w;
      *reinterpret_cast<uint4*>(sPrev + r * kLdN + col) = pack8<T>(v);  // rounded to C's dtype
    }
    __syncthreads();  // the staging area is free for the causal steps
  }

  // Causal steps: stage j % 2 holds x [k][p] and cb [i][k] of tokens k0 = j * kBK ... k0 + kBK - 1.
  const int steps = static_cast<int>(ceil_div(k_end, kBK));
  const int n_valid = static_cast<int>(valid), k_end_in = static_cast<int>(k_end);
  const int64_t cb_base = ((b * p.chunks + c) * G + g) * Q;
  auto issue = [&](int j) {
    T* const sX = base + L::stage(j);
    T* const sOp = sX + L::kXSize;
    const int k0 = j * kBK;
    // Rows k past the valid length are zeros; a cb vector that starts before k_end is copied
    // whole (it ends inside the row: Q is a multiple of 8), the coefficient loop masks the rest.
    copy_tile_async<kBK, kBN, kBlockThreads>(sX, kLdK, x + ((b * S + t0 + k0) * H + h) * P + p0, H * P,
                                             n_valid - k0, static_cast<int>(P - p0));
    if constexpr (kCbF32) {
      const float* cb = static_cast<const float*>(p.cb.p);
      copy_tile_async<kBM, kBK, kBlockThreads>(reinterpret_cast<float*>(sOp), kLdKf, cb + (cb_base + i0) * Q + k0, Q,
                                               rows_i, k_end_in - k0);
    } else {
      const T* cb = static_cast<const T*>(p.cb.p);
      copy_tile_async<kBM, kBK, kBlockThreads>(sOp, kLdK, cb + (cb_base + i0) * Q + k0, Q, rows_i, k_end_in - k0);
    }
    cp_async_commit();
  };
  if (steps > 0) issue(0);

  // Carried-in term.
  const int wm = warp * 16;
  WarpTile<T, 16, kBN> acc;
  acc.zero();
  acc.template run<true, true>(sC, kLdN, sPrev, kLdN, wm, 0, 0, nk / 16);
  const float scale_lo = sRowScale[wm + gid], scale_hi = sRowScale[wm + gid + 8];
#pragma unroll
  for (int nt = 0; nt < kBN / 8; ++nt) {
    acc.acc[0][nt][0] *= scale_lo;
    acc.acc[0][nt][1] *= scale_lo;
    acc.acc[0][nt][2] *= scale_hi;
    acc.acc[0][nt][3] *= scale_hi;
  }

  const int row_lo = wm + gid, row_hi = row_lo + 8;  // rows of this thread within the block
  // Token indices within the chunk (< Q <= 256) in 32-bit arithmetic, which keeps registers free.
  const int i_lo = static_cast<int>(i0) + row_lo, i_hi = static_cast<int>(i0) + row_hi;
  const float dA_lo = i_lo < n_valid ? sDA[i_lo] : 0.0f, dA_hi = i_hi < n_valid ? sDA[i_hi] : 0.0f;
  // One barrier per step: after it, step j's tiles are visible and every warp is done with step
  // j - 1, whose stage (and, with the f32 cb, before step 1 the C and prev tiles) step j + 1 refills.
  for (int j = 0; j < steps; ++j) {
    cp_async_wait<0>();
    __syncthreads();
    if (j + 1 < steps) issue(j + 1);
    const T* sX = base + L::stage(j);
    const T* sOp = sX + L::kXSize;
    const int k0 = j * kBK;
    // 16-wide k blocks past the warp's last row hold only zero coefficients.
    const int blocks = (static_cast<int>(i0) + wm + 15 - k0) / 16 + 1;
    const int kblocks = blocks < kBK / 16 ? blocks : kBK / 16;
    if (k0 <= i0 + wm + 15) {
      // Per 16 tokens k: cb of the warp's 16 rows in the accumulator layout ([nt][0,1] row_lo,
      // columns nt*8 + 2*tig + {0,1}; [nt][2,3] row_hi), then the coefficients, rounded to x's
      // dtype, as the A fragment of one 16-deep step.
      // This thread's operands of the step's first k block; each block advances them by 16 k.
      const float* dA_k = sDA + k0 + 2 * tig;
      const float* dt_k = sDt + k0 + 2 * tig;
      const T* x_rows = WarpTile<T, 16, kBN>::lane_rows_kn(sX, kLdK, 0, 0);
      const float* cb_f32 = reinterpret_cast<const float*>(sOp) + row_lo * kLdKf + 2 * tig;
      const T* cb_16 = sOp + row_lo * kLdK + 2 * tig;
      const int first_i = static_cast<int>(i0) + wm;
      // Only the warp's diagonal block (k0 + 16 kb == first_i) needs the causal mask k <= i, and
      // it is the step's last block when it lies in this step. Rows past the valid length are not
      // masked: their outputs are never stored, and an mma row depends on its own row of A alone.
      const bool diagonal_here = first_i - k0 < kBK;
      const int plain_blocks = kblocks - (diagonal_here ? 1 : 0);
      auto block = [&](auto masked) {
        uint32_t a[4];
#pragma unroll
        for (int nt = 0; nt < 2; ++nt) {
          const float2 dAk = *reinterpret_cast<const float2*>(dA_k + nt * 8);
          const float2 dtk = *reinterpret_cast<const float2*>(dt_k + nt * 8);
          float2 lo, hi;
          if constexpr (kCbF32) {
            lo = *reinterpret_cast<const float2*>(cb_f32 + nt * 8);
            hi = *reinterpret_cast<const float2*>(cb_f32 + 8 * kLdKf + nt * 8);
          } else {
            lo = Half16<T>::unpack2(*reinterpret_cast<const uint32_t*>(cb_16 + nt * 8));
            hi = Half16<T>::unpack2(*reinterpret_cast<const uint32_t*>(cb_16 + 8 * kLdK + nt * 8));
          }
          float coef[4];
          coef[0] = lo.x * within_chunk_decay_exp2(dA_lo, dAk.x) * dtk.x;
          coef[1] = lo.y * within_chunk_decay_exp2(dA_lo, dAk.y) * dtk.y;
          coef[2] = hi.x * within_chunk_decay_exp2(dA_hi, dAk.x) * dtk.x;
          coef[3] = hi.y * within_chunk_decay_exp2(dA_hi, dAk.y) * dtk.y;
          if constexpr (decltype(masked)::value) {
            // Within the block: row gid (+ 8), columns nt * 8 + 2 * tig (+ 1).
            const int k = nt * 8 + 2 * tig;
            if (k > gid) coef[0] = 0.0f;
            if (k + 1 > gid) coef[1] = 0.0f;
            if (k > gid + 8) coef[2] = 0.0f;
            if (k + 1 > gid + 8) coef[3] = 0.0f;
          }
          a[nt * 2] = Half16<T>::pack2(coef[0], coef[1]);  // rounded to x's dtype
          a[nt * 2 + 1] = Half16<T>::pack2(coef[2], coef[3]);
        }
        acc.step_a_regs_at(a, x_rows);
        dA_k += 16, dt_k += 16, cb_f32 += 16, cb_16 += 16, x_rows += 16 * kLdK;
      };
#pragma unroll 1
      for (int kb = 0; kb < plain_blocks; ++kb) block(std::false_type{});
      if (diagonal_here) block(std::true_type{});
    }
  }

  // Epilogue through shared memory (the stages are free): the accumulators go to an fp32 tile,
  // then each thread finishes 8 consecutive p of a row (skip term, out_x before the gate, gate)
  // and stores them with one 16-byte store. Keeps the stores coalesced and the code small.
  constexpr int kLdO = kBN + 4;
  float* const sOut = reinterpret_cast<float*>(base + L::kStage0);  // [kBM][kLdO]
  static_assert(kBM * kLdO * 4 <= L::kStagingBytes, "the output tile fits from stage 0 on");
  __syncthreads();
  acc.store_f32(sOut, kLdO, wm, 0);
  __syncthreads();
  T* const out = static_cast<T*>(p.out.p);
  T* const out_x = static_cast<T*>(p.out_x.p);
  // Thread t finishes the 8 p from out_col of rows out_row + i * kOutRowStep.
  constexpr int kOutVecs = kBN / 8, kOutRowStep = kBlockThreads / kOutVecs;
  const int out_col = (tid % kOutVecs) * 8, out_row = tid / kOutVecs;
  if (p0 + out_col >= P) return;  // P is a multiple of 8: all 8 or none
  float d_skip[8] = {};           // D of these 8 p (one value per head without hdim)
  if (p.D.p != nullptr) {
#pragma unroll
    for (int q = 0; q < 8; ++q) d_skip[q] = load(p.D, p.d_has_hdim ? h * P + p0 + out_col + q : h);
  }
  const int64_t out_at = ((b * S + t0 + i0 + out_row) * H + h) * P + p0 + out_col;
  const int64_t out_step = kOutRowStep * H * P;
#pragma unroll 1
  for (int r = out_row, pass = 0; r < kBM; r += kOutRowStep, ++pass) {
    if (r >= rows_i) break;
    const int col = out_col;
    const int64_t at = out_at + pass * out_step;
    float y[8];
    const float4 y0 = *reinterpret_cast<const float4*>(sOut + r * kLdO + col);
    const float4 y1 = *reinterpret_cast<const float4*>(sOut + r * kLdO + col + 4);
    y[0] = y0.x, y[1] = y0.y, y[2] = y0.z, y[3] = y0.w, y[4] = y1.x, y[5] = y1.y, y[6] = y1.z, y[7] = y1.w;
    if (p.D.p != nullptr) {
      Vec8<T> xv;
      xv.raw = *reinterpret_cast<const uint4*>(x + at);
#pragma unroll
      for (int q = 0; q < 8; ++q) y[q] += d_skip[q] * Half16<T>::to(xv.h[q]);
    }
    if (p.z.p != nullptr) {
      if (out_x != nullptr) *reinterpret_cast<uint4*>(out_x + at) = pack8<T>(y);
      float zv[8];
      load8(p.z, at, zv);
#pragma unroll
      for (int q = 0; q < 8; ++q) y[q] = gate(y[q], zv[q]);
    }
    *reinterpret_cast<uint4*>(out + at) = pack8<T>(y);  // rounded to x's dtype
  }
}

}  // namespace

// x, C and cb of one 16-bit dtype, or cb in f32; the kernel is launched when the conditions hold.
bool launch_chunk_scan_fast(const char* op, const ChunkScanParams& p, cudaStream_t stream) {
  const int32_t dt = p.x.dtype;
  if (p.C.dtype != dt || (dt != SSD_DTYPE_F16 && dt != SSD_DTYPE_BF16)) return false;
  const bool cb_f32 = p.cb.dtype == SSD_DTYPE_F32;
  if (!cb_f32 && p.cb.dtype != dt) return false;
  if (p.states.dtype != SSD_DTYPE_F32 && p.states.dtype != dt) return false;
  if (p.headdim % 8 != 0 || p.dstate % 8 != 0 || p.chunk % 8 != 0) return false;
  if (p.dstate > kMaxN || p.chunk > kMaxQ) return false;
  for (const void* q : {p.x.p, p.C.p, p.states.p, static_cast<const void*>(p.out.p), p.cb.p})
    if (!aligned16(q)) return false;
  if (p.out_x.p != nullptr && !aligned16(p.out_x.p)) return false;
  if (p.z.p != nullptr && !aligned16(p.z.p)) return false;
  if (p.out.dtype != dt || (p.out_x.p != nullptr && p.out_x.dtype != dt)) return false;
  const int64_t tiles = p.batch * p.chunks * p.heads * ceil_div(p.chunk, kBM) * ceil_div(p.headdim, kBN);
  if (tiles > 0x7fffffff) return false;
  const bool f16 = dt == SSD_DTYPE_F16;
  const auto kernel = cb_f32 ? (f16 ? chunk_scan_tc_kernel<__half, true> : chunk_scan_tc_kernel<__nv_bfloat16, true>)
                             : (f16 ? chunk_scan_tc_kernel<__half, false> : chunk_scan_tc_kernel<__nv_bfloat16, false>);
  const size_t smem = cb_f32 ? Layout<true>::kBytes : Layout<false>::kBytes;
  cuda_check(op, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
             "cudaFuncSetAttribute(chunk_scan_tc_kernel)");
  kernel<<<static_cast<unsigned>(tiles), kBlockThreads, smem, stream>>>(p);
  check_launch(op, "chunk_scan_tc_kernel");
  return true;
}

}  // namespace ssd_gpu
