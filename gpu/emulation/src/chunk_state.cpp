// SSDChunkStateFwd in fp32: w = exp(min(dA[Q-1] - dA[k], 0)) * dt[k] (seq-masked), B * w rounded to
// x's dtype, then the dot with x over the chunk's tokens, fp32 accumulation.
#include "emu.h"
#include "ssd/reference/bind.h"
#include "ssd/reference/parallel.h"

namespace ssd::emu {

void chunk_state_kernel(const Ctx& ctx, const OpDims& d, const float* B, const float* x, DType x_dtype,
                        const float* dt, const float* dA, const SeqIds& seq, float* states) {
  const ChunkGrid grid = d.grid();
  const std::int64_t Q = d.chunk, H = d.heads, P = d.headdim, G = d.groups, N = d.dstate, S = d.seqlen;
  // decay_from_chunk_start: the token -> chunk-end decay read against dA[0] instead of dA[Q-1].
  const std::int64_t end = ctx.has(Flaw::decay_from_chunk_start) ? 0 : Q - 1;
#pragma omp parallel for schedule(static) if (worth_parallel(d.batch * d.chunks * H, 2 * Q * P * N))
  for (std::int64_t item = 0; item < d.batch * d.chunks * H; ++item) {
    const std::int64_t b = item / (d.chunks * H), c = (item / H) % d.chunks, h = item % H;
    const std::int64_t g = ctx.group(d, h);
    const std::int64_t L = grid.length(c), t0 = grid.start(c);
    const std::int64_t chunk_base = ((b * H + h) * d.chunks + c) * Q;
    const float* dAc = dA + chunk_base;
    const float* dtc = dt + chunk_base;
    const std::int64_t last_id = seq.present() ? seq(b, t0 + L - 1) : 0;

    // B * w in fp32, rounded to x's dtype (the kernel's b.to(x.dtype) before tl.dot).
    std::vector<float> Bw(static_cast<std::size_t>(L * N));
    // padding_chunk_state drops the last_id >= 0 guard: a chunk ending in padding sums its padding tokens.
    const bool ends_in_sequence = last_id >= 0 || ctx.has(Flaw::padding_chunk_state);
    for (std::int64_t k = 0; k < L; ++k) {
      const bool same_sequence = !seq.present() || (ends_in_sequence && seq(b, t0 + k) == last_id);
      const float delta = std::fmin(ctx.sub(ctx.decay_arg(dAc[end]), ctx.decay_arg(dAc[k])), 0.0f);
      // seq_exp_dropped: with seq_idx the weight takes the clamped exponent itself, not its exp.
      const float decay = seq.present() && ctx.has(Flaw::seq_exp_dropped) ? delta : ctx.exp(delta);
      const float w = same_sequence ? ctx.mul(decay, dtc[k]) : 0.0f;
      const float* Bk = B + ((b * S + t0 + k) * G + g) * N;
      for (std::int64_t n = 0; n < N; ++n)
        Bw[static_cast<std::size_t>(k * N + n)] = ctx.dot_operand(round_float(x_dtype, ctx.mul(Bk[n], w)), x_dtype);
    }
    const float* xc = x + ((b * S + t0) * H + h) * P;
    float* out = states + item * P * N;
    for (std::int64_t p = 0; p < P; ++p)
      for (std::int64_t n = 0; n < N; ++n) {
        const auto term = [&](std::int64_t k) {
          return ctx.mul(ctx.dot_operand(xc[k * H * P + p], x_dtype), Bw[static_cast<std::size_t>(k * N + n)]);
        };
        out[p * N + n] = ctx.has(Flaw::state_sum_bf16) ? ctx.sum_bf16(L, term) : ctx.sum(L, term);
      }
  }
}

Outputs chunk_state(const Problem& p, const InputSet& in, const Ctx& ctx) {
  const ChunkStateArgs a = bind_chunk_state(p, in);
  const OpDims d = validate(a);

  const std::vector<float> B = ctx.load(*a.B), x = ctx.load(*a.x), dt = ctx.load(*a.dt), dA = ctx.load(*a.dA_cumsum);
  const Shape shape{d.batch, d.chunks, d.heads, d.headdim, d.dstate};
  std::vector<float> states(static_cast<std::size_t>(element_count(shape)));
  chunk_state_kernel(ctx, d, B.data(), x.data(), a.x->dtype(), dt.data(), dA.data(), SeqIds(a.seq_idx, d.seqlen, ctx),
                     states.data());
  if (ctx.has(Flaw::states_rounded_bf16)) round_all(states, DType::bf16);
  Outputs out;
  out.add("states", to_tensor(output_dtype(p, "states"), shape, states));
  return out;
}

}  // namespace ssd::emu
