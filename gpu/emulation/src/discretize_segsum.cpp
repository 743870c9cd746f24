// MambaDiscretizeSegsum in fp32 (SOL-ExecBench L2/044): A = -exp(A_log), a = A * softplus(dt),
// A_cumsum the within-chunk prefix sum, L = exp(segsum(a)) with segsum summed down each column
// (the masked cumsum of the reference), G = C B^T over n, M = G * L; L, G, M rounded once to bf16.
#include "emu.h"
#include "ssd/reference/bind.h"
#include "ssd/reference/parallel.h"

namespace ssd::emu {

Outputs discretize_segsum(const Problem& p, const InputSet& in, const Ctx& ctx) {
  const DiscretizeSegsumArgs a = bind_discretize_segsum(p, in);
  const OpDims d = validate(a);
  const std::int64_t NC = d.chunks, Q = d.chunk, H = d.heads, G = d.groups, N = d.dstate;

  const std::vector<float> dt = ctx.load(*a.dt), A_log = ctx.load(*a.A_log), B = ctx.load(*a.B), C = ctx.load(*a.C);
  // b_c_swapped: G = B C^T (rows from B, columns from C).
  const float* rows = ctx.has(Flaw::b_c_swapped) ? B.data() : C.data();
  const float* cols = ctx.has(Flaw::b_c_swapped) ? C.data() : B.data();
  const std::int64_t ref = ctx.has(Flaw::decay_from_chunk_start) ? 0 : Q - 1;

  const Shape l_shape{d.batch, H, NC, Q, Q}, g_shape{d.batch, NC, Q, Q, H}, v_shape{d.batch, H, NC, Q};
  std::vector<float> Lout(static_cast<std::size_t>(element_count(l_shape))), Gout(Lout.size()), Mout(Lout.size()),
      A_cumsum(static_cast<std::size_t>(element_count(v_shape))), decay(A_cumsum.size());

#pragma omp parallel for schedule(dynamic) if (worth_parallel(d.batch * NC, 2 * Q * Q * (G * N + 20 * H)))
  for (std::int64_t bc = 0; bc < d.batch * NC; ++bc) {
    const std::int64_t b = bc / NC, c = bc % NC;
    std::vector<float> gram(static_cast<std::size_t>(G * Q * Q));
    for (std::int64_t g = 0; g < G; ++g)
      for (std::int64_t i = 0; i < Q; ++i)
        for (std::int64_t j = 0; j < Q; ++j) {
          const float* ri = rows + ((bc * Q + i) * G + g) * N;
          const float* cj = cols + ((bc * Q + j) * G + g) * N;
          gram[static_cast<std::size_t>((g * Q + i) * Q + j)] =
              ctx.sum(N, [&](std::int64_t n) { return ctx.mul(ri[n], cj[n]); });
        }
    std::vector<float> step(static_cast<std::size_t>(Q)), masked(step.size()), column(step.size()),
        Lh(static_cast<std::size_t>(Q * Q));
    for (std::int64_t h = 0; h < H; ++h) {
      const float A = -ctx.exp(A_log[static_cast<std::size_t>(h)]);
      for (std::int64_t l = 0; l < Q; ++l) {
        const float v = dt[static_cast<std::size_t>((bc * Q + l) * H + h)];
        step[static_cast<std::size_t>(l)] = ctx.mul(A, ctx.has(Flaw::no_softplus) ? v : ctx.softplus(v));
      }
      const std::int64_t vec = ((b * H + h) * NC + c) * Q;
      float* cs = A_cumsum.data() + vec;
      ctx.cumsum(step.data(), cs, Q);
      for (std::int64_t l = 0; l < Q; ++l) decay[static_cast<std::size_t>(vec + l)] = ctx.exp(ctx.sub(cs[ref], cs[l]));

      // L column by column: the cumsum down the rows of the strictly-lower-masked steps, so the
      // diagonal is exp(0) = 1 exactly; 0 above the diagonal.
      std::fill(Lh.begin(), Lh.end(), 0.0f);
      for (std::int64_t j = 0; j < Q; ++j) {
        for (std::int64_t m = 0; m < Q; ++m)
          masked[static_cast<std::size_t>(m)] = m > j ? step[static_cast<std::size_t>(m)] : 0.0f;
        ctx.cumsum(masked.data(), column.data(), Q);
        for (std::int64_t i = j; i < Q; ++i)
          Lh[static_cast<std::size_t>(i * Q + j)] = ctx.exp(column[static_cast<std::size_t>(i)]);
      }
      for (std::int64_t i = 0; i < Q; ++i) {
        if (ctx.has(Flaw::diagonal_dropped)) Lh[static_cast<std::size_t>(i * Q + i)] = 0.0f;
        if (ctx.has(Flaw::superdiagonal_added) && i + 1 < Q)
          Lh[static_cast<std::size_t>(i * Q + i + 1)] = ctx.exp(step[static_cast<std::size_t>(i + 1)]);
      }
      std::copy(Lh.begin(), Lh.end(), Lout.begin() + vec * Q);

      const float* Gh = gram.data() + ctx.group(d, h) * Q * Q;
      for (std::int64_t i = 0; i < Q; ++i)
        for (std::int64_t j = 0; j < Q; ++j) {
          const auto flat = static_cast<std::size_t>(((bc * Q + i) * Q + j) * H + h);
          const float l = Lh[static_cast<std::size_t>(i * Q + j)];
          Gout[flat] = Gh[i * Q + j];
          // M = G32 * L32 (rounded once, below); exactly 0 where L is (above the diagonal).
          Mout[flat] = l == 0.0f ? 0.0f : ctx.mul(Gh[i * Q + j], l);
        }
    }
  }
  Outputs result;
  result.add("L", to_tensor(output_dtype(p, "L"), l_shape, Lout));
  result.add("G", to_tensor(output_dtype(p, "G"), g_shape, Gout));
  result.add("M", to_tensor(output_dtype(p, "M"), g_shape, Mout));
  result.add("A_cumsum", to_tensor(output_dtype(p, "A_cumsum"), v_shape, A_cumsum));
  result.add("decay_states", to_tensor(output_dtype(p, "decay_states"), v_shape, decay));
  return result;
}

}  // namespace ssd::emu
