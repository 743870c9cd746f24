// SSDChunkStateFwd, chunked form: states_c = X_c^T * diag(w) * B_c per (batch, chunk, head).
#include "eigen_views.h"
#include "ssd/reference/helpers.h"
#include "ssd/reference/oracle.h"
#include "ssd/reference/parallel.h"
#include "ssd/reference/validate.h"

namespace ssd {

Outputs chunk_state_chunked(const ChunkStateArgs& a) {
  const OpDims d = validate(a);
  const ChunkGrid grid = d.grid();
  const std::int64_t Q = d.chunk, H = d.heads, P = d.headdim, G = d.groups, N = d.dstate;
  Tensor states(DType::f64, {d.batch, d.chunks, H, P, N});

#pragma omp parallel for schedule(static) if (worth_parallel(d.batch * d.chunks * H, 2 * Q * P * N))
  for (std::int64_t item = 0; item < d.batch * d.chunks * H; ++item) {
    const std::int64_t b = item / (d.chunks * H), c = (item / H) % d.chunks, h = item % H;
    const std::int64_t L = grid.length(c), t0 = grid.start(c);
    const std::int64_t chunk_base = ((b * H + h) * d.chunks + c) * Q;
    const double* dA = a.dA_cumsum->data() + chunk_base;
    const double* dt = a.dt->data() + chunk_base;
    const double* ids = a.seq_idx ? a.seq_idx->data() + b * d.seqlen + t0 : nullptr;
    const double last_id = ids ? ids[L - 1] : 0.0;

    // Weight of token k in the chunk's state; the decay to the chunk end is read at Q-1 as the
    // kernels do (equal to L-1 only because the cumsum is flat past the valid length).
    Eigen::VectorXd w(L);
    for (std::int64_t k = 0; k < L; ++k) {
      const bool same_sequence = !ids || (last_id >= 0 && ids[k] == last_id);
      w(k) = same_sequence ? within_chunk_decay(dA[Q - 1], dA[k]) * dt[k] : 0.0;
    }
    auto X = strided(a.x->data() + ((b * d.seqlen + t0) * H + h) * P, L, P, H * P);
    auto B = strided(a.B->data() + ((b * d.seqlen + t0) * G + d.group_of(h)) * N, L, N, G * N);
    auto out = strided(states.data() + item * P * N, P, N, N);
    out.noalias() = X.transpose() * (w.asDiagonal() * B);
  }
  Outputs out;
  out.add("states", std::move(states));
  return out;
}

}  // namespace ssd
