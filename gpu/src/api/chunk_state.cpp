// SSDChunkStateFwd's ABI entry point: the argument checks, then the parameter block for
// launch_chunk_state (chunk_state.cu).
#include "api/entry_points.h"
#include "host.h"
#include "params.h"

namespace ssd_gpu {

ssd_status chunk_state(const ssd_chunk_state_args* args) {
  return guarded("chunk_state", args, [&] {
    const ssd_chunk_state_args& a = *args;
    const Check k{"chunk_state"};
    k.float_input("x", a.x);
    k.float_input("B", a.B);
    const TokenDims d = k.token_major(a.x, "B", a.B);
    // Q is not an argument of this op: it is the last extent of dt.
    k.float_input("dt", a.dt);
    const Shape ds = k.extents("dt", a.dt, 4, "[Bt,H,NC,Q]");
    k.positive("chunk_size", ds[3]);
    const int64_t Q = ds[3], NC = ceil_div(d.seqlen, Q);
    const Shape chunk_major{d.batch, d.heads, NC, Q};
    k.shape("dt", a.dt, chunk_major, "[Bt,H,NC,Q]");
    k.float_input("dA_cumsum", a.dA_cumsum);
    k.shape("dA_cumsum", a.dA_cumsum, chunk_major, "[Bt,H,NC,Q]");
    if (present(a.seq_idx)) k.seq_idx(a.seq_idx, d.batch, d.seqlen);
    k.output("states", a.states, {d.batch, NC, d.heads, d.headdim, d.dstate}, "[Bt,NC,H,P,N]",
             {SSD_DTYPE_F32, SSD_DTYPE_F16, SSD_DTYPE_BF16}, "a floating-point dtype (f32 by default)");
    k.contiguous({{"x", &a.x}, {"B", &a.B}, {"dt", &a.dt}, {"dA_cumsum", &a.dA_cumsum}, {"seq_idx", &a.seq_idx},
                  {"states", &a.states}});

    ChunkStateParams p{};
    p.B = in(a.B);
    p.x = in(a.x);
    p.dt = in(a.dt);
    p.dA = in(a.dA_cumsum);
    p.seq_idx = ids(a.seq_idx);
    p.states = out(a.states);
    fill_dims(p, d, Q);
    launch_chunk_state("chunk_state", p, stream_of(a.stream));
  });
}

}  // namespace ssd_gpu
