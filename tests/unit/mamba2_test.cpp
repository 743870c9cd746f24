// Mamba2Fwd: hand-worked per-token recurrences over every option and chunk size, both oracle forms.
#include <vector>

#include "test_support.h"

namespace ssd_test {
namespace {

using ssd::Mamba2Args;

class Mamba2Test : public ::testing::TestWithParam<OracleForm<Mamba2Args>> {
 protected:
  Outputs run(const Mamba2Args& args) const { return GetParam().run(args); }
};
INSTANTIATE_TEST_SUITE_P(BothForms, Mamba2Test, ::testing::ValuesIn(kMamba2Forms), form_name<Mamba2Args>);

// A one-row problem with Bt = H = P = G = N = 1, so the recurrence is scalar:
//   M_t = exp(A*dt'_t) M_{t-1} + dt'_t B_t x_t,   y_t = C_t M_t.
struct ScalarRow {
  Tensor x, dt, A, B, C;
  ScalarRow(std::vector<double> xv, std::vector<double> dtv, double a, std::vector<double> bv,
            std::vector<double> cv)
      : x(f32({1, static_cast<std::int64_t>(xv.size()), 1, 1}, xv)),
        dt(f32({1, static_cast<std::int64_t>(dtv.size()), 1}, dtv)),
        A(f32({1}, {a})),
        B(f32({1, static_cast<std::int64_t>(bv.size()), 1, 1}, bv)),
        C(f32({1, static_cast<std::int64_t>(cv.size()), 1, 1}, cv)) {}
  Mamba2Args args(std::int64_t chunk_size) const {
    return {.x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .chunk_size = chunk_size, .dt_limit = {}};
  }
  std::int64_t length() const { return x.dim(1); }
};

double out1(const Outputs& r, std::int64_t t) { return at(r, "out", {0, t, 0, 0}); }
double final1(const Outputs& r) { return at(r, "final_states", {0, 0, 0, 0}); }

TEST_P(Mamba2Test, AZeroIsARunningSumForEveryChunkSize) {
  // A = 0, dt = 1, B = C = 1: M_t = M_{t-1} + x_t. x = [1..5] -> out = [1,3,6,10,15], final 15.
  // Q = 1..7 covers Q = 1, ragged last chunks (2, 3, 4), S = Q (5) and S < Q (6, 7).
  const ScalarRow row({1, 2, 3, 4, 5}, {1, 1, 1, 1, 1}, 0, {1, 1, 1, 1, 1}, {1, 1, 1, 1, 1});
  const double expected[5] = {1, 3, 6, 10, 15};
  for (std::int64_t Q = 1; Q <= 7; ++Q) {
    SCOPED_TRACE(::testing::Message() << "Q = " << Q);
    const Outputs r = run(row.args(Q));
    EXPECT_EQ(r.get("out").value.shape(), (Shape{1, 5, 1, 1}));
    EXPECT_EQ(r.get("final_states").value.shape(), (Shape{1, 1, 1, 1}));
    for (std::int64_t flat = 0; flat < 5; ++flat) EXPECT_TRUE(r.get("out").is_defined(flat));
    for (std::int64_t t = 0; t < 5; ++t) EXPECT_EQ(out1(r, t), expected[t]) << "t = " << t;
    EXPECT_EQ(final1(r), 15.0);
  }
}

TEST_P(Mamba2Test, DecayAcrossChunks) {
  // A = -1, dt = 1 (decay e^-1 per token), B = C = 1, x = [1,2,3]:
  //   M0 = 1;  M1 = e^-1 + 2;  M2 = e^-1*M1 + 3 = e^-2 + 2e^-1 + 3
  const ScalarRow row({1, 2, 3}, {1, 1, 1}, -1, {1, 1, 1}, {1, 1, 1});
  for (std::int64_t Q = 1; Q <= 4; ++Q) {
    SCOPED_TRACE(::testing::Message() << "Q = " << Q);
    const Outputs r = run(row.args(Q));
    EXPECT_EQ(out1(r, 0), 1.0);
    EXPECT_REL(out1(r, 1), e(-1) + 2);
    EXPECT_REL(out1(r, 2), e(-2) + 2 * e(-1) + 3);
    EXPECT_REL(final1(r), e(-2) + 2 * e(-1) + 3);
  }
}

TEST_P(Mamba2Test, BAndCWeightInputAndReadout) {
  // A = -1, dt = 0.5 (decay e^-0.5), B = [2, 4], C = [3, -1], x = [1, 1]:
  //   M0 = 0.5*2*1 = 1,  y0 = 3*1 = 3
  //   M1 = e^-0.5*1 + 0.5*4*1 = 2 + e^-0.5,  y1 = -(2 + e^-0.5)
  const ScalarRow row({1, 1}, {0.5, 0.5}, -1, {2, 4}, {3, -1});
  const Outputs r = run(row.args(2));
  EXPECT_EQ(out1(r, 0), 3.0);
  EXPECT_REL(out1(r, 1), -(2 + e(-0.5)));
  EXPECT_REL(final1(r), 2 + e(-0.5));
}

TEST_P(Mamba2Test, StateIsPByNOuterProduct) {
  // P = N = 2, A = 0, dt = 1. B: t0 [1,0], t1 [0,1]; C: t0 [1,1], t1 [1,2]; x: t0 [1,2], t1 [3,4].
  //   M0[p,n] = x0[p] B0[n] = [[1,0],[2,0]];        y0[p] = sum_n C0[n] M0[p,n] = [1, 2]
  //   M1 = M0 + x1[p] B1[n] = [[1,3],[2,4]];        y1 = [1*1 + 2*3, 1*2 + 2*4] = [7, 10]
  const Tensor x = f32({1, 2, 1, 2}, {1, 2, 3, 4});
  const Tensor dt = f32({1, 2, 1}, {1, 1});
  const Tensor A = f32({1}, {0});
  const Tensor B = f32({1, 2, 1, 2}, {1, 0, 0, 1});
  const Tensor C = f32({1, 2, 1, 2}, {1, 1, 1, 2});
  for (std::int64_t Q : {1, 2, 3}) {
    SCOPED_TRACE(::testing::Message() << "Q = " << Q);
    const Outputs r = run({.x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .chunk_size = Q, .dt_limit = {}});
    EXPECT_EQ(r.get("final_states").value.shape(), (Shape{1, 1, 2, 2}));
    EXPECT_EQ(at(r, "out", {0, 0, 0, 0}), 1.0);
    EXPECT_EQ(at(r, "out", {0, 0, 0, 1}), 2.0);
    EXPECT_EQ(at(r, "out", {0, 1, 0, 0}), 7.0);
    EXPECT_EQ(at(r, "out", {0, 1, 0, 1}), 10.0);
    EXPECT_EQ(at(r, "final_states", {0, 0, 0, 0}), 1.0);
    EXPECT_EQ(at(r, "final_states", {0, 0, 0, 1}), 3.0);
    EXPECT_EQ(at(r, "final_states", {0, 0, 1, 0}), 2.0);
    EXPECT_EQ(at(r, "final_states", {0, 0, 1, 1}), 4.0);
  }
}

TEST_P(Mamba2Test, SingleTokenWithInitialState) {
  // S = 1 < Q = 3. A = -2, dt = 0.5 (decay e^-1), B = 3, C = 4, x = 2, h_init = 5:
  //   M0 = e^-1*5 + 0.5*3*2 = 5e^-1 + 3;  y0 = 4*M0 = 20e^-1 + 12
  const ScalarRow row({2}, {0.5}, -2, {3}, {4});
  const Tensor init = f32({1, 1, 1, 1}, {5});
  Mamba2Args a = row.args(3);
  a.initial_states = &init;
  const Outputs r = run(a);
  EXPECT_REL(out1(r, 0), 20 * e(-1) + 12);
  EXPECT_REL(final1(r), 5 * e(-1) + 3);
}

TEST_P(Mamba2Test, DtBiasThenSoftplusWithThreshold) {
  // raw dt + bias = [-1 + 1, 24 + 1] = [0, 25] -> softplus [ln 2, 25]. A = 0, B = C = x = 1:
  //   M0 = ln 2, M1 = ln 2 + 25.
  const ScalarRow row({1, 1}, {-1, 24}, 0, {1, 1}, {1, 1});
  const Tensor bias = f32({1}, {1});
  for (std::int64_t Q : {1, 2, 3}) {
    SCOPED_TRACE(::testing::Message() << "Q = " << Q);
    Mamba2Args a = row.args(Q);
    a.dt_bias = &bias;
    a.dt_softplus = true;
    const Outputs r = run(a);
    EXPECT_REL(out1(r, 0), kLn2);
    EXPECT_REL(out1(r, 1), 25 + kLn2);
    EXPECT_REL(final1(r), 25 + kLn2);
  }
}

TEST_P(Mamba2Test, NegativeDtBecomesZeroWithoutSoftplus) {
  // dt = [-3, -3, 2], default dt_limit (0, inf) -> dt' = [0, 0, 2]; A = -1, h_init = 7, B = C = x = 1:
  //   M0 = e^0*7 + 0 = 7;  M1 = 7;  M2 = e^-2*7 + 2*1*1 = 7e^-2 + 2
  const ScalarRow row({1, 1, 1}, {-3, -3, 2}, -1, {1, 1, 1}, {1, 1, 1});
  const Tensor init = f32({1, 1, 1, 1}, {7});
  for (std::int64_t Q : {1, 2, 4}) {
    SCOPED_TRACE(::testing::Message() << "Q = " << Q);
    Mamba2Args a = row.args(Q);
    a.initial_states = &init;
    const Outputs r = run(a);
    EXPECT_EQ(out1(r, 0), 7.0);
    EXPECT_EQ(out1(r, 1), 7.0);
    EXPECT_REL(out1(r, 2), 7 * e(-2) + 2);
    EXPECT_REL(final1(r), 7 * e(-2) + 2);
  }
}

TEST_P(Mamba2Test, FiniteDtLimit) {
  // dt = [5, 0.25] clamped to [0.5, 2] -> [2, 0.5]; A = 0, B = C = x = 1: M = [2, 2.5].
  const ScalarRow row({1, 1}, {5, 0.25}, 0, {1, 1}, {1, 1});
  Mamba2Args a = row.args(2);
  a.dt_limit = {0.5, 2.0};
  const Outputs r = run(a);
  EXPECT_EQ(out1(r, 0), 2.0);
  EXPECT_EQ(out1(r, 1), 2.5);
  EXPECT_EQ(final1(r), 2.5);
}

// One token, P = 2, A = 0, dt = 1, B = C = 1: y = x + D*x with x = [1, 2].
struct SkipCase {
  Tensor x = f32({1, 1, 1, 2}, {1, 2});
  Tensor dt = f32({1, 1, 1}, {1});
  Tensor A = f32({1}, {0});
  Tensor B = f32({1, 1, 1, 1}, {1});
  Tensor C = f32({1, 1, 1, 1}, {1});
  Mamba2Args args() const { return {.x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .chunk_size = 1, .dt_limit = {}}; }
};

TEST_P(Mamba2Test, DPerHead) {
  const SkipCase k;
  const Tensor D = f32({1}, {0.5});
  Mamba2Args a = k.args();
  a.D = &D;
  const Outputs r = run(a);
  EXPECT_EQ(at(r, "out", {0, 0, 0, 0}), 1.5);  // 1 + 0.5*1
  EXPECT_EQ(at(r, "out", {0, 0, 0, 1}), 3.0);  // 2 + 0.5*2
  // D is a skip connection on the output only: the state is x*B*dt = [1, 2].
  EXPECT_EQ(at(r, "final_states", {0, 0, 1, 0}), 2.0);
}

TEST_P(Mamba2Test, DPerHeadAndHeaddim) {
  const SkipCase k;
  const Tensor D = f32({1, 2}, {2, -1});
  Mamba2Args a = k.args();
  a.D = &D;
  const Outputs r = run(a);
  EXPECT_EQ(at(r, "out", {0, 0, 0, 0}), 3.0);  // 1 + 2*1
  EXPECT_EQ(at(r, "out", {0, 0, 0, 1}), 0.0);  // 2 - 1*2
}

TEST_P(Mamba2Test, ZGateAfterD) {
  // y = [1.5, 3] (D = 0.5); z = [0, 1]: out = y * silu(z) = [0, 3*silu(1)].
  const SkipCase k;
  const Tensor D = f32({1}, {0.5});
  const Tensor z = f32({1, 1, 1, 2}, {0, 1});
  Mamba2Args a = k.args();
  a.D = &D;
  a.z = &z;
  const Outputs r = run(a);
  EXPECT_EQ(at(r, "out", {0, 0, 0, 0}), 0.0);
  EXPECT_REL(at(r, "out", {0, 0, 0, 1}), 3 * silu(1));
  EXPECT_EQ(at(r, "final_states", {0, 0, 1, 0}), 2.0);  // the gate does not touch the state
}

// H = 2, S = 2, P = N = 1, A = [0, -1], dt = 1, x: h0 [1,2], h1 [1,1].
struct TwoHeads {
  Tensor x = f32({1, 2, 2, 1}, {1, 1, 2, 1});
  Tensor dt = f32({1, 2, 2}, {1, 1, 1, 1});
  Tensor A = f32({2}, {0, -1});
};

TEST_P(Mamba2Test, HeadsOfOneGroupShareBAndC) {
  // G = 1: B = [1, 2], C = [1, 1].
  //   h0 (A = 0):  M0 = 1, M1 = 1 + 2*2 = 5
  //   h1 (A = -1): M0 = 1, M1 = e^-1 + 2*1 = 2 + e^-1
  const TwoHeads k;
  const Tensor B = f32({1, 2, 1, 1}, {1, 2});
  const Tensor C = f32({1, 2, 1, 1}, {1, 1});
  const Outputs r = run({.x = &k.x, .dt = &k.dt, .A = &k.A, .B = &B, .C = &C, .chunk_size = 2, .dt_limit = {}});
  EXPECT_EQ(at(r, "out", {0, 0, 0, 0}), 1.0);
  EXPECT_EQ(at(r, "out", {0, 1, 0, 0}), 5.0);
  EXPECT_EQ(at(r, "out", {0, 0, 1, 0}), 1.0);
  EXPECT_REL(at(r, "out", {0, 1, 1, 0}), 2 + e(-1));
  EXPECT_EQ(at(r, "final_states", {0, 0, 0, 0}), 5.0);
  EXPECT_REL(at(r, "final_states", {0, 1, 0, 0}), 2 + e(-1));
}

TEST_P(Mamba2Test, OneGroupPerHead) {
  // G = H = 2: B t0 (g0 1, g1 3), t1 (g0 2, g1 1); C t0 (g0 1, g1 2), t1 (g0 1, g1 1).
  //   h0: as above, out [1, 5]
  //   h1: M0 = 3*1 = 3, y0 = 2*3 = 6;  M1 = 3e^-1 + 1*1, y1 = 1 + 3e^-1
  const TwoHeads k;
  const Tensor B = f32({1, 2, 2, 1}, {1, 3, 2, 1});
  const Tensor C = f32({1, 2, 2, 1}, {1, 2, 1, 1});
  const Outputs r = run({.x = &k.x, .dt = &k.dt, .A = &k.A, .B = &B, .C = &C, .chunk_size = 2, .dt_limit = {}});
  EXPECT_EQ(at(r, "out", {0, 0, 0, 0}), 1.0);
  EXPECT_EQ(at(r, "out", {0, 1, 0, 0}), 5.0);
  EXPECT_EQ(at(r, "out", {0, 0, 1, 0}), 6.0);
  EXPECT_REL(at(r, "out", {0, 1, 1, 0}), 1 + 3 * e(-1));
  EXPECT_REL(at(r, "final_states", {0, 1, 0, 0}), 1 + 3 * e(-1));
}

TEST_P(Mamba2Test, GroupOfHeadIsHeadDividedByHeadsPerGroup) {
  // H = 4, G = 2, one token, A = 0, dt = x = 1: heads 0,1 read group 0 (B = 2, C = 1), heads 2,3
  // group 1 (B = 5, C = 10); not h % G. state = x*B*dt = [2, 2, 5, 5]; out = C*state = [2, 2, 50, 50].
  const Tensor x = f32({1, 1, 4, 1}, {1, 1, 1, 1});
  const Tensor dt = f32({1, 1, 4}, {1, 1, 1, 1});
  const Tensor A = f32({4}, {0, 0, 0, 0});
  const Tensor B = f32({1, 1, 2, 1}, {2, 5});
  const Tensor C = f32({1, 1, 2, 1}, {1, 10});
  const Outputs r = run({.x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .chunk_size = 1, .dt_limit = {}});
  const double state[4] = {2, 2, 5, 5}, expected[4] = {2, 2, 50, 50};
  for (std::int64_t h = 0; h < 4; ++h) {
    EXPECT_EQ(at(r, "out", {0, 0, h, 0}), expected[h]) << "h" << h;
    EXPECT_EQ(at(r, "final_states", {0, h, 0, 0}), state[h]) << "h" << h;
  }
}

// A = -1, dt = 1, B = C = 1, x = [1,2,3,4], h_init = 10, with a seq_idx row.
struct SeqRow {
  ScalarRow row{{1, 2, 3, 4}, {1, 1, 1, 1}, -1, {1, 1, 1, 1}, {1, 1, 1, 1}};
  Tensor init = f32({1, 1, 1, 1}, {10});
  Tensor seq;
  explicit SeqRow(std::vector<double> ids) : seq(i32({1, 4}, std::move(ids))) {}
  Mamba2Args args(std::int64_t Q) const {
    Mamba2Args a = row.args(Q);
    a.initial_states = &init;
    a.seq_idx = &seq;
    return a;
  }
};

TEST_P(Mamba2Test, SeqIdxResetsAtBoundaryInsideOrAtChunkEdge) {
  // ids [0,0,1,1]. Q = 4 and 3 put the boundary inside a chunk, Q = 2 exactly at a chunk boundary,
  // Q = 1 at every token. The recurrence is the same for all:
  //   M0 = 10e^-1 + 1;  M1 = e^-1*M0 + 2 = 10e^-2 + e^-1 + 2;  (new sequence) M2 = 3;  M3 = 3e^-1 + 4
  const SeqRow k({0, 0, 1, 1});
  for (std::int64_t Q = 1; Q <= 5; ++Q) {
    SCOPED_TRACE(::testing::Message() << "Q = " << Q);
    const Outputs r = run(k.args(Q));
    EXPECT_REL(out1(r, 0), 10 * e(-1) + 1);
    EXPECT_REL(out1(r, 1), 10 * e(-2) + e(-1) + 2);
    EXPECT_EQ(out1(r, 2), 3.0);
    EXPECT_REL(out1(r, 3), 3 * e(-1) + 4);
    EXPECT_REL(final1(r), 3 * e(-1) + 4);  // the last sequence only
  }
}

TEST_P(Mamba2Test, SeqIdxRowStartingAtIdOneIgnoresInitialState) {
  // ids [1,1,2,2]: the id before the row is 0 != 1, so h_init is never used:
  //   M0 = 1;  M1 = e^-1 + 2;  M2 = 3;  M3 = 3e^-1 + 4
  const SeqRow k({1, 1, 2, 2});
  for (std::int64_t Q = 1; Q <= 4; ++Q) {
    SCOPED_TRACE(::testing::Message() << "Q = " << Q);
    const Outputs r = run(k.args(Q));
    EXPECT_EQ(out1(r, 0), 1.0);
    EXPECT_REL(out1(r, 1), e(-1) + 2);
    EXPECT_EQ(out1(r, 2), 3.0);
    EXPECT_REL(out1(r, 3), 3 * e(-1) + 4);
    EXPECT_REL(final1(r), 3 * e(-1) + 4);
  }
}

TEST_P(Mamba2Test, SeqIdxPaddingTailIsUndefinedAndDoesNotDisturbValidTokens) {
  // ids [0,0,-1,-1]: t2, t3 are padding (not compared); t0, t1 as without seq_idx:
  //   M0 = 10e^-1 + 1;  M1 = 10e^-2 + e^-1 + 2
  const SeqRow k({0, 0, -1, -1});
  for (std::int64_t Q = 1; Q <= 4; ++Q) {
    SCOPED_TRACE(::testing::Message() << "Q = " << Q);
    const Outputs r = run(k.args(Q));
    EXPECT_TRUE(defined_at(r, "out", {0, 0, 0, 0}));
    EXPECT_TRUE(defined_at(r, "out", {0, 1, 0, 0}));
    EXPECT_FALSE(defined_at(r, "out", {0, 2, 0, 0}));
    EXPECT_FALSE(defined_at(r, "out", {0, 3, 0, 0}));
    EXPECT_REL(out1(r, 0), 10 * e(-1) + 1);
    EXPECT_REL(out1(r, 1), 10 * e(-2) + e(-1) + 2);
    // The last chunk ends in padding, so its chunk state is 0 (ops.md section 4), and state passing
    // multiplies the carried state by 0 where the chunk-end id changes (section 5): the first chunk
    // ending in padding follows an id >= 0 (or the start id 0), and every later one adds a zero
    // state to 0 * (decay) ... so the final state of a row ending in padding is exactly 0.
    EXPECT_EQ(final1(r), 0.0);
  }
}

TEST_P(Mamba2Test, SeqIdxPaddingMaskCoversEveryHeadAndHeaddim) {
  // H = 2, P = 2, ids [0,-1]: all four (h,p) entries of t1 are undefined, all of t0 defined.
  const Tensor x = f32({1, 2, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1});
  const Tensor dt = f32({1, 2, 2}, {1, 1, 1, 1});
  const Tensor A = f32({2}, {0, 0});
  const Tensor B = f32({1, 2, 1, 1}, {1, 1});
  const Tensor C = f32({1, 2, 1, 1}, {1, 1});
  const Tensor seq = i32({1, 2}, {0, -1});
  const Outputs r = run({.x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .chunk_size = 2, .seq_idx = &seq, .dt_limit = {}});
  for (std::int64_t h = 0; h < 2; ++h)
    for (std::int64_t p = 0; p < 2; ++p) {
      EXPECT_TRUE(defined_at(r, "out", {0, 0, h, p}));
      EXPECT_FALSE(defined_at(r, "out", {0, 1, h, p}));
      EXPECT_EQ(at(r, "out", {0, 0, h, p}), 1.0);
    }
}

TEST_P(Mamba2Test, BatchRowsHaveTheirOwnSeqIdxAndInitialStates) {
  // Bt = 2, A = 0, dt = 1, B = C = x = 1, h_init = [10, 10]; ids row 0 [0,0,0], row 1 [1,1,1]:
  //   row 0 uses h_init: [11, 12, 13];  row 1 ignores it: [1, 2, 3].
  const Tensor x = f32({2, 3, 1, 1}, {1, 1, 1, 1, 1, 1});
  const Tensor dt = f32({2, 3, 1}, {1, 1, 1, 1, 1, 1});
  const Tensor A = f32({1}, {0});
  const Tensor B = f32({2, 3, 1, 1}, {1, 1, 1, 1, 1, 1});
  const Tensor C = f32({2, 3, 1, 1}, {1, 1, 1, 1, 1, 1});
  const Tensor init = f32({2, 1, 1, 1}, {10, 10});
  const Tensor seq = i32({2, 3}, {0, 0, 0, 1, 1, 1});
  const Outputs r = run({.x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .chunk_size = 2,
                         .initial_states = &init, .seq_idx = &seq, .dt_limit = {}});
  for (std::int64_t t = 0; t < 3; ++t) {
    EXPECT_EQ(at(r, "out", {0, t, 0, 0}), static_cast<double>(11 + t));
    EXPECT_EQ(at(r, "out", {1, t, 0, 0}), static_cast<double>(1 + t));
  }
  EXPECT_EQ(at(r, "final_states", {0, 0, 0, 0}), 13.0);
  EXPECT_EQ(at(r, "final_states", {1, 0, 0, 0}), 3.0);
}

}  // namespace
}  // namespace ssd_test
