// SSDStatePassingFwd in fp32: the exclusive scan M <- exp(alpha_c) * M + states_c with an fp32
// running state; `out` stored in its dtype, final_states in f32.
#include "emu.h"
#include "ssd/reference/bind.h"
#include "ssd/reference/parallel.h"

namespace ssd::emu {

void state_passing_kernel(const Ctx& ctx, const OpDims& d, const float* states, const float* dA_chunk,
                          const float* init, const SeqIds& seq, DType out_dtype, float* out, float* final_states,
                          const PackedStarts* packed) {
  const std::int64_t NC = d.chunks, H = d.heads, D = d.flat;
  if (ctx.has(Flaw::initial_states_ignored) || packed) init = nullptr;
#pragma omp parallel for schedule(static) if (worth_parallel(d.batch * H, 3 * NC * D))
  for (std::int64_t bh = 0; bh < d.batch * H; ++bh) {
    const std::int64_t b = bh / H, h = bh % H;
    std::vector<float> M(static_cast<std::size_t>(D), 0.0f);
    if (init) std::copy(init + bh * D, init + (bh + 1) * D, M.begin());
    // The id before the first chunk: 0 (mamba_ssm), or none in a packed batch, whose sequence 0
    // brings its own initial state in.
    std::int64_t previous_id = packed ? -1 : 0;
    const bool inclusive = ctx.has(Flaw::state_passing_inclusive);
    for (std::int64_t c = 0; c < NC; ++c) {
      float* entering = out + ((b * NC + c) * H + h) * D;
      if (!inclusive)
        for (std::int64_t k = 0; k < D; ++k) entering[k] = round_float(out_dtype, M[static_cast<std::size_t>(k)]);
      const std::int64_t L = std::min((c + 1) * d.chunk, d.seqlen) - c * d.chunk;
      float scale = ctx.exp(dA_chunk[bh * NC + c]);
      std::int64_t id = 0;
      bool fresh = false;  // the chunk ends in a sequence that started inside it
      if (seq.present()) {
        id = seq(b, c * d.chunk + L - 1);
        fresh = id != previous_id;
        if (fresh) scale = 0.0f;
        previous_id = id;
      }
      // A packed sequence starting in this chunk with an initial state: that state decayed from
      // the sequence's start (init_decay_from_chunk_start: from the chunk's start) to its end.
      const bool injects = packed && fresh && packed->has_init(id);
      const float inject_decay = !injects ? 0.0f
                                 : ctx.has(Flaw::init_decay_from_chunk_start)
                                     ? ctx.exp(packed->dA[(h * NC + c) * d.chunk + L - 1])
                                     : packed->decay_from_start(ctx, d, h, c, id, L - 1);
      const float* own = states + ((b * NC + c) * H + h) * D;
      for (std::int64_t k = 0; k < D; ++k) {
        float& m = M[static_cast<std::size_t>(k)];
        m = ctx.add(ctx.mul(scale, m), own[k]);
        if (injects) m = ctx.add(m, ctx.mul(inject_decay, packed->init[(id * H + h) * D + k]));
      }
      if (inclusive)
        for (std::int64_t k = 0; k < D; ++k) entering[k] = round_float(out_dtype, M[static_cast<std::size_t>(k)]);
    }
    for (std::int64_t k = 0; k < D; ++k) {
      const float m = M[static_cast<std::size_t>(k)];
      final_states[bh * D + k] = ctx.has(Flaw::states_rounded_bf16) ? round_float(DType::bf16, m) : m;
    }
  }
}

Outputs state_passing(const Problem& p, const InputSet& in, const Ctx& ctx) {
  const StatePassingArgs a = bind_state_passing(p, in);
  const OpDims d = validate(a);

  const std::vector<float> states = ctx.load(*a.states), alpha = ctx.load(*a.dA_chunk_cumsum),
                           init = ctx.load(a.initial_states);
  const DType out_dtype = output_dtype(p, "out");
  const Shape out_shape{d.batch, d.chunks, d.heads, d.flat}, final_shape{d.batch, d.heads, d.flat};
  std::vector<float> out(static_cast<std::size_t>(element_count(out_shape))),
      final_states(static_cast<std::size_t>(element_count(final_shape)));
  state_passing_kernel(ctx, d, states.data(), alpha.data(), a.initial_states ? init.data() : nullptr,
                       SeqIds(a.seq_idx, d.seqlen, ctx), out_dtype, out.data(), final_states.data());
  Outputs result;
  result.add("out", to_tensor(out_dtype, out_shape, out));
  result.add("final_states", to_tensor(output_dtype(p, "final_states"), final_shape, final_states));
  return result;
}

}  // namespace ssd::emu
