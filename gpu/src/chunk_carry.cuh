// The factor state passing carries its running state over chunk c with (shared by the plain and
// the fast kernel): exp of the chunk total, not clamped, or 0 where a new sequence starts.
#pragma once
#include "common.cuh"

namespace ssd_gpu {

__device__ __forceinline__ float chunk_carry_scale(const StatePassingParams& p, int64_t b, int64_t bh, int64_t NC,
                                                   int64_t c) {
  float scale = expf(load(p.dA, (bh * NC + c) * p.dA_step + p.dA_offset));
  if (p.seq_idx != nullptr) {
    // Carry over chunk c only if its last valid token has the id the previous chunk ended with
    // (0 before the first chunk).
    const int32_t* row = p.seq_idx + b * p.seqlen;
    const int32_t current = row[min((c + 1) * p.chunk, p.seqlen) - 1];
    const int32_t previous = c == 0 ? 0 : row[c * p.chunk - 1];
    if (current != previous) scale = 0.0f;
  }
  return scale;
}

}  // namespace ssd_gpu
