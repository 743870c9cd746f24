// Sequential oracle of SSDChunkScanFwd: the section 6 formula evaluated term by term per output.
#include <cmath>
#include <cstdint>

#include "ssd/reference/helpers.h"
#include "ssd/reference/oracle.h"
#include "ssd/reference/validate.h"

namespace ssd {

Outputs chunk_scan_sequential(const ChunkScanArgs& args) {
  validate(args);  // throws on any bad argument; the shapes read below are then consistent
  const Tensor& cb = *args.cb;
  const Tensor& x = *args.x;
  const Tensor& dt = *args.dt;
  const Tensor& dA = *args.dA_cumsum;
  const Tensor& C = *args.C;
  const Tensor& states = *args.states;
  const std::int64_t Bt = x.dim(0), S = x.dim(1), H = x.dim(2), P = x.dim(3);
  const std::int64_t G = C.dim(2), N = C.dim(3);
  const std::int64_t Q = dt.dim(3);
  const ChunkGrid grid{S, Q};
  const std::int64_t heads_per_group = H / G;
  const bool d_per_p = args.D != nullptr && args.D->rank() == 2;

  Tensor out(DType::f64, {Bt, S, H, P});
  Tensor out_x(DType::f64, {Bt, S, H, P});
  for (std::int64_t b = 0; b < Bt; ++b) {
    for (std::int64_t t = 0; t < S; ++t) {
      const std::int64_t c = t / Q, i = t - c * Q, t0 = grid.start(c);
      // The carried-in state belongs to the sequence active at the previous chunk's last token
      // (kSeqIdBeforeStart before chunk 0); other tokens of this chunk do not see it.
      double m_prev = 1.0;
      if (args.seq_idx != nullptr) {
        const auto id = static_cast<std::int64_t>(args.seq_idx->at({b, t}));
        const std::int64_t prev_id =
            c >= 1 ? static_cast<std::int64_t>(args.seq_idx->at({b, t0 - 1})) : kSeqIdBeforeStart;
        m_prev = id == prev_id ? 1.0 : 0.0;
      }
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t g = h / heads_per_group;
        const double dA_i = dA.at({b, h, c, i});
        const double start_decay = chunk_start_decay(dA_i);
        for (std::int64_t p = 0; p < P; ++p) {
          double off = 0.0;
          for (std::int64_t n = 0; n < N; ++n) off += C.at({b, t, g, n}) * states.at({b, c, h, p, n});
          off *= start_decay * m_prev;

          // cb is taken as given: the intra-chunk term is deliberately not masked by seq_idx.
          double diag = 0.0;
          for (std::int64_t k = 0; k <= i; ++k)
            diag += cb.at({b, c, g, i, k}) * within_chunk_decay(dA_i, dA.at({b, h, c, k})) * dt.at({b, h, c, k}) *
                    x.at({b, t0 + k, h, p});

          const double xv = x.at({b, t, h, p});
          double y = off + diag;
          if (args.D != nullptr) y += (d_per_p ? args.D->at({h, p}) : args.D->at({h})) * xv;
          const std::int64_t o = out.offset({b, t, h, p});
          out_x.data()[o] = y;
          if (args.z != nullptr) {
            const double zv = args.z->at({b, t, h, p});
            y *= zv / (1.0 + std::exp(-zv));
          }
          out.data()[o] = y;
        }
      }
    }
  }

  Outputs result;
  result.add("out", std::move(out), token_defined_mask(args.seq_idx, H * P));
  if (args.z != nullptr) result.add("out_x", std::move(out_x), token_defined_mask(args.seq_idx, H * P));
  return result;
}

}  // namespace ssd
