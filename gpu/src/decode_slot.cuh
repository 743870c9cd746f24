// The state slot of a decode row, shared by the plain and the fast recurrent kernel.
#pragma once
#include "common.cuh"

namespace ssd_gpu {

// The slot row b's state lives in, or -1 when the row gets no state: a padding entry (lane 0
// writes output 0) or a slot past the state (outside the contract, which the host cannot see in
// device indices: lane 0 writes NaN). Either way no state is touched.
template <class Params>
__device__ __forceinline__ int64_t decode_row_slot(const Params& p, int64_t b, int64_t row, int lane) {
  const int64_t slot = p.slots != nullptr ? p.slots[b] : b;
  if (slot < 0 || slot >= p.slot_count) {
    if (lane == 0) store(p.out, row, slot < 0 ? 0.0f : __int_as_float(0x7fc00000));
    return -1;
  }
  return slot;
}

}  // namespace ssd_gpu
