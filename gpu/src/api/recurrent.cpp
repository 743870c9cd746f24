// SSDRecurrentFwd's ABI entry point: the argument checks, then launch_recurrent (recurrent.cu) on
// the checked arguments and the sizes read from them.
#include <string>

#include "api/entry_points.h"
#include "host.h"
#include "params.h"

namespace ssd_gpu {

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
    k.contiguous({{"state", &a.state}, {"x", &a.x}, {"dt", &a.dt}, {"A", &a.A}, {"B", &a.B}, {"C", &a.C}, {"D", &a.D},
                  {"z", &a.z}, {"dt_bias", &a.dt_bias}, {"state_batch_indices", &a.state_batch_indices},
                  {"out", &a.out}});

    Dims dims{};  // one decode step: no S, Q, NC
    dims.batch = Bt;
    dims.heads = H;
    dims.headdim = P;
    dims.groups = G;
    dims.dstate = N;
    launch_recurrent(a, dims, Bs, stream_of(a.stream));
  });
}

}  // namespace ssd_gpu
