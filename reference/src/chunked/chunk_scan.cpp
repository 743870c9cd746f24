// SSDChunkScanFwd, chunked form: carried-in term C_c * prev^T plus the causal within-chunk product.
#include "eigen_views.h"
#include "gating.h"
#include "ssd/reference/helpers.h"
#include "ssd/reference/oracle.h"
#include "ssd/reference/parallel.h"
#include "ssd/reference/validate.h"

namespace ssd {

Outputs chunk_scan_chunked(const ChunkScanArgs& a) {
  const OpDims d = validate(a);
  const ChunkGrid grid = d.grid();
  const std::int64_t Q = d.chunk, H = d.heads, P = d.headdim, G = d.groups, N = d.dstate;
  const Shape shape{d.batch, d.seqlen, H, P};
  Tensor out(DType::f64, shape), out_x(DType::f64, a.z ? shape : Shape{0});

#pragma omp parallel for schedule(dynamic) if (worth_parallel(d.batch * d.chunks * H, 2 * Q * (Q + N) * P + 20 * Q * Q))
  for (std::int64_t item = 0; item < d.batch * d.chunks * H; ++item) {
    const std::int64_t b = item / (d.chunks * H), c = (item / H) % d.chunks, h = item % H;
    const std::int64_t g = d.group_of(h);
    const std::int64_t L = grid.length(c), t0 = grid.start(c);
    const std::int64_t chunk_base = ((b * H + h) * d.chunks + c) * Q;
    const double* dA = a.dA_cumsum->data() + chunk_base;
    const double* dt = a.dt->data() + chunk_base;
    const std::int64_t x_offset = (b * d.seqlen + t0) * H * P + h * P;
    auto X = strided(a.x->data() + x_offset, L, P, H * P);
    auto C = strided(a.C->data() + ((b * d.seqlen + t0) * G + g) * N, L, N, G * N);
    auto prev = strided(a.states->data() + item * P * N, P, N, N);
    auto cb = strided(a.cb->data() + ((b * d.chunks + c) * G + g) * Q * Q, L, L, Q);

    // Carried-in term, masked (only) by seq_idx: token t sees the state of the sequence that was
    // active at the end of the previous chunk.
    RowMatrix Y = C * prev.transpose();
    const double* ids = a.seq_idx ? a.seq_idx->data() + b * d.seqlen : nullptr;
    const double previous_id = c >= 1 && ids ? ids[t0 - 1] : static_cast<double>(kSeqIdBeforeStart);
    for (std::int64_t i = 0; i < L; ++i) {
      const bool carries = !ids || ids[t0 + i] == previous_id;
      Y.row(i) *= carries ? chunk_start_decay(dA[i]) : 0.0;
    }
    // Within-chunk term: cb is taken as given (already masked by the coupling op).
    RowMatrix coefficient = RowMatrix::Zero(L, L);
    for (std::int64_t i = 0; i < L; ++i)
      for (std::int64_t k = 0; k <= i; ++k) coefficient(i, k) = cb(i, k) * within_chunk_decay(dA[i], dA[k]) * dt[k];
    Y.noalias() += coefficient * X;

    for (std::int64_t i = 0; i < L; ++i) {
      for (std::int64_t p = 0; p < P; ++p) {
        const double y = Y(i, p) + skip_coefficient(a.D, d.d_has_hdim, h, p, P) * X(i, p);
        const std::int64_t flat = x_offset + i * H * P + p;
        if (a.z) {
          out_x.data()[flat] = y;
          out.data()[flat] = gate(y, (*a.z)[flat]);
        } else {
          out.data()[flat] = y;
        }
      }
    }
  }
  Outputs result;
  result.add("out", std::move(out), token_defined_mask(a.seq_idx, H * P));
  if (a.z) result.add("out_x", std::move(out_x), token_defined_mask(a.seq_idx, H * P));
  return result;
}

}  // namespace ssd
