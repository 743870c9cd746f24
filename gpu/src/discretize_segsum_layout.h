// discretize_segsum_fast.cu's tile sizes and shared-memory plan: plain C++ for either compiler, so
// the host tests check that the workloads' shape fits 4 blocks per SM.
#pragma once
#include <cuda_runtime_api.h>  // __host__, __device__, __forceinline__ for either compiler

#include <cstddef>
#include <cstdint>

namespace ssd_gpu::discretize_segsum_layout {

constexpr int kThreads = 256;         // threads per block
constexpr int kTI = 16;               // rows i per block: one m16 tile
constexpr int kTJ = 64;               // columns j per block: one 128-byte run of an L row
constexpr int kGramLd = kTJ + 8;      // fp32 stride of the Gram tile (float2 writes hit distinct banks)
constexpr int kMinBlocks = 4;         // blocks per SM the register budget is held to (64 registers)

// Shared-memory plan (bytes), the same on host and device. The tile region holds the operand
// tile (one K half of C's and B's rows) and after it the raw dt, both dead before L is staged there.
// A tile wholly above the diagonal, which needs no cumsum, copies both halves at once: the second
// half's C rows after the first half's B rows in the tile region, its B rows in cs and part.
struct Layout {
  int nk, k_half;           // K padded to 16; the first half's width (the second is nk - k_half, maybe 0)
  int ldk;                  // 16-bit stride of the B / C rows (one half, plus 8 against conflicts)
  size_t operands, tiles, gram, cs, part, raw, total;
  __host__ __device__ Layout(int Q, int H, int G, int N, int dt_bytes) {
    nk = (N + 15) / 16 * 16;
    k_half = (nk / 16 + 1) / 2 * 16;  // one K step more in the first half where nk / 16 is odd
    ldk = k_half + 8;
    operands = sizeof(uint16_t) * static_cast<size_t>(kTI + kTJ) * ldk;  // a multiple of 16 bytes
    raw = static_cast<size_t>(dt_bytes) * Q * H;                          // the chunk's dt as stored
    const size_t staged_L = sizeof(uint16_t) * static_cast<size_t>(H) * kTI * kTJ;  // bf16
    tiles = operands + raw > staged_L ? operands + raw : staged_L;
    gram = sizeof(float) * static_cast<size_t>(G) * kTI * kGramLd;
    cs = sizeof(float) * static_cast<size_t>(Q) * H;
    part = sizeof(float) * (kThreads + H);  // segment sums, then -exp(A_log) per head
    total = tiles + gram + cs + part;
  }
};

}  // namespace ssd_gpu::discretize_segsum_layout
