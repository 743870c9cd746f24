// Bounds of SSDRecurrentFwd (decode steps), by direct loops over (row, head, p, token, n); the
// decode plan says where each row reads, stores, and where its tokens lie.
#include <cmath>
#include <vector>

#include "common.h"
#include "ops.h"
#include "ssd/reference/bind.h"
#include "ssd/reference/decode_plan.h"
#include "ssd/reference/helpers.h"
#include "ssd/reference/validate.h"

namespace ssd::tolerance {

Bounds recurrent_bounds(const Problem& p, const InputSet& in, const Outputs& oracle) {
  const RecurrentArgs args = bind_recurrent(p, in);
  const DecodePlan plan = decode_plan(args, validate(args));
  const Tensor& state = in.at("state");
  const Tensor& x = in.at("x");
  const Tensor& dt = in.at("dt");
  const Tensor& A = in.at("A");
  const Tensor& B = in.at("B");
  const Tensor& C = in.at("C");
  const Tensor* D = in.find("D");
  const Tensor* z = in.find("z");
  const Tensor* bias = in.find("dt_bias");
  const std::int64_t H = p.h, P = p.p, N = p.n, G = p.g, T = plan.tokens;

  // Shadows of the state buffer (zero, hence exact, for slots no row stores), of out and of the
  // state after every token. A padding row's outputs are undefined: their shadows stay 0.
  Tensor state_S(DType::f64, state.shape()), state_E(DType::f64, state.shape());
  Tensor out_S(DType::f64, x.shape()), out_E(DType::f64, x.shape());
  const Shape inter_shape{p.b, T, H, P, N};
  Tensor inter_S(DType::f64, p.inter ? inter_shape : Shape{0}), inter_E(DType::f64, p.inter ? inter_shape : Shape{0});
  const Tensor& out = oracle.get("out").value;
  std::vector<double> S(static_cast<std::size_t>(N)), E(static_cast<std::size_t>(N));
  std::vector<bool> overflowed(static_cast<std::size_t>(N));
  for (std::int64_t b = 0; b < p.b; ++b) {
    const DecodeRow& row = plan.rows[static_cast<std::size_t>(b)];
    if (row.padding()) continue;
    for (std::int64_t h = 0; h < H; ++h) {
      const std::int64_t g = h / (H / G);
      for (std::int64_t q = 0; q < P; ++q) {
        // The row starts from its read slot's stored value: exact, no error yet.
        for (std::int64_t n = 0; n < N; ++n) {
          S[static_cast<std::size_t>(n)] = std::fabs(state[((row.read * H + h) * P + q) * N + n]);
          E[static_cast<std::size_t>(n)] = 0.0;
          overflowed[static_cast<std::size_t>(n)] = false;
        }
        bool state_may_overflow = false;  // sticky: an inf state stays inf (or NaN) for the row's later tokens
        for (std::int64_t t = 0; t < row.length; ++t) {
          const std::int64_t token = (row.first_token + t) * H + h, i = token * P + q;
          const std::int64_t bc = ((row.first_token + t) * G + g) * N, grid = (b * T + t) * H + h;
          const double b_hq = bias ? (*bias)[h * P + q] : 0.0;
          const double raw = dt[i] + b_hq;
          const double dtp = p.softplus ? softplus_thr20(raw) : raw;
          // Absolute error of dt' in units of u: the bias add, and softplus's ulp of (1 + exp(x)).
          const double dt_error = std::fabs(raw) + std::fabs(b_hq) + (p.softplus ? 1.0 + std::fabs(dtp) : 0.0);
          double y_S = 0.0, y_E = 0.0;
          for (std::int64_t n = 0; n < N; ++n) {
            const std::size_t k = static_cast<std::size_t>(n);
            const double a_n = A[(h * P + q) * N + n], arg = a_n * dtp;
            // A decay factor at fp32's range end overflows in the contract's arithmetic itself
            // (negative dt' is legal here: no clamp): an infinite shadow demands nothing. Even a
            // zero state does not save it: 0 x inf is NaN.
            const double decay = std::exp(arg);
            overflowed[k] = overflowed[k] || decay > kFp32OverflowShadow;
            const double carried = overflowed[k] ? HUGE_VAL : S[k] * decay;
            const double input = std::fabs(dtp * B[bc + n] * x[i]);
            // The exponent's error: rounding of A*dt' and dt's own error times |A| on the carried
            // state; dt's error also scales the input term; earlier tokens' exponent errors decay along.
            E[k] = E[k] * decay + carried * (std::fabs(arg) + std::fabs(a_n) * dt_error) + std::fabs(B[bc + n] * x[i]) * dt_error;
            S[k] = carried + input;
            overflowed[k] = overflowed[k] || !(S[k] <= kFp32OverflowShadow);
            state_may_overflow = state_may_overflow || overflowed[k];
            y_S += S[k] * std::fabs(C[bc + n]);
            y_E += E[k] * std::fabs(C[bc + n]);
            if (p.inter) {
              const std::int64_t at = (grid * P + q) * N + n;
              inter_S.data()[at] = overflowed[k] ? HUGE_VAL : S[k];
              inter_E.data()[at] = E[k];
            }
            if (const std::int64_t w = row.writes[static_cast<std::size_t>(t)]; w >= 0) {
              const std::int64_t si = ((w * H + h) * P + q) * N + n;
              state_S.data()[si] = overflowed[k] ? HUGE_VAL : S[k];
              state_E.data()[si] = E[k];
            }
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
  }
  // Each token adds two roundings to a state element (the decayed state plus the input term), and
  // the state after T tokens carries all of them; out adds its sum over N on top.
  Bounds bounds;
  bounds.add(make_bound(p, oracle.get("out"), {&out_S, &out_E, 0.0, N + 2 * (T - 1)}));
  bounds.add(make_bound(p, oracle.get("state"), {&state_S, &state_E, 0.0, 2 * T}));
  if (p.inter) bounds.add(make_bound(p, oracle.get("intermediate_states"), {&inter_S, &inter_E, 0.0, 2 * T}));
  return bounds;
}

}  // namespace ssd::tolerance
