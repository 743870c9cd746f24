// SSDChunkCumsumFwd, chunked form: processed dt and the within-chunk inclusive cumsum of A*dt'.
#include "ssd/reference/oracle.h"
#include "ssd/reference/parallel.h"
#include "ssd/reference/validate.h"

namespace ssd {

Outputs chunk_cumsum_chunked(const ChunkCumsumArgs& a) {
  const OpDims d = validate(a);
  const ChunkGrid grid = d.grid();
  const Shape shape{d.batch, d.heads, d.chunks, d.chunk};
  Tensor dA_cumsum(DType::f64, shape), dt_out(DType::f64, shape);
  const double* dt = a.dt->data();

#pragma omp parallel for schedule(static) if (worth_parallel(d.batch * d.heads, 30 * d.chunks * d.chunk))
  for (std::int64_t bh = 0; bh < d.batch * d.heads; ++bh) {
    const std::int64_t b = bh / d.heads, h = bh % d.heads;
    const double A = (*a.A)[h];
    const double bias = a.dt_bias ? (*a.dt_bias)[h] : 0.0;
    for (std::int64_t c = 0; c < d.chunks; ++c) {
      const std::int64_t base = (bh * d.chunks + c) * d.chunk;
      const std::int64_t length = grid.length(c);
      double running = 0.0;
      for (std::int64_t i = 0; i < d.chunk; ++i) {
        // Positions past the valid length are padding: dt' = 0 there, so the cumsum stays flat.
        const double dtp = i < length
            ? process_dt(dt[(b * d.seqlen + grid.start(c) + i) * d.heads + h], bias, a.dt_softplus, a.dt_limit)
            : 0.0;
        running += dtp * A;
        dt_out.data()[base + i] = dtp;
        dA_cumsum.data()[base + i] = running;
      }
    }
  }
  Outputs out;
  out.add("dA_cumsum", std::move(dA_cumsum));
  out.add("dt_out", std::move(dt_out));
  return out;
}

}  // namespace ssd
