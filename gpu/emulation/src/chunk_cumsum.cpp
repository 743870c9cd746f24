// SSDChunkCumsumFwd in fp32: dt pipeline (bias -> softplus -> clamp -> 0 in the tail), then the
// within-chunk prefix sum of dt' * A.
#include "emu.h"
#include "ssd/reference/bind.h"
#include "ssd/reference/parallel.h"

namespace ssd::emu {

void chunk_cumsum_kernel(const Ctx& ctx, const OpDims& d, const float* dt, const float* A, const float* bias,
                         bool softplus, DtLimit limit, float* dA, float* dt_out) {
  const ChunkGrid grid = d.grid();
  const std::int64_t Q = d.chunk, H = d.heads;
  const float lo = ctx.load(limit.lo), hi = ctx.load(limit.hi);
#pragma omp parallel for schedule(static) if (worth_parallel(d.batch * H, 30 * d.chunks * Q))
  for (std::int64_t bh = 0; bh < d.batch * H; ++bh) {
    const std::int64_t b = bh / H, h = bh % H;
    std::vector<float> step(static_cast<std::size_t>(Q));
    for (std::int64_t c = 0; c < d.chunks; ++c) {
      const std::int64_t base = (bh * d.chunks + c) * Q, L = grid.length(c), t0 = grid.start(c);
      for (std::int64_t i = 0; i < Q; ++i) {
        const float v = i < L ? process_dt(ctx, dt[(b * d.seqlen + t0 + i) * H + h], bias ? bias + h : nullptr,
                                           softplus, true, lo, hi)
                              : 0.0f;
        dt_out[base + i] = v;
        step[static_cast<std::size_t>(i)] = ctx.mul(v, A[h]);
      }
      ctx.cumsum(step.data(), dA + base, Q);
    }
  }
}

Outputs chunk_cumsum(const Problem& p, const InputSet& in, const Ctx& ctx) {
  const ChunkCumsumArgs a = bind_chunk_cumsum(p, in);
  const OpDims d = validate(a);

  const std::vector<float> dt = ctx.load(*a.dt), A = ctx.load(*a.A), bias = ctx.load(a.dt_bias);
  const Shape shape{d.batch, d.heads, d.chunks, d.chunk};
  std::vector<float> dA(static_cast<std::size_t>(element_count(shape))), dt_out(dA.size());
  chunk_cumsum_kernel(ctx, d, dt.data(), A.data(), a.dt_bias ? bias.data() : nullptr, a.dt_softplus, a.dt_limit,
                      dA.data(), dt_out.data());
  Outputs out;
  out.add("dA_cumsum", to_tensor(output_dtype(p, "dA_cumsum"), shape, dA));
  out.add("dt_out", to_tensor(output_dtype(p, "dt_out"), shape, dt_out));
  return out;
}

}  // namespace ssd::emu
