// SSDChunkStateFwd: hand-worked per-chunk states (decay to chunk end, groups, seq_idx, padding, clamp).
#include "test_support.h"

namespace ssd_test {
namespace {

using ssd::ChunkStateArgs;

class ChunkStateTest : public ::testing::TestWithParam<OracleForm<ChunkStateArgs>> {
 protected:
  Outputs run(const ChunkStateArgs& args) const { return GetParam().run(args); }
};
INSTANTIATE_TEST_SUITE_P(BothForms, ChunkStateTest, ::testing::ValuesIn(kChunkStateForms),
                         form_name<ChunkStateArgs>);

double state(const Outputs& r, std::int64_t b, std::int64_t c, std::int64_t h, std::int64_t p, std::int64_t n) {
  return at(r, "states", {b, c, h, p, n});
}

TEST_P(ChunkStateTest, RaggedChunkReadsDtOnlyForValidTokens) {
  // S = 3, Q = 2, H = P = G = N = 1, dA = 0 (A = 0: every decay is 1).
  // B = [1,2,3], x = [4,5,6]; dt chunk-major [[1,2],[3,7]] where 7 sits in the padded slot.
  const Tensor B = f32({1, 3, 1, 1}, {1, 2, 3});
  const Tensor x = f32({1, 3, 1, 1}, {4, 5, 6});
  const Tensor dt = f32({1, 1, 2, 2}, {1, 2, 3, 7});
  const Tensor dA = f32({1, 1, 2, 2}, {0, 0, 0, 0});
  const Outputs r = run({.B = &B, .x = &x, .dt = &dt, .dA_cumsum = &dA});
  EXPECT_EQ(r.get("states").value.shape(), (Shape{1, 2, 1, 1, 1}));
  EXPECT_EQ(state(r, 0, 0, 0, 0, 0), 24.0);  // 1*1*4 + 2*2*5
  EXPECT_EQ(state(r, 0, 1, 0, 0, 0), 54.0);  // 3*3*6; the padded dt = 7 is never read
}

TEST_P(ChunkStateTest, DecayFromEachTokenToChunkEnd) {
  // dA = [-1, -3]: w0 = exp(-3 - (-1)) * dt0 = e^-2, w1 = exp(0) * dt1 = 2.
  // state = e^-2 * B0 x0 + 2 * B1 x1 = e^-2 * 1 + 2 * 2 = 4 + e^-2.
  const Tensor B = f32({1, 2, 1, 1}, {1, 1});
  const Tensor x = f32({1, 2, 1, 1}, {1, 2});
  const Tensor dt = f32({1, 1, 1, 2}, {1, 2});
  const Tensor dA = f32({1, 1, 1, 2}, {-1, -3});
  const Outputs r = run({.B = &B, .x = &x, .dt = &dt, .dA_cumsum = &dA});
  EXPECT_REL(state(r, 0, 0, 0, 0, 0), 4.0 + e(-2));
}

TEST_P(ChunkStateTest, LastPartialChunkDecaysToIndexQMinus1) {
  // S = 3, Q = 2: chunk 1 holds t2 only. dA of chunk 1 is fed as [-1, -3] (not flat), and the
  // contract reads the chunk end at index Q-1 = 1: w = exp(-3 - (-1)) * 1 = e^-2; state = e^-2*2*3.
  const Tensor B = f32({1, 3, 1, 1}, {1, 1, 2});
  const Tensor x = f32({1, 3, 1, 1}, {1, 1, 3});
  const Tensor dt = f32({1, 1, 2, 2}, {1, 1, 1, 0});
  const Tensor dA = f32({1, 1, 2, 2}, {0, 0, -1, -3});
  const Outputs r = run({.B = &B, .x = &x, .dt = &dt, .dA_cumsum = &dA});
  EXPECT_EQ(state(r, 0, 0, 0, 0, 0), 2.0);  // 1*1*1 + 1*1*1
  EXPECT_REL(state(r, 0, 1, 0, 0, 0), 6.0 * e(-2));
}

TEST_P(ChunkStateTest, OuterProductOverPAndN) {
  // One token, dt = 2: states[p,n] = 2 * x[p] * B[n] with x = [3,5], B = [1,2].
  const Tensor B = f32({1, 1, 1, 2}, {1, 2});
  const Tensor x = f32({1, 1, 1, 2}, {3, 5});
  const Tensor dt = f32({1, 1, 1, 1}, {2});
  const Tensor dA = f32({1, 1, 1, 1}, {0});
  const Outputs r = run({.B = &B, .x = &x, .dt = &dt, .dA_cumsum = &dA});
  EXPECT_EQ(r.get("states").value.shape(), (Shape{1, 1, 1, 2, 2}));
  EXPECT_EQ(state(r, 0, 0, 0, 0, 0), 6.0);
  EXPECT_EQ(state(r, 0, 0, 0, 0, 1), 12.0);
  EXPECT_EQ(state(r, 0, 0, 0, 1, 0), 10.0);
  EXPECT_EQ(state(r, 0, 0, 0, 1, 1), 20.0);
}

TEST_P(ChunkStateTest, HeadsOfOneGroupShareB) {
  // H = 2, G = 1, S = Q = 2: B = [1,2]; x: h0 [1,2], h1 [10,20]; dt: h0 [1,1], h1 [0.5,1].
  const Tensor B = f32({1, 2, 1, 1}, {1, 2});
  const Tensor x = f32({1, 2, 2, 1}, {1, 10, 2, 20});
  const Tensor dt = f32({1, 2, 1, 2}, {1, 1, 0.5, 1});
  const Tensor dA = f32({1, 2, 1, 2}, {0, 0, 0, 0});
  const Outputs r = run({.B = &B, .x = &x, .dt = &dt, .dA_cumsum = &dA});
  EXPECT_EQ(state(r, 0, 0, 0, 0, 0), 5.0);   // 1*1*1 + 1*2*2
  EXPECT_EQ(state(r, 0, 0, 1, 0, 0), 45.0);  // 0.5*1*10 + 1*2*20
}

TEST_P(ChunkStateTest, OneGroupPerHead) {
  // Same as above with G = H = 2: B t0 = (g0 1, g1 3), t1 = (g0 2, g1 4).
  const Tensor B = f32({1, 2, 2, 1}, {1, 3, 2, 4});
  const Tensor x = f32({1, 2, 2, 1}, {1, 10, 2, 20});
  const Tensor dt = f32({1, 2, 1, 2}, {1, 1, 0.5, 1});
  const Tensor dA = f32({1, 2, 1, 2}, {0, 0, 0, 0});
  const Outputs r = run({.B = &B, .x = &x, .dt = &dt, .dA_cumsum = &dA});
  EXPECT_EQ(state(r, 0, 0, 0, 0, 0), 5.0);   // 1*1*1 + 1*2*2
  EXPECT_EQ(state(r, 0, 0, 1, 0, 0), 95.0);  // 0.5*3*10 + 1*4*20
}

TEST_P(ChunkStateTest, GroupOfHeadIsHeadDividedByHeadsPerGroup) {
  // H = 4, G = 2: g(h) = h / 2, so heads 0,1 read group 0 (B = 1) and heads 2,3 group 1 (B = 100)
  // (not h % G, which would give 1, 100, 1, 100).
  const Tensor B = f32({1, 1, 2, 1}, {1, 100});
  const Tensor x = f32({1, 1, 4, 1}, {1, 1, 1, 1});
  const Tensor dt = f32({1, 4, 1, 1}, {1, 1, 1, 1});
  const Tensor dA = f32({1, 4, 1, 1}, {0, 0, 0, 0});
  const Outputs r = run({.B = &B, .x = &x, .dt = &dt, .dA_cumsum = &dA});
  EXPECT_EQ(state(r, 0, 0, 0, 0, 0), 1.0);
  EXPECT_EQ(state(r, 0, 0, 1, 0, 0), 1.0);
  EXPECT_EQ(state(r, 0, 0, 2, 0, 0), 100.0);
  EXPECT_EQ(state(r, 0, 0, 3, 0, 0), 100.0);
}

TEST_P(ChunkStateTest, BatchesAreIndependent) {
  const Tensor B = f32({2, 1, 1, 1}, {1, 2});
  const Tensor x = f32({2, 1, 1, 1}, {3, 5});
  const Tensor dt = f32({2, 1, 1, 1}, {1, 0.5});
  const Tensor dA = f32({2, 1, 1, 1}, {0, -1});
  const Outputs r = run({.B = &B, .x = &x, .dt = &dt, .dA_cumsum = &dA});
  EXPECT_EQ(state(r, 0, 0, 0, 0, 0), 3.0);  // 1*1*3
  EXPECT_EQ(state(r, 1, 0, 0, 0, 0), 5.0);  // 0.5*2*5, decay exp(dA[0] - dA[0]) = 1
}

TEST_P(ChunkStateTest, SeqIdxBoundaryInsideChunkKeepsOnlyTheLastSequence) {
  // S = Q = 4, ids [0,0,1,1]: only tokens with the id of the last token (1) count: x2 + x3 = 7.
  const Tensor B = f32({1, 4, 1, 1}, {1, 1, 1, 1});
  const Tensor x = f32({1, 4, 1, 1}, {1, 2, 3, 4});
  const Tensor dt = f32({1, 1, 1, 4}, {1, 1, 1, 1});
  const Tensor dA = f32({1, 1, 1, 4}, {0, 0, 0, 0});
  const Tensor seq = i32({1, 4}, {0, 0, 1, 1});
  const Outputs r = run({.B = &B, .x = &x, .dt = &dt, .dA_cumsum = &dA, .seq_idx = &seq});
  EXPECT_EQ(state(r, 0, 0, 0, 0, 0), 7.0);
}

TEST_P(ChunkStateTest, SeqIdxBoundaryAtChunkBoundaryMasksNothing) {
  // Same tokens, Q = 2: each chunk holds one sequence: [1+2, 3+4].
  const Tensor B = f32({1, 4, 1, 1}, {1, 1, 1, 1});
  const Tensor x = f32({1, 4, 1, 1}, {1, 2, 3, 4});
  const Tensor dt = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  const Tensor dA = f32({1, 1, 2, 2}, {0, 0, 0, 0});
  const Tensor seq = i32({1, 4}, {0, 0, 1, 1});
  const Outputs r = run({.B = &B, .x = &x, .dt = &dt, .dA_cumsum = &dA, .seq_idx = &seq});
  EXPECT_EQ(state(r, 0, 0, 0, 0, 0), 3.0);
  EXPECT_EQ(state(r, 0, 1, 0, 0, 0), 7.0);
}

TEST_P(ChunkStateTest, ChunkEndingInPaddingHasZeroState) {
  // S = 5, Q = 2, ids [0,0,0,-1,-1]: chunk 0 = x0 + x1 = 3; chunk 1 = [t2 (id 0), t3 (pad)] ends in
  // padding, so its state is 0 even though t2 is valid; chunk 2 = [t4 (pad)] is 0 too.
  const Tensor B = f32({1, 5, 1, 1}, {1, 1, 1, 1, 1});
  const Tensor x = f32({1, 5, 1, 1}, {1, 2, 3, 4, 5});
  const Tensor dt = f32({1, 1, 3, 2}, {1, 1, 1, 1, 1, 0});
  const Tensor dA = f32({1, 1, 3, 2}, {0, 0, 0, 0, 0, 0});
  const Tensor seq = i32({1, 5}, {0, 0, 0, -1, -1});
  const Outputs r = run({.B = &B, .x = &x, .dt = &dt, .dA_cumsum = &dA, .seq_idx = &seq});
  EXPECT_EQ(state(r, 0, 0, 0, 0, 0), 3.0);
  EXPECT_EQ(state(r, 0, 1, 0, 0, 0), 0.0);
  EXPECT_EQ(state(r, 0, 2, 0, 0, 0), 0.0);
}

// The exp(min(delta, 0)) clamp, tested on the chunked form only: with A > 0 (increasing dA) the
// kernels' clamp is a contract of the chunk-by-chunk algorithm, whereas the sequential form is the
// per-token recurrence whose decays exp(a_t) are only equivalent for monotone non-increasing dA
// (ops.md decision 10); it may legitimately differ here.
TEST(ChunkStateChunked, ExpClampWithPositiveA) {
  // dA = [1, 3]: w0 = exp(min(3 - 1, 0)) * 1 = 1 (unclamped it would be e^2), w1 = 1.
  // state = 1*1*1 + 1*1*2 = 3 exactly.
  const Tensor B = f32({1, 2, 1, 1}, {1, 1});
  const Tensor x = f32({1, 2, 1, 1}, {1, 2});
  const Tensor dt = f32({1, 1, 1, 2}, {1, 1});
  const Tensor dA = f32({1, 1, 1, 2}, {1, 3});
  const Outputs r = ssd::chunk_state_chunked({.B = &B, .x = &x, .dt = &dt, .dA_cumsum = &dA});
  EXPECT_EQ(state(r, 0, 0, 0, 0, 0), 3.0);
}

}  // namespace
}  // namespace ssd_test
