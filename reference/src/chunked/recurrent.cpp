// SSDRecurrentFwd, primary form: each (row, head) runs its tokens as Eigen array expressions on a
// P x N state matrix held apart from the buffer, stored where the decode plan says; the plan also
// says where a row's tokens lie (b*T, or cu_seqlens[b] in a varlen call).
#include "eigen_views.h"
#include "gating.h"
#include "ssd/reference/decode_plan.h"
#include "ssd/reference/helpers.h"
#include "ssd/reference/oracle.h"
#include "ssd/reference/parallel.h"
#include "ssd/reference/validate.h"

namespace ssd {

Outputs recurrent_chunked(const RecurrentArgs& a) {
  const OpDims d = validate(a);
  const DecodePlan plan = decode_plan(a, d);
  const std::int64_t H = d.heads, P = d.headdim, G = d.groups, N = d.dstate, T = plan.tokens;
  Tensor out(DType::f64, a.x->shape());
  Tensor state(DType::f64, a.state->shape(), a.state->values());  // slots no row stores keep their input
  Tensor inter(DType::f64, a.intermediate_states ? Shape{d.batch, T, H, P, N} : Shape{0});
  // Rows store distinct slots that no other row reads (decode_plan), so (row, head) pairs are independent.
#pragma omp parallel for schedule(static) if (worth_parallel(d.batch * H, 30 * T * P * N))
  for (std::int64_t bh = 0; bh < d.batch * H; ++bh) {
    const std::int64_t b = bh / H, h = bh % H, g = d.group_of(h);
    const DecodeRow& row = plan.rows[static_cast<std::size_t>(b)];
    if (row.padding()) continue;
    RowMatrix M = strided(a.state->data() + (row.read * H + h) * P * N, P, N, N);
    const auto A = strided(a.A->data() + h * P * N, P, N, N).array();
    Eigen::ArrayXd dtp(P), x(P);
    for (std::int64_t t = 0; t < row.length; ++t) {
      const std::int64_t token = (row.first_token + t) * H + h;  // flat (token, h) of x
      const std::int64_t grid = (b * T + t) * H + h;             // flat (b, t, h) of intermediate_states
      for (std::int64_t p = 0; p < P; ++p) {
        // The decode path has no dt_limit clamp: bias and softplus only.
        const double raw = (*a.dt)[token * P + p] + (a.dt_bias ? (*a.dt_bias)[h * P + p] : 0.0);
        dtp(p) = a.dt_softplus ? softplus_thr20(raw) : raw;
        x(p) = (*a.x)[token * P + p];
      }
      const std::int64_t bc = ((row.first_token + t) * G + g) * N;
      const auto Bv = Eigen::Map<const Eigen::RowVectorXd>(a.B->data() + bc, N).array();
      const auto Cv = Eigen::Map<const Eigen::VectorXd>(a.C->data() + bc, N);
      M = (M.array() * (A.colwise() * dtp).exp() + (dtp * x).replicate(1, N) * Bv.replicate(P, 1)).matrix();
      const Eigen::VectorXd y = M * Cv;  // from the new, unrounded state
      for (std::int64_t p = 0; p < P; ++p) {
        const double v = y(p) + (a.D ? (*a.D)[h * P + p] * x(p) : 0.0);
        out.data()[token * P + p] = a.z ? gate(v, (*a.z)[token * P + p]) : v;
      }
      if (a.intermediate_states) strided(inter.data() + grid * P * N, P, N, N) = M;
      if (const std::int64_t w = row.writes[static_cast<std::size_t>(t)]; w >= 0)
        strided(state.data() + (w * H + h) * P * N, P, N, N) = M;
    }
  }
  Outputs result;
  // A padding row's outputs are "don't care": undefined, never compared.
  result.add("out", std::move(out), token_defined_mask(plan, H * P, plan.packed));
  result.add("state", std::move(state));
  if (a.intermediate_states)
    result.add("intermediate_states", std::move(inter), token_defined_mask(plan, H * P * N, false));
  return result;
}

}  // namespace ssd
