// The agreement measure used between float64 evaluations, on hand-made outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ssd/reference/agreement.h"

namespace {

ssd::Output output(std::vector<double> v, std::vector<std::uint8_t> defined = {}) {
  const auto n = static_cast<std::int64_t>(v.size());
  return {"y", ssd::Tensor(ssd::DType::f64, {n}, std::move(v)), std::move(defined)};
}

TEST(Agreement, NormwiseRelativeToTheLargestReference) {
  const ssd::Agreement a = ssd::agreement(output({1.0, -4.0, 2.5}), output({1.0, -4.0, 2.0}));
  EXPECT_EQ(a.max_abs_difference, 0.5);
  EXPECT_EQ(a.max_abs_reference, 4.0);
  EXPECT_EQ(a.relative(), 0.125);
  EXPECT_EQ(a.worst, 2);
  EXPECT_EQ(a.compared, 3);
}

TEST(Agreement, IdenticalZerosAgreeExactly) {
  EXPECT_EQ(ssd::agreement(output({0.0, 0.0}), output({0.0, 0.0})).relative(), 0.0);
  EXPECT_TRUE(std::isinf(ssd::agreement(output({1e-300, 0.0}), output({0.0, 0.0})).relative()));
}

TEST(Agreement, UndefinedElementsAreSkippedButMasksMustMatch) {
  const ssd::Agreement skip = ssd::agreement(output({1.0, 99.0}, {1, 0}), output({1.0, -5.0}, {1, 0}));
  EXPECT_EQ(skip.relative(), 0.0);
  EXPECT_EQ(skip.compared, 1);
  const ssd::Agreement differ = ssd::agreement(output({1.0, 2.0}, {1, 1}), output({1.0, 2.0}, {1, 0}));
  EXPECT_FALSE(differ.same_defined);
  EXPECT_TRUE(std::isinf(differ.relative()));
}

TEST(Agreement, NonFiniteValuesAndShapeMismatchNeverAgree) {
  EXPECT_TRUE(std::isinf(ssd::agreement(output({std::nan("")}), output({1.0})).relative()));
  EXPECT_TRUE(std::isinf(ssd::agreement(output({1.0, 2.0}), output({1.0})).relative()));
}

}  // namespace
