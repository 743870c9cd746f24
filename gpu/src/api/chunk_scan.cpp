// SSDChunkScanFwd's ABI entry point: the argument checks, then the parameter block for
// launch_chunk_scan (chunk_scan.cu).
#include <string>

#include "api/entry_points.h"
#include "host.h"
#include "params.h"

namespace ssd_gpu {

ssd_status chunk_scan(const ssd_chunk_scan_args* args) {
  return guarded("chunk_scan", args, [&] {
    const ssd_chunk_scan_args& a = *args;
    const Check k{"chunk_scan"};
    k.float_input("x", a.x);
    k.float_input("C", a.C);
    const TokenDims d = k.token_major(a.x, "C", a.C);
    k.float_input("cb", a.cb);
    const Shape cs = k.extents("cb", a.cb, 5, "[Bt,NC,G,Q,Q]");
    k.positive("chunk_size", cs[3]);
    const int64_t Q = cs[3], NC = ceil_div(d.seqlen, Q);
    k.shape("cb", a.cb, {d.batch, NC, d.groups, Q, Q}, "[Bt,NC,G,Q,Q]");
    const Shape chunk_major{d.batch, d.heads, NC, Q};
    k.float_input("dt", a.dt);
    k.shape("dt", a.dt, chunk_major, "[Bt,H,NC,Q]");
    k.float_input("dA_cumsum", a.dA_cumsum);
    k.shape("dA_cumsum", a.dA_cumsum, chunk_major, "[Bt,H,NC,Q]");
    k.float_input("states", a.states);
    k.shape("states", a.states, {d.batch, NC, d.heads, d.headdim, d.dstate}, "[Bt,NC,H,P,N]");
    const bool d_has_hdim = k.skip_D(a.D, d.heads, d.headdim);
    const Shape token_shape{d.batch, d.seqlen, d.heads, d.headdim};
    k.optional_float("z", a.z, token_shape, "[Bt,S,H,P]");
    if (present(a.seq_idx)) k.seq_idx(a.seq_idx, d.batch, d.seqlen);
    k.output("out", a.out, token_shape, "[Bt,S,H,P]", {a.x.dtype}, (std::string("x's dtype, ") + dtype_name(a.x.dtype)).c_str());
    if (present(a.z)) {
      k.output("out_x", a.out_x, token_shape, "[Bt,S,H,P]", {a.x.dtype}, (std::string("x's dtype, ") + dtype_name(a.x.dtype)).c_str());
    } else if (present(a.out_x)) {
      fail("chunk_scan", "out_x", "given but z is absent (out_x exists only with z; pass data = NULL)");
    }
    k.contiguous({{"cb", &a.cb}, {"x", &a.x}, {"dt", &a.dt}, {"dA_cumsum", &a.dA_cumsum}, {"C", &a.C},
                  {"states", &a.states}, {"D", &a.D}, {"z", &a.z}, {"seq_idx", &a.seq_idx}, {"out", &a.out},
                  {"out_x", &a.out_x}});

    ChunkScanParams p{};
    p.cb = in(a.cb);
    p.x = in(a.x);
    p.dt = in(a.dt);
    p.dA = in(a.dA_cumsum);
    p.C = in(a.C);
    p.states = in(a.states);
    p.D = in(a.D);
    p.z = in(a.z);
    p.d_has_hdim = d_has_hdim;
    p.seq_idx = ids(a.seq_idx);
    p.out = out(a.out);
    p.out_x = out(a.out_x);
    fill_dims(p, d, Q);
    launch_chunk_scan("chunk_scan", p, stream_of(a.stream));
  });
}

}  // namespace ssd_gpu
