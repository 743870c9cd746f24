// SSDRecurrentFwd in fp32 (selective_state_update): dt' = softplus(dt + bias) (no clamp),
// h_new = state * exp(A * dt') + (B * dt') * x, the state stored rounded to its dtype, `out` from
// the unrounded fp32 h_new: sum_n h_new * C + x * D, times z * sigmoid(z).
#include "emu.h"
#include "ssd/reference/bind.h"

namespace ssd::emu {

Outputs recurrent(const Problem& p, const InputSet& in, const Ctx& ctx) {
  const RecurrentArgs a = bind_recurrent(p, in);
  const OpDims d = validate(a);
  const std::int64_t H = d.heads, P = d.headdim, G = d.groups, N = d.dstate;

  const std::vector<float> state_in = ctx.load(*a.state), x = ctx.load(*a.x), dt = ctx.load(*a.dt),
                           A = ctx.load(*a.A), B = ctx.load(*a.B), C = ctx.load(*a.C), D = ctx.load(a.D),
                           z = ctx.load(a.z), bias = ctx.load(a.dt_bias);
  // b_c_swapped: C drives the update and B reads the output.
  const float* Bsrc = ctx.has(Flaw::b_c_swapped) ? C.data() : B.data();
  const float* Csrc = ctx.has(Flaw::b_c_swapped) ? B.data() : C.data();

  // The whole state tensor after the step; rows nobody selects keep their input values.
  Tensor state(output_dtype(p, "state"), a.state->shape(), a.state->values());
  std::vector<float> out(static_cast<std::size_t>(d.batch * H * P), 0.0f);
  std::vector<float> h_new(static_cast<std::size_t>(N));
  // Serial over rows, each reading the input state: deterministic even when the planted
  // padding_row_updates flaw makes a padding row write slot 0 as well (the later row wins).
  for (std::int64_t b = 0; b < d.batch; ++b) {
    std::int64_t slot = a.state_batch_indices ? static_cast<std::int64_t>((*a.state_batch_indices)[b]) : b;
    if (slot < 0) {
      if (!ctx.has(Flaw::padding_row_updates)) continue;  // padding: out row 0, state untouched
      slot = 0;
    }
    for (std::int64_t h = 0; h < H; ++h) {
      const std::int64_t g = ctx.group(d, h);
      const float* Bv = Bsrc + (b * G + g) * N;
      const float* Cv = Csrc + (b * G + g) * N;
      for (std::int64_t pp = 0; pp < P; ++pp) {
        const std::int64_t i = (b * H + h) * P + pp, hp = h * P + pp;
        const float dtp = process_dt(ctx, dt[static_cast<std::size_t>(i)],
                                     a.dt_bias ? bias.data() + hp : nullptr, a.dt_softplus, false, 0.0f, 0.0f);
        const float xv = x[static_cast<std::size_t>(i)];
        const std::int64_t row = ((slot * H + h) * P + pp) * N;
        for (std::int64_t n = 0; n < N; ++n) {
          const float dA = ctx.exp(ctx.mul(A[static_cast<std::size_t>(hp * N + n)], dtp));
          const float dB = ctx.mul(Bv[n], dtp);
          const float v = ctx.add(ctx.mul(state_in[static_cast<std::size_t>(row + n)], dA), ctx.mul(dB, xv));
          h_new[static_cast<std::size_t>(n)] = v;
          const float stored = ctx.has(Flaw::states_rounded_bf16) ? round_float(DType::bf16, v) : v;
          state.set(row + n, static_cast<double>(stored));
        }
        float y = ctx.sum(N, [&](std::int64_t n) { return ctx.mul(h_new[static_cast<std::size_t>(n)], Cv[n]); });
        if (a.D) y = ctx.add(y, ctx.mul(xv, D[static_cast<std::size_t>(hp)]));
        if (a.z) y = ctx.gate(y, z[static_cast<std::size_t>(i)]);
        out[static_cast<std::size_t>(i)] = y;
      }
    }
  }
  Outputs result;
  result.add("out", to_tensor(output_dtype(p, "out"), {d.batch, H, P}, out));
  result.add("state", std::move(state));
  return result;
}

}  // namespace ssd::emu
