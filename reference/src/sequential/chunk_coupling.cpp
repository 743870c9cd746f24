// Sequential oracle of SSDChunkCouplingFwd: each CB entry as an explicit dot product over N.
#include <cstdint>
#include <vector>

#include "ssd/reference/helpers.h"
#include "ssd/reference/oracle.h"
#include "ssd/reference/validate.h"

namespace ssd {

Outputs chunk_coupling_sequential(const ChunkCouplingArgs& args) {
  validate(args);  // throws on any bad argument; the shapes read below are then consistent
  const Tensor& C = *args.C;
  const Tensor& B = *args.B;
  const std::int64_t Bt = C.dim(0), S = C.dim(1), G = C.dim(2), N = C.dim(3);
  const ChunkGrid grid{S, args.chunk_size};
  const std::int64_t Q = grid.Q, NC = grid.count();

  Tensor cb(DType::f64, {Bt, NC, G, Q, Q});
  for (std::int64_t b = 0; b < Bt; ++b) {
    for (std::int64_t c = 0; c < NC; ++c) {
      const std::int64_t Lc = grid.length(c), t0 = grid.start(c);
      for (std::int64_t g = 0; g < G; ++g) {
        // Rows and columns past the valid length stay 0 (the kernel masks its loads there).
        for (std::int64_t i = 0; i < Lc; ++i) {
          for (std::int64_t j = 0; j < Lc; ++j) {
            // Pairs from different sequences do not interact. Two padding tokens with equal
            // negative ids are not masked, as in the kernel.
            if (args.seq_idx != nullptr && args.seq_idx->at({b, t0 + i}) != args.seq_idx->at({b, t0 + j}))
              continue;
            double dot = 0.0;
            for (std::int64_t n = 0; n < N; ++n) dot += C.at({b, t0 + i, g, n}) * B.at({b, t0 + j, g, n});
            cb.data()[cb.offset({b, c, g, i, j})] = dot;
          }
        }
      }
    }
  }

  // With causal=true the kernel never writes the tiles above the diagonal: those entries are
  // computed here like the rest but marked undefined.
  std::vector<std::uint8_t> defined;
  if (args.causal) {
    defined.assign(static_cast<std::size_t>(cb.numel()), 0);
    for (std::int64_t block = 0; block < Bt * NC * G; ++block)
      for (std::int64_t i = 0; i < Q; ++i)
        for (std::int64_t j = 0; j <= i; ++j) defined[static_cast<std::size_t>((block * Q + i) * Q + j)] = 1;
  }

  Outputs result;
  result.add("CB", std::move(cb), std::move(defined));
  return result;
}

}  // namespace ssd
