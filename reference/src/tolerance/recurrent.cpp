// Bounds of SSDRecurrentFwd (one decode step), by direct loops over (b, h, p, n).
#include <cmath>

#include "common.h"
#include "ops.h"
#include "ssd/reference/helpers.h"

namespace ssd::tolerance {

Bounds recurrent_bounds(const Problem& p, const InputSet& in, const Outputs& oracle) {
  const Tensor& state = in.at("state");
  const Tensor& x = in.at("x");
  const Tensor& dt = in.at("dt");
  const Tensor& A = in.at("A");
  const Tensor& B = in.at("B");
  const Tensor& C = in.at("C");
  const Tensor* D = in.find("D");
  const Tensor* z = in.find("z");
  const Tensor* bias = in.find("dt_bias");
  const Tensor* slots = in.find("state_batch_indices");
  const std::int64_t H = p.h, P = p.p, N = p.n, G = p.g;

  // Shadows of the state (zero, hence exact, for rows the step does not touch) and of out.
  Tensor state_S(DType::f64, state.shape()), state_E(DType::f64, state.shape());
  Tensor out_S(DType::f64, {p.b, H, P}), out_E(DType::f64, {p.b, H, P});
  const Tensor& out = oracle.get("out").value;
  for (std::int64_t b = 0; b < p.b; ++b) {
    const std::int64_t slot = slots ? static_cast<std::int64_t>((*slots)[b]) : b;
    if (slot < 0) continue;  // padding row: out exactly 0, state untouched
    for (std::int64_t h = 0; h < H; ++h) {
      const std::int64_t g = h / (H / G);
      for (std::int64_t q = 0; q < P; ++q) {
        const std::int64_t i = (b * H + h) * P + q;
        const double b_hq = bias ? (*bias)[h * P + q] : 0.0;
        const double raw = dt[i] + b_hq;
        const double dtp = p.softplus ? softplus_thr20(raw) : raw;
        // Absolute error of dt' in units of u: the bias add, and softplus's ulp of (1 + exp(x)).
        const double dt_error = std::fabs(raw) + std::fabs(b_hq) + (p.softplus ? 1.0 + std::fabs(dtp) : 0.0);
        double y_S = 0.0, y_E = 0.0;
        bool state_may_overflow = false;
        for (std::int64_t n = 0; n < N; ++n) {
          const std::int64_t si = ((slot * H + h) * P + q) * N + n;
          const double arg = A[(h * P + q) * N + n] * dtp;
          // A decay factor at fp32's range end overflows in the contract's arithmetic itself
          // (negative dt' is legal here: no clamp): an infinite shadow demands nothing. Even a
          // zero state does not save it: 0 x inf is NaN.
          const double decay = std::exp(arg);
          const double carried = decay > kFp32OverflowShadow ? HUGE_VAL : std::fabs(state[si]) * decay;
          const double input = std::fabs(dtp * B[(b * G + g) * N + n] * x[i]);
          const double S = carried + input;
          // The exponent's error: rounding of A*dt' and dt's own error times |A|; dt's error also
          // scales the input term.
          const double E = carried * (std::fabs(arg) + std::fabs(A[(h * P + q) * N + n]) * dt_error) +
                           std::fabs(B[(b * G + g) * N + n] * x[i]) * dt_error;
          state_S.data()[si] = S;
          state_E.data()[si] = E;
          state_may_overflow = state_may_overflow || !(S <= kFp32OverflowShadow);
          y_S += S * std::fabs(C[(b * G + g) * N + n]);
          y_E += E * std::fabs(C[(b * G + g) * N + n]);
        }
        if (D) y_S += std::fabs((*D)[h * P + q] * x[i]);
        if (z) {
          const double g_z = std::fabs((*z)[i] / (1.0 + std::exp(-(*z)[i])));
          y_S = g_z * y_S + std::fabs(out[i]);
          y_E *= g_z;
        }
        // `out` reads the new state unrounded, in fp32: where one of its N values may be inf, the
        // sum over n is inf or NaN however small C[n] or silu(z) scales it, so out's own shadow
        // can sit far below fp32's range while its fp32 evaluation has already overflowed.
        // Nothing is demanded of that element (the state element itself is exempt in make_bound).
        out_S.data()[i] = state_may_overflow ? HUGE_VAL : y_S;
        out_E.data()[i] = y_E;
      }
    }
  }
  Bounds bounds;
  bounds.add(make_bound(p, oracle.get("out"), {&out_S, &out_E, 0.0, N}));
  bounds.add(make_bound(p, oracle.get("state"), {&state_S, &state_E, 0.0, 2}));
  return bounds;
}

}  // namespace ssd::tolerance
