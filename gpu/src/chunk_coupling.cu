// SSDChunkCouplingFwd: CB[b,c,g] = C_c * B_c^T per chunk. One block per 64x64 tile of one
// (batch, chunk, group) Q x Q matrix: a shared-memory tiled fp32 GEMM over N in steps of 32, each
// thread owning a 4x4 register block. Tiles wholly above the diagonal are skipped when causal.
#include "common.cuh"
#include "register_tile.cuh"

namespace ssd_gpu {
namespace {

// register_tile.cuh's 64 x 64 tiles (i and j), reduced over N in steps of kStep.
using namespace register_tile;  // kTile, kStep, kSub, kPer

__global__ void __launch_bounds__(kThreads) chunk_coupling_kernel(CouplingParams p) {
  __shared__ float sC[kStep][kTile + 1];  // [n][i], padded against bank conflicts on the store
  __shared__ float sB[kStep][kTile + 1];  // [n][j]
  __shared__ int32_t sRowId[kTile], sColId[kTile];
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % kSub, ty = tid / kSub;
  const int64_t Q = p.chunk, N = p.dstate, G = p.groups;
  const int64_t side = ceil_div(Q, kTile);
  const int64_t tiles = p.batch * p.chunks * G * side * side;

  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t j0 = (tile % side) * kTile;
    const int64_t i0 = ((tile / side) % side) * kTile;
    const int64_t g = (tile / (side * side)) % G;
    const int64_t c = (tile / (side * side * G)) % p.chunks;
    const int64_t b = tile / (side * side * G * p.chunks);
    // Causal: a tile whose every entry has j > i is undefined upstream and never written.
    if (p.causal && j0 > i0 + kTile - 1) continue;  // block-uniform
    const int64_t t0 = c * Q;
    const int64_t valid = min(Q, p.seqlen - t0);

    __syncthreads();  // shared memory is reused across tiles
    if (p.seq_idx != nullptr && tid < 2 * kTile) {
      const int64_t r = tid % kTile;
      const int64_t token = (tid < kTile ? i0 : j0) + r;
      const int32_t id = token < valid ? p.seq_idx[b * p.seqlen + t0 + token] : 0;
      (tid < kTile ? sRowId : sColId)[r] = id;
    }

    float acc[kPer][kPer] = {};
    if (i0 < valid && j0 < valid) {  // otherwise the tile lies in the zero tail
      const int64_t row_base = (b * p.seqlen + t0) * G + g;  // token-major row of token t0
      for (int64_t n0 = 0; n0 < N; n0 += kStep) {
        __syncthreads();
        for (int e = tid; e < kTile * kStep; e += kThreads) {
          const int r = e / kStep, kk = e % kStep;
          const int64_t n = n0 + kk;
          float cv = 0.0f, bv = 0.0f;
          if (n < N && i0 + r < valid) cv = load(p.C, (row_base + (i0 + r) * G) * N + n);
          if (n < N && j0 + r < valid) bv = load(p.B, (row_base + (j0 + r) * G) * N + n);
          if (p.operand_dtype >= 0) {
            cv = round_to(p.operand_dtype, cv);
            bv = round_to(p.operand_dtype, bv);
          }
          sC[kk][r] = cv;
          sB[kk][r] = bv;
        }
        __syncthreads();
        register_tile::multiply_step(acc, sC, sB, ty, tx);
      }
    }
    __syncthreads();  // the seq ids are visible

    const int64_t out_base = ((b * p.chunks + c) * G + g) * Q;
#pragma unroll
    for (int r = 0; r < kPer; ++r) {
      const int64_t i = i0 + ty + kSub * r;
      if (i >= Q) continue;
#pragma unroll
      for (int s = 0; s < kPer; ++s) {
        const int64_t j = j0 + tx + kSub * s;
        if (j >= Q) continue;
        float v = (i < valid && j < valid) ? acc[r][s] : 0.0f;
        if (p.seq_idx != nullptr && sRowId[ty + kSub * r] != sColId[tx + kSub * s]) v = 0.0f;
        store(p.CB, (out_base + i) * Q + j, v);
      }
    }
  }
}

}  // namespace

void launch_chunk_coupling(const char* op, const CouplingParams& p, cudaStream_t stream) {
#ifndef SSD_GPU_REFERENCE_ONLY
  if (launch_chunk_coupling_fast(op, p, stream)) return;
#endif
  const int64_t side = ceil_div(p.chunk, kTile);
  chunk_coupling_kernel<<<grid_for(p.batch * p.chunks * p.groups * side * side), kThreads, 0, stream>>>(p);
  check_launch(op, "chunk_coupling_kernel");
}

}  // namespace ssd_gpu
