// SSDChunkCumsumFwd's ABI entry point: the argument checks, then the parameter block for
// launch_chunk_cumsum (chunk_cumsum.cu).
#include "api/entry_points.h"
#include "host.h"
#include "params.h"

namespace ssd_gpu {

ssd_status chunk_cumsum(const ssd_chunk_cumsum_args* args) {
  return guarded("chunk_cumsum", args, [&] {
    const ssd_chunk_cumsum_args& a = *args;
    const Check k{"chunk_cumsum"};
    k.float_input("dt", a.dt);
    const Shape s = k.extents("dt", a.dt, 3, "[Bt,S,H]");
    const int64_t Bt = s[0], S = s[1], H = s[2];
    k.float_input("A", a.A);
    k.shape("A", a.A, {H}, "[H]");
    k.positive("chunk_size", a.chunk_size);
    const int64_t Q = a.chunk_size, NC = ceil_div(S, Q);
    k.optional_float("dt_bias", a.dt_bias, {H}, "[H]");
    k.dt_limit(a.dt_limit_lo, a.dt_limit_hi);
    k.output("dA_cumsum", a.dA_cumsum, {Bt, H, NC, Q}, "[Bt,H,NC,Q]", {SSD_DTYPE_F32}, "f32");
    k.output("dt_out", a.dt_out, {Bt, H, NC, Q}, "[Bt,H,NC,Q]", {SSD_DTYPE_F32}, "f32");
    k.contiguous({{"dt", &a.dt}, {"A", &a.A}, {"dt_bias", &a.dt_bias}, {"dA_cumsum", &a.dA_cumsum},
                  {"dt_out", &a.dt_out}});

    CumsumParams p{};
    p.dt = in(a.dt);
    p.A = in(a.A);
    p.dt_bias = in(a.dt_bias);
    p.dA_cumsum = static_cast<float*>(a.dA_cumsum.data);
    p.dt_out = static_cast<float*>(a.dt_out.data);
    fill_dims(p, Bt, S, H, Q);
    p.softplus = a.dt_softplus != 0;
    p.lo = static_cast<float>(a.dt_limit_lo);
    p.hi = static_cast<float>(a.dt_limit_hi);
    launch_chunk_cumsum("chunk_cumsum", p, stream_of(a.stream));
  });
}

}  // namespace ssd_gpu
