// Sequential oracle of SSDChunkCumsumFwd: per-position dt pipeline and a directly summed cumsum.
#include <cstdint>

#include "ssd/reference/helpers.h"
#include "ssd/reference/oracle.h"
#include "ssd/reference/validate.h"

namespace ssd {

Outputs chunk_cumsum_sequential(const ChunkCumsumArgs& args) {
  validate(args);  // throws on any bad argument; the shapes read below are then consistent
  const Tensor& dt = *args.dt;
  const Tensor& A = *args.A;
  const std::int64_t Bt = dt.dim(0), S = dt.dim(1), H = dt.dim(2);
  const ChunkGrid grid{S, args.chunk_size};
  const std::int64_t Q = grid.Q, NC = grid.count();

  Tensor dA_cumsum(DType::f64, {Bt, H, NC, Q});
  Tensor dt_out(DType::f64, {Bt, H, NC, Q});
  for (std::int64_t b = 0; b < Bt; ++b) {
    for (std::int64_t h = 0; h < H; ++h) {
      const double bias = args.dt_bias != nullptr ? args.dt_bias->at({h}) : 0.0;
      for (std::int64_t c = 0; c < NC; ++c) {
        const std::int64_t Lc = grid.length(c);
        // Positions past the valid length are padding: their dt is 0 after the clamp, so the
        // cumsum is flat there.
        for (std::int64_t i = 0; i < Q; ++i)
          dt_out.data()[dt_out.offset({b, h, c, i})] =
              i < Lc ? process_dt(dt.at({b, grid.start(c) + i, h}), bias, args.dt_softplus, args.dt_limit)
                     : 0.0;
        // Each prefix is summed from scratch, so no entry inherits another's rounding: an
        // evaluation independent of the chunked form's running sum.
        for (std::int64_t i = 0; i < Q; ++i) {
          double sum = 0.0;
          for (std::int64_t k = 0; k <= i; ++k) sum += dt_out.at({b, h, c, k}) * A.at({h});
          dA_cumsum.data()[dA_cumsum.offset({b, h, c, i})] = sum;
        }
      }
    }
  }

  Outputs result;
  result.add("dA_cumsum", std::move(dA_cumsum));
  result.add("dt_out", std::move(dt_out));
  return result;
}

}  // namespace ssd
