// SSDChunkScanFwd: hand-worked outputs (diagonal block, carried-in state, D, z, groups, seq_idx, clamp).
#include "test_support.h"

namespace ssd_test {
namespace {

using ssd::ChunkScanArgs;

class ChunkScanTest : public ::testing::TestWithParam<OracleForm<ChunkScanArgs>> {
 protected:
  Outputs run(const ChunkScanArgs& args) const { return GetParam().run(args); }
};
INSTANTIATE_TEST_SUITE_P(BothForms, ChunkScanTest, ::testing::ValuesIn(kChunkScanForms),
                         form_name<ChunkScanArgs>);

double out(const Outputs& r, std::int64_t b, std::int64_t t, std::int64_t h, std::int64_t p) {
  return at(r, "out", {b, t, h, p});
}

TEST_P(ChunkScanTest, DiagonalIncludedUpperTriangleIgnoredRaggedChunk) {
  // S = 3, Q = 2, H = P = G = N = 1, dA = 0, dt = 1, C = 1, x = [1,2,3], entering states [10, 20].
  // cb chunk 0 = [[1, 9], [2, 3]], chunk 1 = [[4, 9], [9, 9]]: the 9s lie above the diagonal or in
  // the padded slot and must never be read (causal k <= i).
  //   t0: 10 + 1*1         = 11
  //   t1: 10 + 2*1 + 3*2   = 18
  //   t2: 20 + 4*3         = 32
  const Tensor cb = f32({1, 2, 1, 2, 2}, {1, 9, 2, 3, 4, 9, 9, 9});
  const Tensor x = f32({1, 3, 1, 1}, {1, 2, 3});
  const Tensor dt = f32({1, 1, 2, 2}, {1, 1, 1, 5});
  const Tensor dA = f32({1, 1, 2, 2}, {0, 0, 0, 0});
  const Tensor C = f32({1, 3, 1, 1}, {1, 1, 1});
  const Tensor states = f32({1, 2, 1, 1, 1}, {10, 20});
  const Outputs r = run({.cb = &cb, .x = &x, .dt = &dt, .dA_cumsum = &dA, .C = &C, .states = &states});
  EXPECT_EQ(r.get("out").value.shape(), (Shape{1, 3, 1, 1}));
  EXPECT_FALSE(r.has("out_x"));  // only with z
  EXPECT_EQ(out(r, 0, 0, 0, 0), 11.0);
  EXPECT_EQ(out(r, 0, 1, 0, 0), 18.0);
  EXPECT_EQ(out(r, 0, 2, 0, 0), 32.0);
}

TEST_P(ChunkScanTest, DecaysWithinChunkAndFromChunkStart) {
  // dA = [-1, -3], dt = [1, 2], cb = [[1,0],[2,3]], x = [1,2], C = [2,1], entering state 5.
  //   t0: off = e^-1 * 2*5 = 10e^-1;  diag = 1 * e^0 * 1 * 1 = 1
  //   t1: off = e^-3 * 1*5 = 5e^-3;   diag = 2 * e^(-3+1) * 1 * 1 + 3 * e^0 * 2 * 2 = 2e^-2 + 12
  const Tensor cb = f32({1, 1, 1, 2, 2}, {1, 0, 2, 3});
  const Tensor x = f32({1, 2, 1, 1}, {1, 2});
  const Tensor dt = f32({1, 1, 1, 2}, {1, 2});
  const Tensor dA = f32({1, 1, 1, 2}, {-1, -3});
  const Tensor C = f32({1, 2, 1, 1}, {2, 1});
  const Tensor states = f32({1, 1, 1, 1, 1}, {5});
  const Outputs r = run({.cb = &cb, .x = &x, .dt = &dt, .dA_cumsum = &dA, .C = &C, .states = &states});
  EXPECT_REL(out(r, 0, 0, 0, 0), 1 + 10 * e(-1));
  EXPECT_REL(out(r, 0, 1, 0, 0), 12 + 2 * e(-2) + 5 * e(-3));
}

TEST_P(ChunkScanTest, CarriedInTermSumsOverN) {
  // One token, cb = 0 (no diagonal term), C = [1,2], state[p,n] = [[1,2],[3,4]]:
  //   out[p0] = 1*1 + 2*2 = 5, out[p1] = 1*3 + 2*4 = 11.
  const Tensor cb = f32({1, 1, 1, 1, 1}, {0});
  const Tensor x = f32({1, 1, 1, 2}, {7, 8});
  const Tensor dt = f32({1, 1, 1, 1}, {1});
  const Tensor dA = f32({1, 1, 1, 1}, {0});
  const Tensor C = f32({1, 1, 1, 2}, {1, 2});
  const Tensor states = f32({1, 1, 1, 2, 2}, {1, 2, 3, 4});
  const Outputs r = run({.cb = &cb, .x = &x, .dt = &dt, .dA_cumsum = &dA, .C = &C, .states = &states});
  EXPECT_EQ(out(r, 0, 0, 0, 0), 5.0);
  EXPECT_EQ(out(r, 0, 0, 0, 1), 11.0);
}

// One token, cb = 1, dt = 1, C = 0: y = x + D*x with x = [1, 2].
struct SkipCase {
  Tensor cb = f32({1, 1, 1, 1, 1}, {1});
  Tensor x = f32({1, 1, 1, 2}, {1, 2});
  Tensor dt = f32({1, 1, 1, 1}, {1});
  Tensor dA = f32({1, 1, 1, 1}, {0});
  Tensor C = f32({1, 1, 1, 1}, {0});
  Tensor states = f32({1, 1, 1, 2, 1}, {0, 0});
  ChunkScanArgs args() const {
    return {.cb = &cb, .x = &x, .dt = &dt, .dA_cumsum = &dA, .C = &C, .states = &states};
  }
};

TEST_P(ChunkScanTest, DPerHead) {
  const SkipCase k;
  const Tensor D = f32({1}, {0.5});
  ChunkScanArgs a = k.args();
  a.D = &D;
  const Outputs r = run(a);
  EXPECT_EQ(out(r, 0, 0, 0, 0), 1.5);  // 1 + 0.5*1
  EXPECT_EQ(out(r, 0, 0, 0, 1), 3.0);  // 2 + 0.5*2
}

TEST_P(ChunkScanTest, DPerHeadAndHeaddim) {
  const SkipCase k;
  const Tensor D = f32({1, 2}, {2, -1});
  ChunkScanArgs a = k.args();
  a.D = &D;
  const Outputs r = run(a);
  EXPECT_EQ(out(r, 0, 0, 0, 0), 3.0);  // 1 + 2*1
  EXPECT_EQ(out(r, 0, 0, 0, 1), 0.0);  // 2 - 1*2
}

TEST_P(ChunkScanTest, ZGateAppliesAfterD) {
  // y = [1.5, 3] (with D = 0.5); z = [0, 1]: out = y * silu(z) = [0, 3*silu(1)], out_x = y.
  const SkipCase k;
  const Tensor D = f32({1}, {0.5});
  const Tensor z = f32({1, 1, 1, 2}, {0, 1});
  ChunkScanArgs a = k.args();
  a.D = &D;
  a.z = &z;
  const Outputs r = run(a);
  ASSERT_TRUE(r.has("out_x"));
  EXPECT_EQ(out(r, 0, 0, 0, 0), 0.0);
  EXPECT_REL(out(r, 0, 0, 0, 1), 3 * silu(1));
  EXPECT_EQ(at(r, "out_x", {0, 0, 0, 0}), 1.5);
  EXPECT_EQ(at(r, "out_x", {0, 0, 0, 1}), 3.0);
}

TEST_P(ChunkScanTest, HeadsOfOneGroupShareCbAndC) {
  // H = 2, G = 1, S = Q = 2, dA = 0, C = 1, cb = [[1,0],[1,1]];
  // h0: dt = 1, x = [1,2], state 0:    t0 = 1,            t1 = 1 + 2 = 3
  // h1: dt = 2, x = [10,20], state 100: t0 = 100 + 2*10 = 120, t1 = 100 + 2*10 + 2*20 = 160
  const Tensor cb = f32({1, 1, 1, 2, 2}, {1, 0, 1, 1});
  const Tensor x = f32({1, 2, 2, 1}, {1, 10, 2, 20});
  const Tensor dt = f32({1, 2, 1, 2}, {1, 1, 2, 2});
  const Tensor dA = f32({1, 2, 1, 2}, {0, 0, 0, 0});
  const Tensor C = f32({1, 2, 1, 1}, {1, 1});
  const Tensor states = f32({1, 1, 2, 1, 1}, {0, 100});
  const Outputs r = run({.cb = &cb, .x = &x, .dt = &dt, .dA_cumsum = &dA, .C = &C, .states = &states});
  EXPECT_EQ(out(r, 0, 0, 0, 0), 1.0);
  EXPECT_EQ(out(r, 0, 1, 0, 0), 3.0);
  EXPECT_EQ(out(r, 0, 0, 1, 0), 120.0);
  EXPECT_EQ(out(r, 0, 1, 1, 0), 160.0);
}

TEST_P(ChunkScanTest, OneGroupPerHead) {
  // G = H = 2: cb g0 = [[1,0],[1,1]], g1 = [[2,0],[0,3]]; C: t0 (g0 1, g1 0), t1 (g0 1, g1 1).
  // h0 as above: 1, 3.  h1: t0 = 0*100 + 2*2*10 = 40;  t1 = 1*100 + 0*2*10 + 3*2*20 = 220.
  const Tensor cb = f32({1, 1, 2, 2, 2}, {1, 0, 1, 1, 2, 0, 0, 3});
  const Tensor x = f32({1, 2, 2, 1}, {1, 10, 2, 20});
  const Tensor dt = f32({1, 2, 1, 2}, {1, 1, 2, 2});
  const Tensor dA = f32({1, 2, 1, 2}, {0, 0, 0, 0});
  const Tensor C = f32({1, 2, 2, 1}, {1, 0, 1, 1});
  const Tensor states = f32({1, 1, 2, 1, 1}, {0, 100});
  const Outputs r = run({.cb = &cb, .x = &x, .dt = &dt, .dA_cumsum = &dA, .C = &C, .states = &states});
  EXPECT_EQ(out(r, 0, 0, 0, 0), 1.0);
  EXPECT_EQ(out(r, 0, 1, 0, 0), 3.0);
  EXPECT_EQ(out(r, 0, 0, 1, 0), 40.0);
  EXPECT_EQ(out(r, 0, 1, 1, 0), 220.0);
}

TEST_P(ChunkScanTest, GroupOfHeadIsHeadDividedByHeadsPerGroup) {
  // H = 4, G = 2, one token, dA = 0, dt = x = 1: cb = [g0 1, g1 3], C = [g0 1, g1 10], entering
  // states [0, 0, 1, 1]. Heads 0,1 use group 0 and heads 2,3 group 1 (not h % G):
  //   out = cb_g*x + C_g*state_h = [1, 1, 3 + 10, 3 + 10]
  const Tensor cb = f32({1, 1, 2, 1, 1}, {1, 3});
  const Tensor x = f32({1, 1, 4, 1}, {1, 1, 1, 1});
  const Tensor dt = f32({1, 4, 1, 1}, {1, 1, 1, 1});
  const Tensor dA = f32({1, 4, 1, 1}, {0, 0, 0, 0});
  const Tensor C = f32({1, 1, 2, 1}, {1, 10});
  const Tensor states = f32({1, 1, 4, 1, 1}, {0, 0, 1, 1});
  const Outputs r = run({.cb = &cb, .x = &x, .dt = &dt, .dA_cumsum = &dA, .C = &C, .states = &states});
  const double expected[4] = {1, 1, 13, 13};
  for (std::int64_t h = 0; h < 4; ++h) EXPECT_EQ(out(r, 0, 0, h, 0), expected[h]) << "h" << h;
}

TEST_P(ChunkScanTest, BatchesAreIndependent) {
  // Bt = 2, one token each: b0 = 1*1*3 = 3; b1 = e^-1*1*5 + 2*e^0*1*4 = 8 + 5e^-1.
  const Tensor cb = f32({2, 1, 1, 1, 1}, {1, 2});
  const Tensor x = f32({2, 1, 1, 1}, {3, 4});
  const Tensor dt = f32({2, 1, 1, 1}, {1, 1});
  const Tensor dA = f32({2, 1, 1, 1}, {0, -1});
  const Tensor C = f32({2, 1, 1, 1}, {1, 1});
  const Tensor states = f32({2, 1, 1, 1, 1}, {0, 5});
  const Outputs r = run({.cb = &cb, .x = &x, .dt = &dt, .dA_cumsum = &dA, .C = &C, .states = &states});
  EXPECT_EQ(out(r, 0, 0, 0, 0), 3.0);
  EXPECT_REL(out(r, 1, 0, 0, 0), 8 + 5 * e(-1));
}

// S = 4, Q = 2, dA = 0, dt = 1, C = 1, x = [1,2,3,4], cb = [[1,0],[1,1]] in both chunks, entering
// states [10, 20]; only seq_idx changes between the cases below.
struct SeqCase {
  Tensor cb = f32({1, 2, 1, 2, 2}, {1, 0, 1, 1, 1, 0, 1, 1});
  Tensor x = f32({1, 4, 1, 1}, {1, 2, 3, 4});
  Tensor dt = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  Tensor dA = f32({1, 1, 2, 2}, {0, 0, 0, 0});
  Tensor C = f32({1, 4, 1, 1}, {1, 1, 1, 1});
  Tensor states = f32({1, 2, 1, 1, 1}, {10, 20});
  Tensor seq;
  explicit SeqCase(std::vector<double> ids) : seq(i32({1, 4}, std::move(ids))) {}
  ChunkScanArgs args() const {
    return {.cb = &cb, .x = &x, .dt = &dt, .dA_cumsum = &dA, .C = &C, .states = &states, .seq_idx = &seq};
  }
};

TEST_P(ChunkScanTest, SeqIdxMasksCarriedInTermButNotTheGivenCb) {
  // ids [0,1,1,1]. Chunk 0 compares with the id before the row (0); chunk 1 with s[1] = 1.
  //   t0 (id 0): off 10 kept;    diag 1            -> 11
  //   t1 (id 1): off masked;     diag 1*1 + 1*2 = 3 (cb[1,0] crosses ids but is taken as given) -> 3
  //   t2 (id 1): off 20 kept;    diag 3            -> 23
  //   t3 (id 1): off 20 kept;    diag 3 + 4 = 7    -> 27
  const SeqCase k({0, 1, 1, 1});
  const Outputs r = run(k.args());
  EXPECT_EQ(out(r, 0, 0, 0, 0), 11.0);
  EXPECT_EQ(out(r, 0, 1, 0, 0), 3.0);
  EXPECT_EQ(out(r, 0, 2, 0, 0), 23.0);
  EXPECT_EQ(out(r, 0, 3, 0, 0), 27.0);
}

TEST_P(ChunkScanTest, SeqIdxNewSequenceAtChunkBoundary) {
  // ids [0,0,1,1]: chunk 1 starts sequence 1 (s[1] = 0 != 1), so its carried-in term is masked.
  //   t0 = 10 + 1 = 11, t1 = 10 + 1 + 2 = 13, t2 = 3, t3 = 3 + 4 = 7
  const SeqCase k({0, 0, 1, 1});
  const Outputs r = run(k.args());
  EXPECT_EQ(out(r, 0, 0, 0, 0), 11.0);
  EXPECT_EQ(out(r, 0, 1, 0, 0), 13.0);
  EXPECT_EQ(out(r, 0, 2, 0, 0), 3.0);
  EXPECT_EQ(out(r, 0, 3, 0, 0), 7.0);
}

TEST_P(ChunkScanTest, SeqIdxRowStartingAtIdOneIgnoresTheInitialState) {
  // ids [1,1,1,1]: chunk 0's entering state (10) is masked (previous id 0 != 1); chunk 1 keeps 20.
  //   t0 = 1, t1 = 3, t2 = 20 + 3 = 23, t3 = 20 + 7 = 27
  const SeqCase k({1, 1, 1, 1});
  const Outputs r = run(k.args());
  EXPECT_EQ(out(r, 0, 0, 0, 0), 1.0);
  EXPECT_EQ(out(r, 0, 1, 0, 0), 3.0);
  EXPECT_EQ(out(r, 0, 2, 0, 0), 23.0);
  EXPECT_EQ(out(r, 0, 3, 0, 0), 27.0);
}

TEST_P(ChunkScanTest, SeqIdxPaddingTokensAreUndefined) {
  // ids [0,0,0,-1]: t3 is padding, its output is not compared; the others are as without seq_idx
  // (t2 id 0 == s[1] = 0 keeps the carried-in 20): 11, 13, 23.
  const SeqCase k({0, 0, 0, -1});
  const Outputs r = run(k.args());
  EXPECT_TRUE(defined_at(r, "out", {0, 0, 0, 0}));
  EXPECT_TRUE(defined_at(r, "out", {0, 2, 0, 0}));
  EXPECT_FALSE(defined_at(r, "out", {0, 3, 0, 0}));
  EXPECT_EQ(out(r, 0, 0, 0, 0), 11.0);
  EXPECT_EQ(out(r, 0, 1, 0, 0), 13.0);
  EXPECT_EQ(out(r, 0, 2, 0, 0), 23.0);
}

// The clamp on the chunked form only: the sequential form is an independent evaluation that is
// required to agree with the chunked one only for monotone non-increasing dA (ops.md decision 10).
TEST(ChunkScanChunked, ExpClampOnDiagonalBlockButNotOnChunkStartDecay) {
  // dA = [1, 3] (A > 0), dt = 1, cb = [[1,0],[1,1]], x = [1,2], C = 1, entering state 1:
  //   t0: off = e^1 * 1;  diag = 1*1 = 1                                 -> e + 1
  //   t1: off = e^3 * 1 (chunk-start decay, not clamped);
  //       diag = 1 * exp(min(3-1, 0)) * 1 + 1 * 2 = 1 + 2 = 3 (clamped)  -> e^3 + 3
  const Tensor cb = f32({1, 1, 1, 2, 2}, {1, 0, 1, 1});
  const Tensor x = f32({1, 2, 1, 1}, {1, 2});
  const Tensor dt = f32({1, 1, 1, 2}, {1, 1});
  const Tensor dA = f32({1, 1, 1, 2}, {1, 3});
  const Tensor C = f32({1, 2, 1, 1}, {1, 1});
  const Tensor states = f32({1, 1, 1, 1, 1}, {1});
  const Outputs r =
      ssd::chunk_scan_chunked({.cb = &cb, .x = &x, .dt = &dt, .dA_cumsum = &dA, .C = &C, .states = &states});
  EXPECT_REL(out(r, 0, 0, 0, 0), e(1) + 1);
  EXPECT_REL(out(r, 0, 1, 0, 0), e(3) + 3);
}

}  // namespace
}  // namespace ssd_test
