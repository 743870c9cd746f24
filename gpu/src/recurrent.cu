// SSDRecurrentFwd (selective_state_update, one decode step, general untied layout). One warp per
// state row (b, h, p): lanes stride over N, update the state in place (stored rounded to its
// dtype), and reduce C . h_new from the unrounded fp32 values with a fixed butterfly.
#include "decode_slot.cuh"

namespace ssd_gpu {
namespace {

constexpr int kRowsPerBlock = kThreads / kWarp;

struct RecurrentParams {
  Out state;  // [Bs,H,P,N], read and written in place
  In x, dt, A, B, C, D, z, dt_bias;
  const int32_t* slots;  // state_batch_indices [Bt] or null
  Out out;               // [Bt,H,P]
  int64_t batch, slot_count, heads, headdim, groups, dstate;
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

ssd_status recurrent(const ssd_recurrent_args* args) {
  return guarded("recurrent", args, [&] {
    const ssd_recurrent_args& a = *args;
    const Check k{"recurrent"};
    k.float_input("state", a.state);
    const Shape ss = k.extents("state", a.state, 4, "[Bs,H,P,N]");
    const int64_t Bs = ss[0], H = ss[1], P = ss[2], N = ss[3];
    k.float_input("x", a.x);
    const Shape xs = k.extents("x", a.x, 3, "[Bt,H,P]");
    const int64_t Bt = xs[0];
    if (xs[1] != H || xs[2] != P)
      fail("recurrent", "x", "shape " + shape_string(xs) + ", expected [Bt,H,P] with H = " + std::to_string(H) +
                                 ", P = " + std::to_string(P) + " (from state)");
    k.float_input("dt", a.dt);
    k.shape("dt", a.dt, xs, "[Bt,H,P]");
    k.float_input("A", a.A);
    k.shape("A", a.A, {H, P, N}, "[H,P,N]");
    k.float_input("B", a.B);
    const Shape bs = k.extents("B", a.B, 3, "[Bt,G,N]");
    const int64_t G = bs[1];
    k.shape("B", a.B, {Bt, G, N}, "[Bt,G,N]");
    k.groups_divide_heads("B", H, G);
    k.float_input("C", a.C);
    k.shape("C", a.C, bs, "[Bt,G,N] (the shape of B)");
    k.optional_float("D", a.D, {H, P}, "[H,P]");
    k.optional_float("z", a.z, xs, "[Bt,H,P]");
    k.optional_float("dt_bias", a.dt_bias, {H, P}, "[H,P]");
    if (present(a.state_batch_indices)) {
      // Entries (range, distinctness) live in device memory; the kernel guards the range itself.
      if (a.state_batch_indices.dtype != SSD_DTYPE_I32)
        fail("recurrent", "state_batch_indices", std::string("dtype ") + dtype_name(a.state_batch_indices.dtype) +
                                                     ", expected one of i32");
      k.shape("state_batch_indices", a.state_batch_indices, {Bt}, "[Bt]");
    } else if (Bs != Bt) {
      fail("recurrent", "state", "has " + std::to_string(Bs) + " rows but x has Bt = " + std::to_string(Bt) +
                                     "; pass state_batch_indices to select rows");
    }
    k.output("out", a.out, xs, "[Bt,H,P]", {a.x.dtype}, (std::string("x's dtype, ") + dtype_name(a.x.dtype)).c_str());
    for (const auto& [name, t] : {std::pair<const char*, const ssd_tensor*>{"state", &a.state}, {"x", &a.x},
                                  {"dt", &a.dt}, {"A", &a.A}, {"B", &a.B}, {"C", &a.C}, {"D", &a.D}, {"z", &a.z},
                                  {"dt_bias", &a.dt_bias}, {"state_batch_indices", &a.state_batch_indices},
                                  {"out", &a.out}})
      if (present(*t)) k.contiguous(name, *t);

#ifndef SSD_GPU_REFERENCE_ONLY
    if (launch_recurrent_fast(a, stream_of(a.stream))) return;
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
    p.batch = Bt;
    p.slot_count = Bs;
    p.heads = H;
    p.headdim = P;
    p.groups = G;
    p.dstate = N;
    p.softplus = a.dt_softplus != 0;
    recurrent_kernel<<<grid_for(ceil_div(Bt * H * P, kRowsPerBlock)), kThreads, 0, stream_of(a.stream)>>>(p);
    check_launch("recurrent", "recurrent_kernel");
  });
}

}  // namespace ssd_gpu
