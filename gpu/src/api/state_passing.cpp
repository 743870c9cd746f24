// SSDStatePassingFwd's ABI entry point: the argument checks, then the parameter block for
// launch_state_passing (state_passing.cu).
#include <string>

#include "api/entry_points.h"
#include "host.h"
#include "params.h"

namespace ssd_gpu {

ssd_status state_passing(const ssd_state_passing_args* args) {
  return guarded("state_passing", args, [&] {
    const ssd_state_passing_args& a = *args;
    const Check k{"state_passing"};
    k.float_input("states", a.states);
    const Shape s = k.extents("states", a.states, 4, "[Bt,NC,H,D]");
    const int64_t Bt = s[0], NC = s[1], H = s[2], D = s[3];
    k.float_input("dA_chunk_cumsum", a.dA_chunk_cumsum);
    k.shape("dA_chunk_cumsum", a.dA_chunk_cumsum, {Bt, H, NC}, "[Bt,H,NC]");
    k.optional_float("initial_states", a.initial_states, {Bt, H, D}, "[Bt,H,D]");
    int64_t S = 0;
    if (present(a.seq_idx)) {
      k.rank("seq_idx", a.seq_idx, 2, "[Bt,S]");
      k.positive("chunk_size", a.chunk_size);
      S = a.seq_idx.shape[1];
      k.seq_idx(a.seq_idx, Bt, S);
      if (ceil_div(S, a.chunk_size) != NC)
        fail("state_passing", "seq_idx",
             "S = " + std::to_string(S) + " with chunk_size " + std::to_string(a.chunk_size) + " gives " +
                 std::to_string(ceil_div(S, a.chunk_size)) + " chunks, but states has NC = " + std::to_string(NC));
    }
    k.output("out", a.out, {Bt, NC, H, D}, "[Bt,NC,H,D]", {SSD_DTYPE_F32, SSD_DTYPE_F16, SSD_DTYPE_BF16},
             "a floating-point dtype (states' dtype by default)");
    k.output("final_states", a.final_states, {Bt, H, D}, "[Bt,H,D]", {SSD_DTYPE_F32}, "f32");
    k.contiguous({{"states", &a.states}, {"dA_chunk_cumsum", &a.dA_chunk_cumsum}, {"initial_states", &a.initial_states},
                  {"seq_idx", &a.seq_idx}, {"out", &a.out}, {"final_states", &a.final_states}});

    StatePassingParams p{};
    p.states = in(a.states);
    p.dA = in(a.dA_chunk_cumsum);
    p.dA_step = 1;
    p.dA_offset = 0;
    p.initial = in(a.initial_states);
    p.seq_idx = ids(a.seq_idx);
    p.out = out(a.out);
    p.final_states = static_cast<float*>(a.final_states.data);
    // NC is read from states and chunk_size is checked only with seq_idx (S = 0 without it), so
    // the sizes are set one by one rather than by fill_dims.
    p.batch = Bt;
    p.seqlen = S;
    p.heads = H;
    p.chunk = a.chunk_size;
    p.chunks = NC;
    p.width = D;
    launch_state_passing("state_passing", p, stream_of(a.stream));
  });
}

}  // namespace ssd_gpu
