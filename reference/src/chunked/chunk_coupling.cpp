// SSDChunkCouplingFwd, chunked form: CB = C_c * B_c^T per (batch, chunk, group), masked by seq_idx.
#include "eigen_views.h"
#include "ssd/reference/oracle.h"
#include "ssd/reference/parallel.h"
#include "ssd/reference/validate.h"

namespace ssd {

Outputs chunk_coupling_chunked(const ChunkCouplingArgs& a) {
  const OpDims d = validate(a);
  const ChunkGrid grid = d.grid();
  const std::int64_t Q = d.chunk, G = d.groups, N = d.dstate;
  Tensor cb(DType::f64, {d.batch, d.chunks, G, Q, Q});
  std::vector<std::uint8_t> defined;
  if (a.causal) {
    // Causal coupling defines only i >= j (tiles above the diagonal are never written upstream).
    defined.assign(static_cast<std::size_t>(cb.numel()), 1);
    for (std::int64_t block = 0; block < d.batch * d.chunks * G; ++block)
      for (std::int64_t i = 0; i < Q; ++i)
        for (std::int64_t j = i + 1; j < Q; ++j) defined[static_cast<std::size_t>((block * Q + i) * Q + j)] = 0;
  }

#pragma omp parallel for schedule(static) if (worth_parallel(d.batch * d.chunks * G, 2 * Q * Q * N))
  for (std::int64_t block = 0; block < d.batch * d.chunks * G; ++block) {
    const std::int64_t b = block / (d.chunks * G), c = (block / G) % d.chunks, g = block % G;
    const std::int64_t L = grid.length(c), t0 = grid.start(c);
    const std::int64_t token_offset = ((b * d.seqlen + t0) * G + g) * N;
    auto C = strided(a.C->data() + token_offset, L, N, G * N);
    auto B = strided(a.B->data() + token_offset, L, N, G * N);
    auto out = strided(cb.data() + block * Q * Q, L, L, Q);  // rows/cols >= L stay 0
    out.noalias() = C * B.transpose();
    if (a.seq_idx) {
      const double* ids = a.seq_idx->data() + b * d.seqlen + t0;
      for (std::int64_t i = 0; i < L; ++i)
        for (std::int64_t j = 0; j < L; ++j)
          if (ids[i] != ids[j]) out(i, j) = 0.0;
    }
  }
  Outputs out;
  out.add("CB", std::move(cb), std::move(defined));
  return out;
}

}  // namespace ssd
