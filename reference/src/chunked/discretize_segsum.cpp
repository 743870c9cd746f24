// MambaDiscretizeSegsum, chunked form: per (batch, chunk) the C*B^T Gram matrix of each group and,
// per head, the stable-segsum decay matrix L, their product M, A_cumsum and decay_states.
#include "eigen_views.h"
#include "ssd/reference/helpers.h"
#include "ssd/reference/oracle.h"
#include "ssd/reference/parallel.h"
#include "ssd/reference/validate.h"

namespace ssd {

Outputs discretize_segsum_chunked(const DiscretizeSegsumArgs& a) {
  const OpDims d = validate(a);
  const std::int64_t NC = d.chunks, Q = d.chunk, H = d.heads, G = d.groups, N = d.dstate;
  Tensor L(DType::f64, {d.batch, H, NC, Q, Q}), Gram(DType::f64, {d.batch, NC, Q, Q, H}),
      M(DType::f64, {d.batch, NC, Q, Q, H}), A_cumsum(DType::f64, {d.batch, H, NC, Q}),
      decay(DType::f64, {d.batch, H, NC, Q});

#pragma omp parallel for schedule(dynamic) if (worth_parallel(d.batch * NC, 2 * Q * Q * (G * N + 20 * H)))
  for (std::int64_t bc = 0; bc < d.batch * NC; ++bc) {
    const std::int64_t b = bc / NC, c = bc % NC;
    std::vector<RowMatrix> gram(static_cast<std::size_t>(G));
    for (std::int64_t g = 0; g < G; ++g) {
      const std::int64_t offset = (bc * Q * G + g) * N;  // [b,c,l,g,n] with l = 0
      gram[static_cast<std::size_t>(g)] =
          strided(a.C->data() + offset, Q, N, G * N) * strided(a.B->data() + offset, Q, N, G * N).transpose();
    }
    for (std::int64_t h = 0; h < H; ++h) {
      const double A = -std::exp((*a.A_log)[h]);
      Eigen::VectorXd step(Q), cumsum(Q);
      double running = 0.0;
      for (std::int64_t l = 0; l < Q; ++l) {
        step(l) = A * softplus_thr20((*a.dt)[(bc * Q + l) * H + h]);  // softplus only: no bias, no clamp
        running += step(l);
        cumsum(l) = running;
      }
      const std::int64_t vec = ((b * H + h) * NC + c) * Q;
      Eigen::Map<Eigen::VectorXd>(A_cumsum.data() + vec, Q) = cumsum;
      Eigen::Map<Eigen::VectorXd>(decay.data() + vec, Q) = decay_states(cumsum);
      // exp(0) = 1 exactly on the diagonal; above it the contract's value is exactly 0, written
      // explicitly because a vectorized exp(-inf) need not return exactly 0.
      const Eigen::MatrixXd seg = segsum(step);
      RowMatrix Lh = RowMatrix::Zero(Q, Q);
      for (std::int64_t i = 0; i < Q; ++i)
        for (std::int64_t j = 0; j <= i; ++j) Lh(i, j) = std::exp(seg(i, j));
      strided(L.data() + vec * Q, Q, Q, Q) = Lh;
      const RowMatrix& Gh = gram[static_cast<std::size_t>(h / (H / G))];
      for (std::int64_t i = 0; i < Q; ++i)
        for (std::int64_t j = 0; j < Q; ++j) {
          const std::int64_t flat = ((bc * Q + i) * Q + j) * H + h;
          Gram.data()[flat] = Gh(i, j);
          M.data()[flat] = Gh(i, j) * Lh(i, j);
        }
    }
  }
  Outputs result;
  result.add("L", std::move(L));
  result.add("G", std::move(Gram));
  result.add("M", std::move(M));
  result.add("A_cumsum", std::move(A_cumsum));
  result.add("decay_states", std::move(decay));
  return result;
}

}  // namespace ssd
