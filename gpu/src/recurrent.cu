// SSDRecurrentFwd (selective_state_update, one decode step, general untied layout). One warp per
// state row (b, h, p): lanes stride over N, update the state in place (stored rounded to its
// dtype), and reduce C . h_new from the unrounded fp32 values with a fixed butterfly.
#include "decode_slot.cuh"

namespace ssd_gpu {
namespace {

constexpr int kRowsPerBlock = kThreads / kWarp;

struct RecurrentParams : Dims {
  Out state;  // [Bs,H,P,N], read and written in place
  In x, dt, A, B, C, D, z, dt_bias;
  const int32_t* slots;  // state_batch_indices [Bt] or null
  Out out;               // [Bt,H,P]
  int64_t slot_count;    // Bs
  bool softplus;
};

__global__ void __launch_bounds__(kThreads) recurrent_kernel(RecurrentParams p) {
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int64_t H = p.heads, P = p.headdim, N = p.dstate;
  const int64_t rows = p.batch * H * P;
  const In state_in{p.state.p, p.state.dtype};
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarp; row < rows;
       row += static_cast<int64_t>(gridDim.x) * kRowsPerBlock) {
    const int64_t pp = row % P, h = (row / P) % H, b = row / (P * H);
    const int64_t g = h / (H / p.groups);
    const int64_t slot = decode_row_slot(p, b, row, lane);
    if (slot < 0) continue;
    // No dt_limit on the decode path: bias and softplus only.
    float dtp = load(p.dt, row) + (p.dt_bias.p != nullptr ? load(p.dt_bias, h * P + pp) : 0.0f);
    if (p.softplus) dtp = softplus_thr20(dtp);
    const float xv = load(p.x, row);
    const int64_t state_base = ((slot * H + h) * P + pp) * N;
    const int64_t a_base = (h * P + pp) * N;
    const int64_t bc_base = (b * p.groups + g) * N;
    float acc = 0.0f;
    for (int64_t n = lane; n < N; n += kWarp) {
      const float decay = expf(load(p.A, a_base + n) * dtp);
      const float h_new = load(state_in, state_base + n) * decay + load(p.B, bc_base + n) * dtp * xv;
      store(p.state, state_base + n, h_new);
      acc += h_new * load(p.C, bc_base + n);  // from the unrounded new state
    }
    float y = warp_sum(acc);
    if (lane == 0) {
      if (p.D.p != nullptr) y += load(p.D, h * P + pp) * xv;
      if (p.z.p != nullptr) y = gate(y, load(p.z, row));
      store(p.out, row, y);
    }
  }
}

}  // namespace

void launch_recurrent(const ssd_recurrent_args& a, const Dims& dims, int64_t slot_count, cudaStream_t stream) {
#ifndef SSD_GPU_REFERENCE_ONLY
  if (launch_recurrent_fast(a, stream)) return;
#endif
  RecurrentParams p{};
  p.state = out(a.state);
  p.x = in(a.x);
  p.dt = in(a.dt);
  p.A = in(a.A);
  p.B = in(a.B);
  p.C = in(a.C);
  p.D = in(a.D);
  p.z = in(a.z);
  p.dt_bias = in(a.dt_bias);
  p.slots = ids(a.state_batch_indices);
  p.out = out(a.out);
  static_cast<Dims&>(p) = dims;
  p.slot_count = slot_count;
  p.softplus = a.dt_softplus != 0;
  recurrent_kernel<<<grid_for(ceil_div(p.batch * p.heads * p.headdim, kRowsPerBlock)), kThreads, 0, stream>>>(p);
  check_launch("recurrent", "recurrent_kernel");
}

}  // namespace ssd_gpu
