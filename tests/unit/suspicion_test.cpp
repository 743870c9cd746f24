// The statistical verdict SUSPECT on hand-worked error vectors: sigma in quadrature, the normwise
// ratio, the threshold and element minimum, and that a FAILED case stays FAILED.
#include <gtest/gtest.h>

#include <cmath>

#include "ssd/reference/op_spec.h"
#include "ssd/reference/problem.h"
#include "ssd/reference/suspicion.h"
#include "ssd/reference/tolerance.h"
#include "ssd/reference/verdict.h"

namespace {

TEST(Suspicion, SigmaAddsTheTermsInQuadrature) {
  EXPECT_DOUBLE_EQ(ssd::element_sigma(3, 4, 0, 0, 0), 5.0);
  EXPECT_DOUBLE_EQ(ssd::element_sigma(1, 2, 2, 0, 4), 5.0);  // sqrt(1 + 4 + 4 + 16)
  EXPECT_DOUBLE_EQ(ssd::element_sigma(0, 0, 0, 12, 5), 13.0);
}

TEST(Suspicion, RatioIsTheNormOverTheScale) {
  EXPECT_DOUBLE_EQ(ssd::normwise_ratio(25.0, 100.0), 0.5);  // ||e|| 5, scale 10
  EXPECT_DOUBLE_EQ(ssd::normwise_ratio(1.0, 0.0), 0.0);     // no scale, no statistic
}

TEST(Suspicion, ThresholdAndElementMinimum) {
  const ssd::SuspicionConstants c{2.0, 10};
  EXPECT_FALSE(ssd::is_suspect(10, 2.0, c));  // at the threshold: not above it
  EXPECT_TRUE(ssd::is_suspect(10, 2.01, c));
  EXPECT_FALSE(ssd::is_suspect(9, 100.0, c));  // too few elements for a random walk
}

// One output "y" of n elements, y* = 1, bound 10 and sigma `sigma` each; `got` = y* + error.
struct Case {
  ssd::Outputs oracle, got;
  ssd::Bounds bounds;
  Case(std::int64_t n, double sigma, const std::vector<double>& error) {
    ssd::Tensor want(ssd::DType::f64, {n}), value(ssd::DType::f64, {n});
    ssd::OutputBound b{"y", ssd::Tensor(ssd::DType::f64, {n}), {}, 1, ssd::Tensor(ssd::DType::f64, {n})};
    for (std::int64_t i = 0; i < n; ++i) {
      want.data()[i] = 1.0;
      value.data()[i] = 1.0 + (i < static_cast<std::int64_t>(error.size()) ? error[static_cast<std::size_t>(i)] : 0.0);
      b.bound.data()[i] = 10.0;
      b.sigma.data()[i] = sigma;
    }
    oracle.add("y", want);
    got.add("y", value);
    bounds.add(std::move(b));
  }
  ssd::CaseJudgement judge() const {
    return ssd::judge(ssd::parse_problem("chunk_cumsum:f32 b1 s64 h1 q64 seed=1"), oracle, bounds, got);
  }
};

TEST(Suspicion, SmallErrorNormPasses) {
  // 64 elements of sigma 0.5: scale sqrt(64 x 0.25) = 4; errors 0.6 and 0.8: ||e|| = 1; ratio 1/4.
  const ssd::CaseJudgement j = Case(64, 0.5, {0.6, 0.8}).judge();
  ASSERT_EQ(j.outputs.size(), 1u);
  EXPECT_EQ(j.outputs[0].stat_elements, 64);
  EXPECT_NEAR(j.outputs[0].error_norm, 1.0, 1e-12);
  EXPECT_NEAR(j.outputs[0].scale, 4.0, 1e-12);
  EXPECT_NEAR(j.outputs[0].ratio(), 0.25, 1e-12);
  EXPECT_EQ(j.verdict, ssd::Verdict::passed);
}

TEST(Suspicion, LargeErrorNormWithinEveryBoundIsSuspect) {
  // 100 elements of sigma 0.01: scale 0.1. Every error 0.02 x threshold (far inside the bound 10):
  // ||e|| = 10 x 0.02 T = 0.2 T, ratio 2 T.
  const double T = ssd::kSuspicion.threshold;
  const ssd::CaseJudgement j = Case(100, 0.01, std::vector<double>(100, 0.02 * T)).judge();
  EXPECT_NEAR(j.outputs[0].ratio(), 2 * T, 1e-9);
  EXPECT_LT(j.max_r(), 1.0);
  EXPECT_EQ(j.verdict, ssd::Verdict::suspect);
  EXPECT_EQ(ssd::verdict_name(j.verdict), "SUSPECT");
  EXPECT_TRUE(ssd::is_alarm(j.verdict));
  EXPECT_FALSE(ssd::is_failure(j.verdict));
  EXPECT_NE(ssd::describe(j).find("SUSPECT"), std::string::npos);
}

TEST(Suspicion, FailedStaysFailed) {
  // The same large error norm, and one element over its bound (error 11 > 10): FAILED.
  const double T = ssd::kSuspicion.threshold;
  std::vector<double> error(100, 0.02 * T);
  error[7] = 11.0;
  EXPECT_EQ(Case(100, 0.01, error).judge().verdict, ssd::Verdict::failed);
}

TEST(Suspicion, TooFewElementsGiveNoStatisticalVerdict) {
  const std::int64_t n = ssd::kSuspicion.min_elements - 1;
  const ssd::CaseJudgement j = Case(n, 0.01, std::vector<double>(static_cast<std::size_t>(n), 1.0)).judge();
  EXPECT_EQ(j.verdict, ssd::Verdict::passed);
}

TEST(Suspicion, BoundsWithoutSigmaGiveNoStatisticalVerdict) {
  Case c(100, 0.01, std::vector<double>(100, 1.0));
  ssd::Bounds stripped;
  ssd::OutputBound b = c.bounds.get("y");
  b.sigma = ssd::Tensor();
  stripped.add(std::move(b));
  c.bounds = stripped;
  EXPECT_EQ(c.judge().verdict, ssd::Verdict::passed);
}

}  // namespace

namespace {

// sigma of chunk_coupling with N = 1 in f32, worked by hand: CB[i][k] = C_i B_k, a single product,
// so S = |C_i B_k| = |y*|, n = 1, phi = 1 + 4, no intermediate rounding (f32 operands), E = 0:
// sigma = sqrt((2^-24 y*)^2 + tau^2 + (2^-24 x 5 x |y*|)^2) = 2^-24 |y*| sqrt(26) (+ tau, 2^-126).
TEST(Suspicion, SigmaOfASingleProductByHand) {
  const ssd::Problem p = ssd::parse_problem("chunk_coupling:f32 b1 s4 g1 n1 q4 seed=1");
  const ssd::InputSet in = ssd::make_inputs(p);
  const ssd::Outputs oracle = ssd::op_spec(p.op).chunked(p, in);
  const ssd::Bounds bounds = ssd::compute_bounds(p, in, oracle);
  const ssd::Output& cb = oracle.get("CB");
  const ssd::OutputBound& b = bounds.get("CB");
  ASSERT_EQ(b.sigma.numel(), cb.value.numel());
  int checked = 0;
  for (std::int64_t i = 0; i < cb.value.numel(); ++i) {
    if (!cb.is_defined(i) || b.is_exact(i)) continue;
    const double y = std::fabs(cb.value[i]);
    const double want = std::sqrt(std::pow(0x1p-24 * y, 2) * 26 + std::pow(0x1p-126, 2));
    EXPECT_NEAR(b.sigma[i], want, 1e-12 * want) << i;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
