// Bounds of MambaDiscretizeSegsum: the cumsum and segment sums charge their exponents, G is a
// dot product over N, M = G * L rounded once; L's diagonal and decay_states' last element exact.
#include <cmath>

#include "common.h"
#include "ops.h"
#include "ssd/reference/helpers.h"

namespace ssd::tolerance {

Bounds discretize_segsum_bounds(const Problem& p, const InputSet& in, const Outputs& oracle) {
  const std::int64_t NC = p.s / p.q, Q = p.q, H = p.h, G = p.g, N = p.n;
  const Tensor& dt = in.at("dt");
  const Tensor& A_log = in.at("A_log");
  const Tensor& Bm = in.at("B");
  const Tensor& Cm = in.at("C");
  const Tensor& L = oracle.get("L").value;
  const Tensor& Gram = oracle.get("G").value;
  const Tensor& decay = oracle.get("decay_states").value;
  const Tensor& cumsum = oracle.get("A_cumsum").value;

  Tensor cs_S(DType::f64, cumsum.shape());  // error magnitude of A_cumsum, units of u
  Tensor decay_S(DType::f64, decay.shape()), decay_E(DType::f64, decay.shape());
  Tensor L_S(DType::f64, L.shape()), L_E(DType::f64, L.shape());
  Tensor G_S(DType::f64, Gram.shape()), M_S(DType::f64, Gram.shape()), M_exponent(DType::f64, Gram.shape());
  for (std::int64_t b = 0; b < p.b; ++b)
    for (std::int64_t c = 0; c < NC; ++c)
      for (std::int64_t h = 0; h < H; ++h) {
        const double A = std::exp(A_log[h]);  // |A|
        const std::int64_t vec = ((b * H + h) * NC + c) * Q;
        // Per step a = A * softplus(dt): the product's rounding, A's own (exp), and softplus's
        // absolute error of about one ulp of (1 + exp(x)).
        std::vector<double> step_error(static_cast<std::size_t>(Q));
        double running = 0.0;
        for (std::int64_t l = 0; l < Q; ++l) {
          const double sp = softplus_thr20(dt[((b * NC + c) * Q + l) * H + h]);
          step_error[static_cast<std::size_t>(l)] = A * (2.0 * sp + 1.0 + sp);
          running += step_error[static_cast<std::size_t>(l)];
          cs_S.data()[vec + l] = running;
        }
        for (std::int64_t l = 0; l < Q; ++l) {
          decay_S.data()[vec + l] = decay[vec + l];
          decay_E.data()[vec + l] = decay[vec + l] * (cs_S[vec + Q - 1] + cs_S[vec + l]);
        }
        // L[i][j] = exp(sum of steps j+1..i): charged as the larger of the stable sum and a
        // difference of the two cumsums (cs_i + cs_j), so either evaluation passes.
        for (std::int64_t i = 0; i < Q; ++i)
          for (std::int64_t j = 0; j < i; ++j) {
            const std::int64_t at = (vec + i) * Q + j;
            L_S.data()[at] = L[at];
            L_E.data()[at] = L[at] * (cs_S[vec + i] + cs_S[vec + j]);
          }
      }
  for (std::int64_t b = 0; b < p.b; ++b)
    for (std::int64_t c = 0; c < NC; ++c)
      for (std::int64_t i = 0; i < Q; ++i)
        for (std::int64_t j = 0; j < Q; ++j)
          for (std::int64_t h = 0; h < H; ++h) {
            const std::int64_t g = h / (H / G);
            double s = 0.0;
            for (std::int64_t n = 0; n < N; ++n)
              s += std::fabs(Cm[(((b * NC + c) * Q + i) * G + g) * N + n] * Bm[(((b * NC + c) * Q + j) * G + g) * N + n]);
            const std::int64_t at = (((b * NC + c) * Q + i) * Q + j) * H + h;
            const std::int64_t l_at = (((b * H + h) * NC + c) * Q + i) * Q + j;
            G_S.data()[at] = s;
            // M = G * L in fp32: G's accumulation error scaled by L, L's exponent error by |G|,
            // plus the product's own rounding (|M| in the shadow).
            const double Lv = i == j ? 1.0 : L[l_at];
            M_S.data()[at] = s * Lv + std::fabs(Gram[at]) * Lv;
            M_exponent.data()[at] = std::fabs(Gram[at]) * L_E[l_at];
          }
  Bounds bounds;
  OutputBound L_bound = make_bound(p, oracle.get("L"), {&L_S, &L_E, 0.0, Q});
  for (std::int64_t row = 0; row < L.numel() / Q; ++row) mark_exact(L_bound, row * Q + row % Q);  // unit diagonal
  bounds.add(std::move(L_bound));
  bounds.add(make_bound(p, oracle.get("G"), {&G_S, nullptr, 0.0, N}));
  bounds.add(make_bound(p, oracle.get("M"), {&M_S, &M_exponent, 0.0, N}));
  BoundTerms cumsum_terms{&cs_S, nullptr, 0.0, Q};
  cumsum_terms.running_sum = true;
  bounds.add(make_bound(p, oracle.get("A_cumsum"), cumsum_terms));
  OutputBound decay_bound = make_bound(p, oracle.get("decay_states"), {&decay_S, &decay_E, 0.0, Q});
  for (std::int64_t vec = 0; vec < decay.numel() / Q; ++vec) mark_exact(decay_bound, vec * Q + Q - 1);
  bounds.add(std::move(decay_bound));
  return bounds;
}

}  // namespace ssd::tolerance
