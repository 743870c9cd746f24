// MambaDiscretizeSegsum's ABI entry point: the argument checks, then launch_discretize_segsum
// (discretize_segsum.cu) on the checked arguments and the sizes read from them.

#include "api/entry_points.h"
#include "host.h"
#include "params.h"

namespace ssd_gpu {

ssd_status discretize_segsum(const ssd_discretize_segsum_args* args) {
  return guarded("discretize_segsum", args, [&] {
    const ssd_discretize_segsum_args& a = *args;
    const Check k{"discretize_segsum"};
    k.float_input("hidden_states", a.hidden_states);
    const Shape hs = k.extents("hidden_states", a.hidden_states, 5, "[b,c,Q,h,p]");
    const int64_t Bt = hs[0], NC = hs[1], Q = hs[2], H = hs[3];
    k.float_input("dt", a.dt);
    k.shape("dt", a.dt, {Bt, NC, Q, H}, "[b,c,Q,h]");
    k.float_input("A_log", a.A_log);
    k.shape("A_log", a.A_log, {H}, "[h]");
    k.float_input("B", a.B);
    const Shape bs = k.extents("B", a.B, 5, "[b,c,Q,g,n]");
    const int64_t G = bs[3], N = bs[4];
    k.shape("B", a.B, {Bt, NC, Q, G, N}, "[b,c,Q,g,n]");
    k.groups_divide_heads("B", H, G);
    k.float_input("C", a.C);
    k.shape("C", a.C, bs, "[b,c,Q,g,n] (the shape of B)");
    k.output("L", a.L, {Bt, H, NC, Q, Q}, "[b,h,c,Q,Q]", {SSD_DTYPE_BF16}, "bf16");
    k.output("G", a.G, {Bt, NC, Q, Q, H}, "[b,c,Q,Q,h]", {SSD_DTYPE_BF16}, "bf16");
    k.output("M", a.M, {Bt, NC, Q, Q, H}, "[b,c,Q,Q,h]", {SSD_DTYPE_BF16}, "bf16");
    k.output("A_cumsum", a.A_cumsum, {Bt, H, NC, Q}, "[b,h,c,Q]", {SSD_DTYPE_F32}, "f32");
    k.output("decay_states", a.decay_states, {Bt, H, NC, Q}, "[b,h,c,Q]", {SSD_DTYPE_F32}, "f32");
    // hidden_states is never read, so its strides do not matter.
    k.contiguous({{"dt", &a.dt}, {"A_log", &a.A_log}, {"B", &a.B}, {"C", &a.C}, {"L", &a.L}, {"G", &a.G}, {"M", &a.M},
                  {"A_cumsum", &a.A_cumsum}, {"decay_states", &a.decay_states}});

    Dims dims{};  // the inputs come in chunks already: no S, P
    dims.batch = Bt;
    dims.heads = H;
    dims.groups = G;
    dims.dstate = N;
    dims.chunk = Q;
    dims.chunks = NC;
    launch_discretize_segsum(a, dims, stream_of(a.stream));
  });
}

}  // namespace ssd_gpu
