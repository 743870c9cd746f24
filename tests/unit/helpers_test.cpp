// Shared building blocks: softplus, the dt pipeline, decays, segsum, the chunk grid, seq_idx rules.
#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ssd/reference/helpers.h"
#include "test_support.h"

namespace ssd_test {
namespace {

using ssd::DtLimit;

TEST(Softplus, ValuesAndThreshold) {
  EXPECT_REL(ssd::softplus_thr20(0.0), kLn2);  // log(1 + e^0) = ln 2
  // softplus(x) = x + softplus(-x): softplus(1) = 1 + log1p(e^-1).
  EXPECT_REL(ssd::softplus_thr20(1.0), 1.0 + std::log1p(e(-1)));
  // Above the threshold 20 the input is returned unchanged (bit-exact).
  EXPECT_EQ(ssd::softplus_thr20(25.0), 25.0);
  EXPECT_EQ(ssd::softplus_thr20(20.5), 20.5);
  // At exactly 20 it is still the smooth function: 20 + log1p(e^-20) = 20 + 2.06e-9.
  EXPECT_REL(ssd::softplus_thr20(20.0), 20.0 + std::log1p(e(-20)));
  EXPECT_GT(ssd::softplus_thr20(20.0), 20.0);
  // Accurate for very negative x (the fp32 kernel would return 0): log1p(e^-30) = e^-30 - e^-60/2 + ...
  EXPECT_REL(ssd::softplus_thr20(-30.0), e(-30) - e(-60) / 2);
}

TEST(ProcessDt, BiasThenSoftplusThenClamp) {
  const DtLimit unlimited{};
  EXPECT_EQ(unlimited.lo, 0.0);
  EXPECT_EQ(unlimited.hi, kInf);
  EXPECT_EQ(ssd::process_dt(1.0, 2.0, false, unlimited), 3.0);           // bias added
  EXPECT_EQ(ssd::process_dt(-3.0, 0.0, false, unlimited), 0.0);          // default lo = 0 clamps, no softplus
  EXPECT_EQ(ssd::process_dt(-1.0, 0.5, false, unlimited), 0.0);          // raw -0.5 -> 0
  EXPECT_REL(ssd::process_dt(-1.0, 1.0, true, unlimited), kLn2);         // softplus(-1 + 1) = ln 2
  // Bias goes in before softplus: softplus(0 + (-1)) = log1p(e^-1) = 0.313..., whereas
  // softplus(0) - 1 = ln2 - 1 < 0 would clamp to 0.
  EXPECT_REL(ssd::process_dt(0.0, -1.0, true, unlimited), std::log1p(e(-1)));
  EXPECT_EQ(ssd::process_dt(30.0, -5.0, true, unlimited), 25.0);         // 25 > 20: identity
  EXPECT_EQ(ssd::process_dt(5.0, 0.0, false, DtLimit{0.0, 2.0}), 2.0);   // finite hi clamps
  EXPECT_EQ(ssd::process_dt(1.5, 0.0, false, DtLimit{0.0, 2.0}), 1.5);
  // The clamp comes after softplus: softplus(-1) = 0.313 < lo = 0.5 -> 0.5.
  EXPECT_EQ(ssd::process_dt(-1.0, 0.0, true, DtLimit{0.5, 0.6}), 0.5);
  EXPECT_EQ(ssd::process_dt(0.0, 0.0, true, DtLimit{0.5, 0.6}), 0.6);    // ln2 = 0.693 > hi
}

TEST(Decays, WithinChunkIsClampedOthersAreNot) {
  EXPECT_REL(ssd::within_chunk_decay(-3.0, -1.0), e(-2));  // exp(-3 - (-1))
  EXPECT_EQ(ssd::within_chunk_decay(-1.0, -1.0), 1.0);
  EXPECT_EQ(ssd::within_chunk_decay(1.0, 0.0), 1.0);       // exp(min(1, 0)) = 1
  EXPECT_EQ(ssd::within_chunk_decay(5.0, -5.0), 1.0);
  EXPECT_REL(ssd::chunk_start_decay(2.0), e(2));            // not clamped
  EXPECT_REL(ssd::chunk_start_decay(-1.0), e(-1));
  EXPECT_EQ(ssd::chunk_start_decay(0.0), 1.0);
  EXPECT_REL(ssd::chunk_total_decay(1.0), e(1));            // not clamped
  EXPECT_REL(ssd::chunk_total_decay(-4.0), e(-4));
}

TEST(Segsum, StableMaskedSum) {
  // a = [1e16, 1, 1, 1]: differencing the cumsum (1e16+1 is not representable) would lose the small
  // terms; the stable form sums a[j+1..i] directly.
  Eigen::VectorXd a(4);
  a << 1e16, 1.0, 1.0, 1.0;
  const Eigen::MatrixXd s = ssd::segsum(a);
  ASSERT_EQ(s.rows(), 4);
  ASSERT_EQ(s.cols(), 4);
  for (Eigen::Index i = 0; i < 4; ++i) {
    EXPECT_EQ(s(i, i), 0.0) << i;  // exactly 0 on the diagonal
    for (Eigen::Index j = i + 1; j < 4; ++j) EXPECT_EQ(s(i, j), -kInf) << i << "," << j;
  }
  EXPECT_EQ(s(1, 0), 1.0);  // a1
  EXPECT_EQ(s(2, 0), 2.0);  // a1 + a2
  EXPECT_EQ(s(3, 0), 3.0);  // a1 + a2 + a3
  EXPECT_EQ(s(2, 1), 1.0);  // a2
  EXPECT_EQ(s(3, 1), 2.0);  // a2 + a3
  EXPECT_EQ(s(3, 2), 1.0);  // a3
  // a0 never enters (it precedes every segment).
  Eigen::VectorXd b(3);
  b << -0.5, -1.5, -2.0;
  const Eigen::MatrixXd t = ssd::segsum(b);
  EXPECT_EQ(t(1, 0), -1.5);
  EXPECT_EQ(t(2, 0), -3.5);
  EXPECT_EQ(t(2, 1), -2.0);
  // std::exp of it is the decay matrix: exactly 1 on the diagonal, exactly 0 above. (Eigen's
  // vectorised array().exp() is not used here: it maps -inf to a tiny subnormal, not to 0.)
  EXPECT_EQ(std::exp(t(1, 1)), 1.0);
  EXPECT_EQ(std::exp(t(0, 2)), 0.0);
}

TEST(DecayStates, LastIsExactlyOne) {
  Eigen::VectorXd cs(3);
  cs << 0.0, -1.0, -3.0;
  const Eigen::VectorXd d = ssd::decay_states(cs);
  ASSERT_EQ(d.size(), 3);
  EXPECT_REL(d(0), e(-3));  // exp(-3 - 0)
  EXPECT_REL(d(1), e(-2));  // exp(-3 - (-1))
  EXPECT_EQ(d(2), 1.0);
  Eigen::VectorXd one(1);
  one << -7.25;
  EXPECT_EQ(ssd::decay_states(one)(0), 1.0);
}

TEST(ChunkGrid, RaggedAndShort) {
  const ssd::ChunkGrid ragged{5, 2};  // chunks [0,1] [2,3] [4]
  EXPECT_EQ(ragged.count(), 3);
  EXPECT_EQ(ragged.start(2), 4);
  EXPECT_EQ(ragged.length(0), 2);
  EXPECT_EQ(ragged.length(2), 1);
  const ssd::ChunkGrid exact{4, 2};
  EXPECT_EQ(exact.count(), 2);
  EXPECT_EQ(exact.length(1), 2);
  const ssd::ChunkGrid shorter{2, 4};  // S < Q
  EXPECT_EQ(shorter.count(), 1);
  EXPECT_EQ(shorter.length(0), 2);
  const ssd::ChunkGrid single{1, 3};
  EXPECT_EQ(single.count(), 1);
  EXPECT_EQ(single.length(0), 1);
  const ssd::ChunkGrid unit{3, 1};
  EXPECT_EQ(unit.count(), 3);
  EXPECT_EQ(unit.length(2), 1);
}

TEST(SeqIdx, WellFormedRowsAreAccepted) {
  EXPECT_EQ(ssd::kSeqIdBeforeStart, 0);
  EXPECT_NO_THROW(ssd::check_seq_idx("op", i32({1, 4}, {0, 0, 1, 1}), 1, 4));
  EXPECT_NO_THROW(ssd::check_seq_idx("op", i32({1, 3}, {1, 1, 2}), 1, 3));      // may start above 0
  EXPECT_NO_THROW(ssd::check_seq_idx("op", i32({1, 4}, {0, 0, -1, -1}), 1, 4)); // padding tail
  EXPECT_NO_THROW(ssd::check_seq_idx("op", i32({1, 4}, {0, 2, 2, 5}), 1, 4));   // gaps are fine
  EXPECT_NO_THROW(ssd::check_seq_idx("op", i32({2, 2}, {0, 1, 3, 3}), 2, 2));   // rows independent
}

TEST(SeqIdx, MalformedRowsAreRejectedNamingSeqIdx) {
  expect_argument_error([] { ssd::check_seq_idx("op", i32({1, 3}, {0, 1, 0}), 1, 3); }, {"seq_idx"});
  expect_argument_error([] { ssd::check_seq_idx("op", i32({1, 3}, {0, -1, 0}), 1, 3); }, {"seq_idx"});
  expect_argument_error([] { ssd::check_seq_idx("op", i32({2, 2}, {0, 0, 1, 0}), 2, 2); }, {"seq_idx"});
  expect_argument_error([] { ssd::check_seq_idx("op", f32({1, 2}, {0, 0}), 1, 2); }, {"seq_idx"});
  expect_argument_error([] { ssd::check_seq_idx("op", i32({1, 3}, {0, 0, 0}), 1, 2); }, {"seq_idx"});
  expect_argument_error([] { ssd::check_seq_idx("op", i32({3}, {0, 0, 0}), 1, 3); }, {"seq_idx"});
}

TEST(SeqIdx, TokenDefinedMask) {
  EXPECT_TRUE(ssd::token_defined_mask(nullptr, 3).empty());
  const Tensor s = i32({2, 2}, {0, -1, 1, 1});
  const std::vector<std::uint8_t> mask = ssd::token_defined_mask(&s, 2);
  const std::vector<std::uint8_t> expected{1, 1, 0, 0, 1, 1, 1, 1};
  EXPECT_EQ(mask, expected);
}

}  // namespace
}  // namespace ssd_test
