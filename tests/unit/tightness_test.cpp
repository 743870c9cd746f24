// The derived pieces of the full-size tightenings (docs/tolerance.md, "Headroom at full size"),
// checked against values computed here independently of the bound code: the softplus allowance
// 8 u (1 + softplus(x)) against fp32 evaluations of log(exp(x) + 1) whose exp and log are off by up
// to 2 ulp (and Triton's exp2-based form), and dt_out's bound worked by hand from its derivation.
#include <gtest/gtest.h>

#include <cmath>

#include "ssd/reference/op_spec.h"
#include "ssd/reference/tolerance.h"

namespace {

constexpr double kU = 0x1p-24;         // u_acc
constexpr double kAllowance = 8.0;     // docs/tolerance.md, "Softplus allowance"

double exact_softplus(double x) { return x > 20.0 ? x : std::log1p(std::exp(x)); }

// v moved by `ulps` units in the last place (fp32).
float moved(float v, int ulps) {
  for (; ulps > 0; --ulps) v = std::nextafter(v, HUGE_VALF);
  for (; ulps < 0; ++ulps) v = std::nextafter(v, -HUGE_VALF);
  return v;
}

TEST(SoftplusAllowance, CoversExpAndLogOffByTwoUlpInFp32) {
  double worst = 0.0;
  for (int k = -20 * 64; k <= 20 * 64; ++k) {
    const float x = static_cast<float>(k) / 64.0f;
    for (int de = -2; de <= 2; ++de)
      for (int dl = -2; dl <= 2; ++dl) {
        const float e = moved(std::exp(x), de);
        const float s = e + 1.0f;  // the add, correctly rounded
        const float l = moved(std::log(s), dl);
        const double sp = exact_softplus(x);
        const double err = std::fabs(static_cast<double>(l) - sp);
        worst = std::max(worst, err / (kU * (1.0 + sp)));
        ASSERT_LE(err, kAllowance * kU * (1.0 + sp)) << "x " << x << " exp " << de << " ulp, log " << dl << " ulp";
      }
  }
  EXPECT_GT(worst, 1.0);  // the perturbations do reach past one unit: the allowance is not vacuous
}

TEST(SoftplusAllowance, CoversTritonsExp2BasedForm) {
  const float log2e = 1.44269504088896340736f;
  for (int k = -20 * 64; k <= 20 * 64; ++k) {
    const float x = static_cast<float>(k) / 64.0f;
    for (int de = -2; de <= 2; ++de) {
      const float e = moved(std::exp2(x * log2e), de);  // exp(x) as exp2(x log2 e), the product rounded
      const float l = std::log(e + 1.0f);
      const double sp = exact_softplus(x);
      ASSERT_LE(std::fabs(static_cast<double>(l) - sp), kAllowance * kU * (1.0 + sp)) << "x " << x << " exp2 " << de << " ulp";
    }
  }
}

// dt_out's bound, worked from its derivation: rounding u_out |dt'| + k u phi(1) |dt'| (the bias add
// and the clamp, relative to dt') + u (8 (1 + dt') + sigmoid(x) |x|) (softplus and the bias add
// through its slope) + tau_out, with rounding = k = 2, phi(1) = 1 + 4.
TEST(DtOutBound, IsOneElementwisePipeline) {
  const ssd::Problem p = ssd::parse_problem("chunk_cumsum:f32 b1 s6 h2 q4 +dt_bias +softplus seed=3");
  const ssd::InputSet in = ssd::make_inputs(p);
  const ssd::Outputs oracle = ssd::op_spec(p.op).chunked(p, in);
  const ssd::Bounds bounds = ssd::compute_bounds(p, in, oracle);
  const ssd::Tensor& dt = in.at("dt");
  const ssd::Tensor& bias = in.at("dt_bias");
  const ssd::Tensor& dt_out = oracle.get("dt_out").value;  // [1, H, NC, Q]
  const ssd::Tensor& bound = bounds.get("dt_out").bound;
  const std::int64_t H = 2, NC = 2, Q = 4;
  int checked = 0;
  for (std::int64_t h = 0; h < H; ++h)
    for (std::int64_t c = 0; c < NC; ++c)
      for (std::int64_t i = 0; i < Q; ++i) {
        const std::int64_t t = c * Q + i, at = (h * NC + c) * Q + i;
        if (t >= p.s) {
          EXPECT_EQ(bound[at], 0.0) << "padded tail is exact";
          continue;
        }
        const double x = dt[t * H + h] + bias[h];
        const double d = dt_out[at];
        ASSERT_EQ(d, exact_softplus(x));  // no clamp binds under the default limit here
        const double sigmoid = 1.0 / (1.0 + std::exp(-x));
        const double want = 2 * kU * d + 2 * kU * 5 * d + kU * (kAllowance * (1 + d) + sigmoid * std::fabs(x)) + 0x1p-126;
        EXPECT_NEAR(bound[at], want, 1e-12 * want) << "t " << t << " h " << h;
        ++checked;
      }
  EXPECT_EQ(checked, 12);
}

}  // namespace
