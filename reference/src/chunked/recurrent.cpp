// SSDRecurrentFwd, primary form: one decode step per (batch, head) as Eigen array expressions.
#include "eigen_views.h"
#include "gating.h"
#include "ssd/reference/helpers.h"
#include "ssd/reference/oracle.h"
#include "ssd/reference/parallel.h"
#include "ssd/reference/validate.h"

namespace ssd {

Outputs recurrent_chunked(const RecurrentArgs& a) {
  const OpDims d = validate(a);
  const std::int64_t H = d.heads, P = d.headdim, G = d.groups, N = d.dstate;
  Tensor out(DType::f64, {d.batch, H, P});
  Tensor state(DType::f64, a.state->shape(), a.state->values());  // untouched rows keep their input

#pragma omp parallel for schedule(static) if (worth_parallel(d.batch * H, 30 * P * N))
  for (std::int64_t bh = 0; bh < d.batch * H; ++bh) {
    const std::int64_t b = bh / H, h = bh % H, g = d.group_of(h);
    const std::int64_t slot = a.state_batch_indices ? static_cast<std::int64_t>((*a.state_batch_indices)[b]) : b;
    if (slot < 0) continue;  // padding row: output 0, state untouched
    Eigen::ArrayXd dtp(P), x(P);
    for (std::int64_t p = 0; p < P; ++p) {
      const std::int64_t i = bh * P + p;
      // The decode path has no dt_limit clamp: bias and softplus only.
      const double raw = (*a.dt)[i] + (a.dt_bias ? (*a.dt_bias)[h * P + p] : 0.0);
      dtp(p) = a.dt_softplus ? softplus_thr20(raw) : raw;
      x(p) = (*a.x)[i];
    }
    const auto Bv = Eigen::Map<const Eigen::RowVectorXd>(a.B->data() + (b * G + g) * N, N).array();
    const auto Cv = Eigen::Map<const Eigen::VectorXd>(a.C->data() + (b * G + g) * N, N);
    auto A = strided(a.A->data() + h * P * N, P, N, N).array();
    auto M = strided(state.data() + (slot * H + h) * P * N, P, N, N);
    const RowMatrix decay = (A.colwise() * dtp).exp().matrix();
    M = (M.array() * decay.array() + (dtp * x).replicate(1, N) * Bv.replicate(P, 1)).matrix();
    const Eigen::VectorXd y = M * Cv;  // from the new, unrounded state
    for (std::int64_t p = 0; p < P; ++p) {
      const std::int64_t i = bh * P + p;
      double v = y(p) + (a.D ? (*a.D)[h * P + p] * x(p) : 0.0);
      out.data()[i] = a.z ? gate(v, (*a.z)[i]) : v;
    }
  }
  Outputs result;
  result.add("out", std::move(out));
  result.add("state", std::move(state));
  return result;
}

}  // namespace ssd
