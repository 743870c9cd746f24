// SSDChunkCumsumFwd: hand-worked dt pipeline and within-chunk cumsum, both oracle forms.
#include <vector>

#include "test_support.h"

namespace ssd_test {
namespace {

using ssd::ChunkCumsumArgs;

class ChunkCumsumTest : public ::testing::TestWithParam<OracleForm<ChunkCumsumArgs>> {
 protected:
  Outputs run(const ChunkCumsumArgs& args) const { return GetParam().run(args); }
};
INSTANTIATE_TEST_SUITE_P(BothForms, ChunkCumsumTest, ::testing::ValuesIn(kChunkCumsumForms),
                         form_name<ChunkCumsumArgs>);

// Expects dt_out[b,h,:,:] and dA_cumsum[b,h,:,:] (each NC x Q, row-major) exactly.
void expect_row(const Outputs& r, std::int64_t b, std::int64_t h, const std::vector<double>& dt_out,
                const std::vector<double>& dA) {
  const Tensor& t = r.get("dt_out").value;
  const Tensor& a = r.get("dA_cumsum").value;
  const std::int64_t NC = t.dim(2), Q = t.dim(3);
  ASSERT_EQ(static_cast<std::int64_t>(dt_out.size()), NC * Q);
  for (std::int64_t c = 0; c < NC; ++c)
    for (std::int64_t i = 0; i < Q; ++i) {
      const auto k = static_cast<std::size_t>(c * Q + i);
      EXPECT_EQ(t.at({b, h, c, i}), dt_out[k]) << "dt_out b" << b << " h" << h << " c" << c << " i" << i;
      EXPECT_EQ(a.at({b, h, c, i}), dA[k]) << "dA_cumsum b" << b << " h" << h << " c" << c << " i" << i;
    }
}

TEST_P(ChunkCumsumTest, RaggedLastChunkTwoHeads) {
  // S = 5, Q = 2: chunks [t0 t1] [t2 t3] [t4 pad].
  const Tensor dt = f32({1, 5, 2}, {1, 2,     // t0: h0, h1
                                    2, 0.5,   // t1
                                    3, 4,     // t2
                                    4, 1,     // t3
                                    5, 8});   // t4
  const Tensor A = f32({2}, {-1, -0.5});
  const Outputs r = run({.dt = &dt, .A = &A, .chunk_size = 2, .dt_limit = {}});
  EXPECT_EQ(r.get("dt_out").value.shape(), (Shape{1, 2, 3, 2}));
  EXPECT_EQ(r.get("dA_cumsum").value.shape(), (Shape{1, 2, 3, 2}));
  EXPECT_EQ(r.get("dt_out").value.dtype(), DType::f64);
  // h0, a = -dt: c0 [-1, -1-2], c1 [-3, -3-4], c2 [-5, flat -5] with dt_out 0 in the padded slot.
  expect_row(r, 0, 0, {1, 2, 3, 4, 5, 0}, {-1, -3, -3, -7, -5, -5});
  // h1, a = -0.5*dt = [-1, -0.25, -2, -0.5, -4]: c0 [-1, -1.25], c1 [-2, -2.5], c2 [-4, -4].
  expect_row(r, 0, 1, {2, 0.5, 4, 1, 8, 0}, {-1, -1.25, -2, -2.5, -4, -4});
}

TEST_P(ChunkCumsumTest, BatchesAreIndependentAndAZeroGivesZeroCumsum) {
  const Tensor dt = f32({2, 2, 2}, {1, 7,      // b0 t0: h0, h1
                                    1, 9,      // b0 t1
                                    3, 0.5,    // b1 t0
                                    0.5, 2});  // b1 t1
  const Tensor A = f32({2}, {-2, 0});
  const Outputs r = run({.dt = &dt, .A = &A, .chunk_size = 2, .dt_limit = {}});
  expect_row(r, 0, 0, {1, 1}, {-2, -4});     // -2*1, -2*1 - 2*1
  expect_row(r, 1, 0, {3, 0.5}, {-6, -7});   // -2*3, -6 - 2*0.5
  expect_row(r, 0, 1, {7, 9}, {0, 0});       // A = 0
  expect_row(r, 1, 1, {0.5, 2}, {0, 0});
}

TEST_P(ChunkCumsumTest, SequenceShorterThanChunk) {
  // S = 2 < Q = 4: one chunk, two padded slots: dt_out 0 there and the cumsum flat.
  const Tensor dt = f32({1, 2, 1}, {1, 2});
  const Tensor A = f32({1}, {-1});
  const Outputs r = run({.dt = &dt, .A = &A, .chunk_size = 4, .dt_limit = {}});
  EXPECT_EQ(r.get("dA_cumsum").value.shape(), (Shape{1, 1, 1, 4}));
  expect_row(r, 0, 0, {1, 2, 0, 0}, {-1, -3, -3, -3});
}

TEST_P(ChunkCumsumTest, SingleToken) {
  const Tensor dt = f32({1, 1, 1}, {0.5});
  const Tensor A = f32({1}, {-4});
  const Outputs r = run({.dt = &dt, .A = &A, .chunk_size = 3, .dt_limit = {}});
  expect_row(r, 0, 0, {0.5, 0, 0}, {-2, -2, -2});
}

TEST_P(ChunkCumsumTest, ChunkSizeOne) {
  // Q = 1: every token is its own chunk; the cumsum restarts each time.
  const Tensor dt = f32({1, 3, 1}, {1, 2, 3});
  const Tensor A = f32({1}, {-1});
  const Outputs r = run({.dt = &dt, .A = &A, .chunk_size = 1, .dt_limit = {}});
  expect_row(r, 0, 0, {1, 2, 3}, {-1, -2, -3});
}

TEST_P(ChunkCumsumTest, DtBiasThenDefaultClamp) {
  const Tensor dt = f32({1, 2, 2}, {-1, 0,     // t0: h0, h1
                                    0.5, 1});  // t1
  const Tensor bias = f32({2}, {1.5, -0.25});
  const Tensor A = f32({2}, {-1, -2});
  const Outputs r = run({.dt = &dt, .A = &A, .chunk_size = 2, .dt_bias = &bias, .dt_limit = {}});
  // h0: raw = [-1 + 1.5, 0.5 + 1.5] = [0.5, 2]; dA = [-0.5, -2.5].
  expect_row(r, 0, 0, {0.5, 2}, {-0.5, -2.5});
  // h1: raw = [-0.25, 0.75]; the default lo = 0 clamps -0.25 to 0; dA = [0, -1.5].
  expect_row(r, 0, 1, {0, 0.75}, {0, -1.5});
}

TEST_P(ChunkCumsumTest, SoftplusAndItsThreshold) {
  // softplus(0) = ln 2; softplus(25) = 25 (threshold 20); softplus(20) = 20 + log1p(e^-20).
  const Tensor dt = f32({1, 3, 1}, {0, 25, 20});
  const Tensor A = f32({1}, {-1});
  const Outputs r = run({.dt = &dt, .A = &A, .chunk_size = 4, .dt_softplus = true, .dt_limit = {}});
  const double sp20 = 20.0 + std::log1p(e(-20));
  EXPECT_REL(at(r, "dt_out", {0, 0, 0, 0}), kLn2);
  EXPECT_EQ(at(r, "dt_out", {0, 0, 0, 1}), 25.0);
  EXPECT_REL(at(r, "dt_out", {0, 0, 0, 2}), sp20);
  EXPECT_EQ(at(r, "dt_out", {0, 0, 0, 3}), 0.0);  // padded slot: 0 even though softplus(0) = ln 2
  EXPECT_REL(at(r, "dA_cumsum", {0, 0, 0, 0}), -kLn2);
  EXPECT_REL(at(r, "dA_cumsum", {0, 0, 0, 1}), -(kLn2 + 25));
  EXPECT_REL(at(r, "dA_cumsum", {0, 0, 0, 2}), -(kLn2 + 25 + sp20));
  EXPECT_EQ(at(r, "dA_cumsum", {0, 0, 0, 3}), at(r, "dA_cumsum", {0, 0, 0, 2}));  // flat tail
}

TEST_P(ChunkCumsumTest, SoftplusAfterBias) {
  // raw = dt + bias = [-1 + 1, 24 + 1] = [0, 25] -> [ln 2, 25]; Q = 1 so each chunk is one token.
  const Tensor dt = f32({1, 2, 1}, {-1, 24});
  const Tensor bias = f32({1}, {1});
  const Tensor A = f32({1}, {-2});
  const Outputs r = run({.dt = &dt, .A = &A, .chunk_size = 1, .dt_bias = &bias, .dt_softplus = true, .dt_limit = {}});
  EXPECT_REL(at(r, "dt_out", {0, 0, 0, 0}), kLn2);
  EXPECT_EQ(at(r, "dt_out", {0, 0, 1, 0}), 25.0);
  EXPECT_REL(at(r, "dA_cumsum", {0, 0, 0, 0}), -2 * kLn2);
  EXPECT_EQ(at(r, "dA_cumsum", {0, 0, 1, 0}), -50.0);
}

TEST_P(ChunkCumsumTest, NegativeDtBecomesZeroWithoutSoftplus) {
  // Default dt_limit = (0, inf) applies even without softplus.
  const Tensor dt = f32({1, 3, 1}, {-2, 3, -0.5});
  const Tensor A = f32({1}, {-1});
  const Outputs r = run({.dt = &dt, .A = &A, .chunk_size = 3, .dt_limit = {}});
  expect_row(r, 0, 0, {0, 3, 0}, {0, -3, -3});
}

TEST_P(ChunkCumsumTest, FiniteDtLimit) {
  const Tensor dt = f32({1, 4, 1}, {0.25, 1, 3, -1});
  const Tensor A = f32({1}, {-1});
  const Outputs r = run({.dt = &dt, .A = &A, .chunk_size = 4, .dt_limit = {0.5, 2.0}});
  // clamp to [0.5, 2]: [0.5, 1, 2, 0.5]; cumsum of -dt': [-0.5, -1.5, -3.5, -4].
  expect_row(r, 0, 0, {0.5, 1, 2, 0.5}, {-0.5, -1.5, -3.5, -4});
}

TEST_P(ChunkCumsumTest, DtLimitAfterSoftplus) {
  // softplus(-5) = 0.0067 -> lo 0.5; softplus(0) = ln 2 stays; softplus(3) = 3.049 -> hi 2.
  const Tensor dt = f32({1, 3, 1}, {-5, 0, 3});
  const Tensor A = f32({1}, {-1});
  const Outputs r = run({.dt = &dt, .A = &A, .chunk_size = 3, .dt_softplus = true, .dt_limit = {0.5, 2.0}});
  EXPECT_EQ(at(r, "dt_out", {0, 0, 0, 0}), 0.5);
  EXPECT_REL(at(r, "dt_out", {0, 0, 0, 1}), kLn2);
  EXPECT_EQ(at(r, "dt_out", {0, 0, 0, 2}), 2.0);
  EXPECT_EQ(at(r, "dA_cumsum", {0, 0, 0, 0}), -0.5);
  EXPECT_REL(at(r, "dA_cumsum", {0, 0, 0, 1}), -0.5 - kLn2);
  EXPECT_REL(at(r, "dA_cumsum", {0, 0, 0, 2}), -2.5 - kLn2);
}

TEST_P(ChunkCumsumTest, PaddingIsZeroedAfterTheClamp) {
  // With lo = 0.5 a padded slot is still 0 (padding comes after the clamp), and the cumsum is flat.
  const Tensor dt = f32({1, 3, 1}, {1, 2, 1});
  const Tensor A = f32({1}, {-1});
  const Outputs r = run({.dt = &dt, .A = &A, .chunk_size = 2, .dt_limit = {0.5, kInf}});
  expect_row(r, 0, 0, {1, 2, 1, 0}, {-1, -3, -1, -1});
}

}  // namespace
}  // namespace ssd_test
