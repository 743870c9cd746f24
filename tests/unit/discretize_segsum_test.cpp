// MambaDiscretizeSegsum: hand-worked L, G, M, A_cumsum, decay_states and their exact structure.
#include <vector>

#include "test_support.h"

namespace ssd_test {
namespace {

using ssd::DiscretizeSegsumArgs;

class DiscretizeSegsumTest : public ::testing::TestWithParam<OracleForm<DiscretizeSegsumArgs>> {
 protected:
  Outputs run(const DiscretizeSegsumArgs& args) const { return GetParam().run(args); }
};
INSTANTIATE_TEST_SUITE_P(BothForms, DiscretizeSegsumTest, ::testing::ValuesIn(kDiscretizeSegsumForms),
                         form_name<DiscretizeSegsumArgs>);

// b = 1, c = 2, Q = 3, h = 2, p = 1, g = 1, n = 2, A_log = 0 (A = -1), bf16 inputs.
// softplus(0) = ln 2 and softplus(25) = 25, so a = A*softplus(dt) is -ln2 or -25 and the decays are
// halves (exp(-ln 2) = 1/2) and e^-25. Per head and chunk (l = 0,1,2):
//   h0 c0: dt [0, 0, 25]  a = [-ln2, -ln2, -25]       h0 c1: dt [25, 0, 0]  a = [-25, -ln2, -ln2]
//   h1 c0: dt [-1, 25, 0] a = [-s, -25, -ln2]          h1 c1: dt [0, 0, 0]   a = [-ln2, -ln2, -ln2]
// with s = softplus(-1) = log1p(e^-1).
struct TwoChunkCase {
  Tensor hidden = bf16({1, 2, 3, 2, 1}, {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7});  // shape only
  Tensor dt = bf16({1, 2, 3, 2}, {0, -1,    // c0 l0: h0, h1
                                  0, 25,    // c0 l1
                                  25, 0,    // c0 l2
                                  25, 0,    // c1 l0
                                  0, 0,     // c1 l1
                                  0, 0});   // c1 l2
  Tensor A_log = bf16({2}, {0, 0});
  // c0: C rows [1,2] [0,1] [-1,1], B rows [1,1] [2,0] [0,3]; c1: C rows [1,0] x3, B rows [1,0] [2,0] [3,0].
  Tensor C = bf16({1, 2, 3, 1, 2}, {1, 2, 0, 1, -1, 1, 1, 0, 1, 0, 1, 0});
  Tensor B = bf16({1, 2, 3, 1, 2}, {1, 1, 2, 0, 0, 3, 1, 0, 2, 0, 3, 0});
  DiscretizeSegsumArgs args() const {
    return {.hidden_states = &hidden, .dt = &dt, .A_log = &A_log, .B = &B, .C = &C};
  }
};

TEST_P(DiscretizeSegsumTest, ShapesOfTheFiveOutputs) {
  const TwoChunkCase k;
  const Outputs r = run(k.args());
  EXPECT_EQ(r.get("L").value.shape(), (Shape{1, 2, 2, 3, 3}));  // [b,h,c,Q,Q]
  EXPECT_EQ(r.get("G").value.shape(), (Shape{1, 2, 3, 3, 2}));  // [b,c,Q,Q,h]
  EXPECT_EQ(r.get("M").value.shape(), (Shape{1, 2, 3, 3, 2}));
  EXPECT_EQ(r.get("A_cumsum").value.shape(), (Shape{1, 2, 2, 3}));  // [b,h,c,Q]
  EXPECT_EQ(r.get("decay_states").value.shape(), (Shape{1, 2, 2, 3}));
}

TEST_P(DiscretizeSegsumTest, ACumsumIsTheInclusiveCumsumOfSoftplusTimesA) {
  const TwoChunkCase k;
  const Outputs r = run(k.args());
  const double s = std::log1p(e(-1));
  // h0 c0: [-ln2, -2ln2, -2ln2 - 25];   h0 c1: [-25, -25 - ln2, -25 - 2ln2]
  EXPECT_REL(at(r, "A_cumsum", {0, 0, 0, 0}), -kLn2);
  EXPECT_REL(at(r, "A_cumsum", {0, 0, 0, 1}), -2 * kLn2);
  EXPECT_REL(at(r, "A_cumsum", {0, 0, 0, 2}), -2 * kLn2 - 25);
  EXPECT_EQ(at(r, "A_cumsum", {0, 0, 1, 0}), -25.0);
  EXPECT_REL(at(r, "A_cumsum", {0, 0, 1, 1}), -25 - kLn2);
  EXPECT_REL(at(r, "A_cumsum", {0, 0, 1, 2}), -25 - 2 * kLn2);
  // h1 c0: [-s, -s - 25, -s - 25 - ln2];  h1 c1: [-ln2, -2ln2, -3ln2]
  EXPECT_REL(at(r, "A_cumsum", {0, 1, 0, 0}), -s);
  EXPECT_REL(at(r, "A_cumsum", {0, 1, 0, 1}), -s - 25);
  EXPECT_REL(at(r, "A_cumsum", {0, 1, 0, 2}), -s - 25 - kLn2);
  EXPECT_REL(at(r, "A_cumsum", {0, 1, 1, 2}), -3 * kLn2);
}

TEST_P(DiscretizeSegsumTest, LIsTheStableSegsumDecay) {
  const TwoChunkCase k;
  const Outputs r = run(k.args());
  // L[i,j] = exp(a[j+1] + ... + a[i]) for i > j (a[0] never enters).
  EXPECT_REL(at(r, "L", {0, 0, 0, 1, 0}), 0.5);            // h0 c0: exp(-ln2)
  EXPECT_REL(at(r, "L", {0, 0, 0, 2, 0}), e(-25) / 2);     // exp(-ln2 - 25)
  EXPECT_REL(at(r, "L", {0, 0, 0, 2, 1}), e(-25));
  EXPECT_REL(at(r, "L", {0, 0, 1, 1, 0}), 0.5);            // h0 c1: a[0] = -25 is not in any segment
  EXPECT_REL(at(r, "L", {0, 0, 1, 2, 0}), 0.25);
  EXPECT_REL(at(r, "L", {0, 0, 1, 2, 1}), 0.5);
  EXPECT_REL(at(r, "L", {0, 1, 0, 1, 0}), e(-25));         // h1 c0
  EXPECT_REL(at(r, "L", {0, 1, 0, 2, 0}), e(-25) / 2);
  EXPECT_REL(at(r, "L", {0, 1, 0, 2, 1}), 0.5);
  EXPECT_REL(at(r, "L", {0, 1, 1, 2, 0}), 0.25);           // h1 c1
}

TEST_P(DiscretizeSegsumTest, LDiagonalIsExactlyOneAndUpperTriangleExactlyZero) {
  const TwoChunkCase k;
  const Outputs r = run(k.args());
  for (std::int64_t h = 0; h < 2; ++h)
    for (std::int64_t c = 0; c < 2; ++c)
      for (std::int64_t i = 0; i < 3; ++i)
        for (std::int64_t j = i; j < 3; ++j)
          EXPECT_EQ(at(r, "L", {0, h, c, i, j}), i == j ? 1.0 : 0.0) << "h" << h << " c" << c << " " << i << "," << j;
}

TEST_P(DiscretizeSegsumTest, GIsDenseCTimesBAndSharedByTheHeadsOfAGroup) {
  const TwoChunkCase k;
  const Outputs r = run(k.args());
  // c0: G[i,j] = C_i . B_j:  i0 [3, 2, 6]  i1 [1, 0, 3]  i2 [0, -2, 3]  (upper triangle not masked)
  const double g0[3][3] = {{3, 2, 6}, {1, 0, 3}, {0, -2, 3}};
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t h = 0; h < 2; ++h) {
        EXPECT_EQ(at(r, "G", {0, 0, i, j, h}), g0[i][j]) << i << "," << j << " h" << h;
        EXPECT_EQ(at(r, "G", {0, 1, i, j, h}), static_cast<double>(j + 1)) << i << "," << j << " h" << h;  // c1
      }
}

TEST_P(DiscretizeSegsumTest, MIsGTimesL) {
  const TwoChunkCase k;
  const Outputs r = run(k.args());
  // Diagonal: G[i,i]*1; upper triangle: G*0 = 0 exactly; below: G*L.
  EXPECT_EQ(at(r, "M", {0, 0, 0, 0, 0}), 3.0);
  EXPECT_EQ(at(r, "M", {0, 0, 2, 2, 1}), 3.0);
  EXPECT_EQ(at(r, "M", {0, 0, 0, 2, 0}), 0.0);  // G = 6 above the diagonal, L = 0
  EXPECT_EQ(at(r, "M", {0, 0, 0, 1, 1}), 0.0);
  EXPECT_EQ(at(r, "M", {0, 1, 1, 2, 0}), 0.0);
  EXPECT_REL(at(r, "M", {0, 0, 1, 0, 0}), 1 * 0.5);            // G[1,0] = 1, L h0 c0 [1,0] = 1/2
  EXPECT_REL(at(r, "M", {0, 0, 2, 1, 0}), -2 * e(-25));        // G[2,1] = -2, L = e^-25
  EXPECT_REL(at(r, "M", {0, 0, 2, 1, 1}), -2 * 0.5);           // head 1: L = 1/2
  EXPECT_REL(at(r, "M", {0, 1, 2, 0, 0}), 1 * 0.25);           // c1: G[2,0] = 1, L = 1/4
  EXPECT_EQ(at(r, "M", {0, 0, 2, 0, 0}), 0.0);                 // G[2,0] = 0
}

TEST_P(DiscretizeSegsumTest, DecayStatesLastElementIsExactlyOne) {
  const TwoChunkCase k;
  const Outputs r = run(k.args());
  // decay_states[l] = exp(A_cumsum[Q-1] - A_cumsum[l]).
  EXPECT_REL(at(r, "decay_states", {0, 0, 0, 0}), e(-25) / 2);  // h0 c0: exp(-ln2 - 25)
  EXPECT_REL(at(r, "decay_states", {0, 0, 0, 1}), e(-25));
  EXPECT_REL(at(r, "decay_states", {0, 0, 1, 0}), 0.25);        // h0 c1
  EXPECT_REL(at(r, "decay_states", {0, 0, 1, 1}), 0.5);
  EXPECT_REL(at(r, "decay_states", {0, 1, 0, 0}), e(-25) / 2);  // h1 c0: exp(-25 - ln2)
  EXPECT_REL(at(r, "decay_states", {0, 1, 0, 1}), 0.5);
  for (std::int64_t h = 0; h < 2; ++h)
    for (std::int64_t c = 0; c < 2; ++c) EXPECT_EQ(at(r, "decay_states", {0, h, c, 2}), 1.0);
}

TEST_P(DiscretizeSegsumTest, ALogEntersAsMinusExp) {
  // A_log = -1 -> A = -e^-1. Q = 2, dt = [0, 25]: a = [A ln2, 25A]; A_cumsum = [A ln2, A ln2 + 25A];
  // L[1,0] = exp(25A); decay_states = [exp(25A), 1].
  const Tensor hidden = bf16({1, 1, 2, 1, 1}, {0, 0});
  const Tensor dt = bf16({1, 1, 2, 1}, {0, 25});
  const Tensor A_log = bf16({1}, {-1});
  const Tensor B = bf16({1, 1, 2, 1, 1}, {1, 1});
  const Tensor C = bf16({1, 1, 2, 1, 1}, {1, 1});
  const Outputs r = run({.hidden_states = &hidden, .dt = &dt, .A_log = &A_log, .B = &B, .C = &C});
  const double A = -e(-1);
  EXPECT_REL(at(r, "A_cumsum", {0, 0, 0, 0}), A * kLn2);
  EXPECT_REL(at(r, "A_cumsum", {0, 0, 0, 1}), A * kLn2 + 25 * A);
  EXPECT_REL(at(r, "L", {0, 0, 0, 1, 0}), e(25 * A));
  EXPECT_REL(at(r, "decay_states", {0, 0, 0, 0}), e(25 * A));
  EXPECT_EQ(at(r, "decay_states", {0, 0, 0, 1}), 1.0);
}

TEST_P(DiscretizeSegsumTest, GroupOfHeadIsHeadDividedByHeadsPerGroup) {
  // b = 2, c = 1, Q = 1, h = 4, g = 2, n = 1: heads 0,1 read group 0, heads 2,3 group 1.
  //   b0: C = [2, 3], B = [5, 7] -> G = [10, 10, 21, 21];  b1: C = [1, -1], B = [4, 4] -> [4, 4, -4, -4]
  const Tensor hidden = bf16({2, 1, 1, 4, 1}, {0, 0, 0, 0, 0, 0, 0, 0});
  const Tensor dt = bf16({2, 1, 1, 4}, {0, 0, 0, 0, 0, 0, 0, 0});
  const Tensor A_log = bf16({4}, {0, 0, 0, 0});
  const Tensor C = bf16({2, 1, 1, 2, 1}, {2, 3, 1, -1});
  const Tensor B = bf16({2, 1, 1, 2, 1}, {5, 7, 4, 4});
  const Outputs r = run({.hidden_states = &hidden, .dt = &dt, .A_log = &A_log, .B = &B, .C = &C});
  const double expected[2][4] = {{10, 10, 21, 21}, {4, 4, -4, -4}};
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t h = 0; h < 4; ++h) {
      EXPECT_EQ(at(r, "G", {b, 0, 0, 0, h}), expected[b][h]) << "b" << b << " h" << h;
      EXPECT_EQ(at(r, "M", {b, 0, 0, 0, h}), expected[b][h]) << "b" << b << " h" << h;  // L diag = 1
      EXPECT_EQ(at(r, "L", {b, h, 0, 0, 0}), 1.0);
      EXPECT_EQ(at(r, "decay_states", {b, h, 0, 0}), 1.0);
      EXPECT_REL(at(r, "A_cumsum", {b, h, 0, 0}), -kLn2);  // softplus(0) * -1
    }
}

}  // namespace
}  // namespace ssd_test
