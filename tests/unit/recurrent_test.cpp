// SSDRecurrentFwd: hand-worked decode steps (no dt clamp, softplus, D, z, groups, state_batch_indices)
// and the serving interface (multi-token rows, write slots, per-token tables, accepted tokens,
// padding id, read-only state, intermediate states).
#include "test_support.h"

namespace ssd_test {
namespace {

using ssd::RecurrentArgs;

class RecurrentTest : public ::testing::TestWithParam<OracleForm<RecurrentArgs>> {
 protected:
  Outputs run(const RecurrentArgs& args) const { return GetParam().run(args); }
};
INSTANTIATE_TEST_SUITE_P(BothForms, RecurrentTest, ::testing::ValuesIn(kRecurrentForms),
                         form_name<RecurrentArgs>);

TEST_P(RecurrentTest, OneStepTwoStateEntries) {
  // state [1, 2], A [0, -1], dt 1, x 3, B [1, 2], C [1, 1]:
  //   h_new = [1*e^0 + 1*1*3, 2*e^-1 + 1*2*3] = [4, 6 + 2e^-1];  out = 4 + 6 + 2e^-1
  const Tensor st = f32({1, 1, 1, 2}, {1, 2});
  const Tensor x = f32({1, 1, 1}, {3});
  const Tensor dt = f32({1, 1, 1}, {1});
  const Tensor A = f32({1, 1, 2}, {0, -1});
  const Tensor B = f32({1, 1, 2}, {1, 2});
  const Tensor C = f32({1, 1, 2}, {1, 1});
  const Outputs r = run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C});
  EXPECT_EQ(r.get("out").value.shape(), (Shape{1, 1, 1}));
  EXPECT_EQ(r.get("state").value.shape(), (Shape{1, 1, 1, 2}));
  EXPECT_REL(at(r, "out", {0, 0, 0}), 10 + 2 * e(-1));
  EXPECT_EQ(at(r, "state", {0, 0, 0, 0}), 4.0);
  EXPECT_REL(at(r, "state", {0, 0, 0, 1}), 6 + 2 * e(-1));
}

TEST_P(RecurrentTest, PerElementAAndDt) {
  // P = 2, N = 1: A [-1, 0], dt [1, 2], state [1, 1], x [1, 1], B = C = 1:
  //   p0: 1*e^-1 + 1*1*1 = 1 + e^-1;  p1: 1*e^0 + 2*1*1 = 3
  const Tensor st = f32({1, 1, 2, 1}, {1, 1});
  const Tensor x = f32({1, 1, 2}, {1, 1});
  const Tensor dt = f32({1, 1, 2}, {1, 2});
  const Tensor A = f32({1, 2, 1}, {-1, 0});
  const Tensor B = f32({1, 1, 1}, {1});
  const Tensor C = f32({1, 1, 1}, {1});
  const Outputs r = run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C});
  EXPECT_REL(at(r, "out", {0, 0, 0}), 1 + e(-1));
  EXPECT_EQ(at(r, "out", {0, 0, 1}), 3.0);
}

TEST_P(RecurrentTest, NegativeDtIsNotClampedOnThisPath) {
  // No dt_limit in selective_state_update: dt' = -1 stays. state 1, A -1, x 1, B = C = 1:
  //   h_new = 1*exp(-1 * -1) + (-1)*1*1 = e - 1 (the prefill pipeline would give dt' = 0 and 1).
  const Tensor st = f32({1, 1, 1, 1}, {1});
  const Tensor x = f32({1, 1, 1}, {1});
  const Tensor dt = f32({1, 1, 1}, {-1});
  const Tensor A = f32({1, 1, 1}, {-1});
  const Tensor B = f32({1, 1, 1}, {1});
  const Tensor C = f32({1, 1, 1}, {1});
  const Outputs r = run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C});
  EXPECT_REL(at(r, "out", {0, 0, 0}), e(1) - 1);
  EXPECT_REL(at(r, "state", {0, 0, 0, 0}), e(1) - 1);
}

TEST_P(RecurrentTest, DtBiasThenSoftplusWithThreshold) {
  // P = 2, N = 1, A = 0: dt + bias = [-1 + 1, 24 + 1] = [0, 25] -> softplus [ln 2, 25].
  //   p0: h_new = 5 + ln2*1*2;  p1: h_new = 0 + 25*1*1 = 25 (exact: above the threshold)
  const Tensor st = f32({1, 1, 2, 1}, {5, 0});
  const Tensor x = f32({1, 1, 2}, {2, 1});
  const Tensor dt = f32({1, 1, 2}, {-1, 24});
  const Tensor bias = f32({1, 2}, {1, 1});
  const Tensor A = f32({1, 2, 1}, {0, 0});
  const Tensor B = f32({1, 1, 1}, {1});
  const Tensor C = f32({1, 1, 1}, {1});
  const Outputs r = run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .dt_bias = &bias,
                         .dt_softplus = true});
  EXPECT_REL(at(r, "out", {0, 0, 0}), 5 + 2 * kLn2);
  EXPECT_EQ(at(r, "out", {0, 0, 1}), 25.0);
}

TEST_P(RecurrentTest, DAndZGate) {
  // state 0, A 0, dt 1, B = C = 1, x [1, 2]: h_new = x; y = x + D*x with D = [0.5, 1] -> [1.5, 4];
  // out = y * silu(z) with z = [1, 2].
  const Tensor st = f32({1, 1, 2, 1}, {0, 0});
  const Tensor x = f32({1, 1, 2}, {1, 2});
  const Tensor dt = f32({1, 1, 2}, {1, 1});
  const Tensor A = f32({1, 2, 1}, {0, 0});
  const Tensor B = f32({1, 1, 1}, {1});
  const Tensor C = f32({1, 1, 1}, {1});
  const Tensor D = f32({1, 2}, {0.5, 1});
  const Tensor z = f32({1, 1, 2}, {1, 2});
  const Outputs with_d = run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .D = &D});
  EXPECT_EQ(at(with_d, "out", {0, 0, 0}), 1.5);
  EXPECT_EQ(at(with_d, "out", {0, 0, 1}), 4.0);
  const Outputs gated = run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .D = &D, .z = &z});
  EXPECT_REL(at(gated, "out", {0, 0, 0}), 1.5 * silu(1));
  EXPECT_REL(at(gated, "out", {0, 0, 1}), 4 * silu(2));
}

TEST_P(RecurrentTest, HeadsOfOneGroupShareBAndC) {
  // H = 2, G = 1, N = 1, state 0, A 0, dt 1: out[h] = x[h]*B*C with B = 2, C = 1: [2, 6].
  const Tensor st = f32({1, 2, 1, 1}, {0, 0});
  const Tensor x = f32({1, 2, 1}, {1, 3});
  const Tensor dt = f32({1, 2, 1}, {1, 1});
  const Tensor A = f32({2, 1, 1}, {0, 0});
  const Tensor B = f32({1, 1, 1}, {2});
  const Tensor C = f32({1, 1, 1}, {1});
  const Outputs r = run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C});
  EXPECT_EQ(at(r, "out", {0, 0, 0}), 2.0);
  EXPECT_EQ(at(r, "out", {0, 1, 0}), 6.0);
}

TEST_P(RecurrentTest, GroupOfHeadIsHeadDividedByHeadsPerGroup) {
  // H = 4, G = 2: heads 0,1 -> group 0 (B = 2, C = 1), heads 2,3 -> group 1 (B = 5, C = 10).
  //   out = x * B * C = [1*2, 1*2, 1*50, 1*50]
  const Tensor st = f32({1, 4, 1, 1}, {0, 0, 0, 0});
  const Tensor x = f32({1, 4, 1}, {1, 1, 1, 1});
  const Tensor dt = f32({1, 4, 1}, {1, 1, 1, 1});
  const Tensor A = f32({4, 1, 1}, {0, 0, 0, 0});
  const Tensor B = f32({1, 2, 1}, {2, 5});
  const Tensor C = f32({1, 2, 1}, {1, 10});
  const Outputs r = run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C});
  EXPECT_EQ(at(r, "out", {0, 0, 0}), 2.0);
  EXPECT_EQ(at(r, "out", {0, 1, 0}), 2.0);
  EXPECT_EQ(at(r, "out", {0, 2, 0}), 50.0);
  EXPECT_EQ(at(r, "out", {0, 3, 0}), 50.0);
}

TEST_P(RecurrentTest, StateBatchIndicesWithPaddingEntry) {
  // Bt = 2, Bs = 3 slots [10, 20, 30], indices [2, -1], A = 0, dt = 1, B = C = 1, x = [1, 5]:
  //   b0 -> slot 2: h_new = 30 + 1 = 31, out 31;  b1 is padding: its out is "don't care", no slot touched.
  const Tensor st = f32({3, 1, 1, 1}, {10, 20, 30});
  const Tensor x = f32({2, 1, 1}, {1, 5});
  const Tensor dt = f32({2, 1, 1}, {1, 1});
  const Tensor A = f32({1, 1, 1}, {0});
  const Tensor B = f32({2, 1, 1}, {1, 1});
  const Tensor C = f32({2, 1, 1}, {1, 1});
  const Tensor idx = i32({2}, {2, -1});
  const Outputs r =
      run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .state_batch_indices = &idx});
  EXPECT_EQ(r.get("state").value.shape(), (Shape{3, 1, 1, 1}));
  EXPECT_EQ(at(r, "out", {0, 0, 0}), 31.0);
  EXPECT_TRUE(defined_at(r, "out", {0, 0, 0}));
  EXPECT_FALSE(defined_at(r, "out", {1, 0, 0}));
  EXPECT_EQ(at(r, "state", {0, 0, 0, 0}), 10.0);
  EXPECT_EQ(at(r, "state", {1, 0, 0, 0}), 20.0);
  EXPECT_EQ(at(r, "state", {2, 0, 0, 0}), 31.0);
}

TEST_P(RecurrentTest, StateBatchIndicesPermuteSlotsAndAnyNegativeIsPadding) {
  // Slots [10, 20, 30], B = [1, 2], x = [1, 5]:
  //   indices [1, 0]: slot 1 = 20 + 1*1 = 21 (out b0 21), slot 0 = 10 + 2*5 = 20 (out b1 20), slot 2 kept.
  const Tensor st = f32({3, 1, 1, 1}, {10, 20, 30});
  const Tensor x = f32({2, 1, 1}, {1, 5});
  const Tensor dt = f32({2, 1, 1}, {1, 1});
  const Tensor A = f32({1, 1, 1}, {0});
  const Tensor B = f32({2, 1, 1}, {1, 2});
  const Tensor C = f32({2, 1, 1}, {1, 1});
  const Tensor perm = i32({2}, {1, 0});
  const Outputs r =
      run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .state_batch_indices = &perm});
  EXPECT_EQ(at(r, "out", {0, 0, 0}), 21.0);
  EXPECT_EQ(at(r, "out", {1, 0, 0}), 20.0);
  EXPECT_EQ(at(r, "state", {0, 0, 0, 0}), 20.0);
  EXPECT_EQ(at(r, "state", {1, 0, 0, 0}), 21.0);
  EXPECT_EQ(at(r, "state", {2, 0, 0, 0}), 30.0);
  //   indices [-7, 0]: b0 padding (out undefined), slot 0 = 10 + 2*5 = 20, slots 1 and 2 kept.
  const Tensor pad = i32({2}, {-7, 0});
  const Outputs q =
      run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .state_batch_indices = &pad});
  EXPECT_FALSE(defined_at(q, "out", {0, 0, 0}));
  EXPECT_EQ(at(q, "out", {1, 0, 0}), 20.0);
  EXPECT_EQ(at(q, "state", {0, 0, 0, 0}), 20.0);
  EXPECT_EQ(at(q, "state", {1, 0, 0, 0}), 20.0);
  EXPECT_EQ(at(q, "state", {2, 0, 0, 0}), 30.0);
}

TEST_P(RecurrentTest, OutUsesTheUnroundedNewState) {
  // bf16 state 1, A 0, dt 1, B = C = 1, x = 2^-9: h_new = 1 + 2^-9, which bf16 (ulp 2^-7 at 1)
  // would round back to 1. out and the returned state carry the unrounded 1 + 2^-9.
  const Tensor st = bf16({1, 1, 1, 1}, {1});
  const Tensor x = f32({1, 1, 1}, {std::ldexp(1.0, -9)});
  const Tensor dt = f32({1, 1, 1}, {1});
  const Tensor A = f32({1, 1, 1}, {0});
  const Tensor B = f32({1, 1, 1}, {1});
  const Tensor C = f32({1, 1, 1}, {1});
  const Outputs r = run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C});
  EXPECT_EQ(at(r, "out", {0, 0, 0}), 1.0 + std::ldexp(1.0, -9));
  EXPECT_EQ(at(r, "state", {0, 0, 0, 0}), 1.0 + std::ldexp(1.0, -9));
}

// Multi-token rows: H = P = N = 1, A = 0 (no decay), B = C = 1, dt' = dt (no softplus), so each
// token adds dt * x to the state and out is the state after that token.

TEST_P(RecurrentTest, MultiTokenRowCarriesTheStateThroughItsTokens) {
  // Bt = 1, T = 3, state 10, dt = [1, 2, 3], x = [1, 1, 2]:
  //   t0: 10 + 1*1 = 11;  t1: 11 + 2*1 = 13;  t2: 13 + 3*2 = 19;  stored once: state 19.
  const Tensor st = f32({1, 1, 1, 1}, {10});
  const Tensor x = f32({1, 3, 1, 1}, {1, 1, 2});
  const Tensor dt = f32({1, 3, 1, 1}, {1, 2, 3});
  const Tensor A = f32({1, 1, 1}, {0});
  const Tensor B = f32({1, 3, 1, 1}, {1, 1, 1});
  const Tensor C = f32({1, 3, 1, 1}, {1, 1, 1});
  const Outputs r = run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .intermediate_states = true, .tokens = 3});
  EXPECT_EQ(r.get("out").value.shape(), (Shape{1, 3, 1, 1}));
  EXPECT_EQ(at(r, "out", {0, 0, 0, 0}), 11.0);
  EXPECT_EQ(at(r, "out", {0, 1, 0, 0}), 13.0);
  EXPECT_EQ(at(r, "out", {0, 2, 0, 0}), 19.0);
  EXPECT_EQ(at(r, "state", {0, 0, 0, 0}), 19.0);
  EXPECT_EQ(r.get("intermediate_states").value.shape(), (Shape{1, 3, 1, 1, 1}));
  EXPECT_EQ(at(r, "intermediate_states", {0, 0, 0, 0, 0}), 11.0);
  EXPECT_EQ(at(r, "intermediate_states", {0, 1, 0, 0, 0}), 13.0);
  EXPECT_EQ(at(r, "intermediate_states", {0, 2, 0, 0, 0}), 19.0);
}

TEST_P(RecurrentTest, MultiTokenDecayAppliesPerToken) {
  // T = 2, N = 1, A = -1, dt = [1, 1], x = [0, 0]: the state only decays, twice:
  //   state 2 -> 2e^-1 -> 2e^-2; out = [2e^-1, 2e^-2] with C = 1.
  const Tensor st = f32({1, 1, 1, 1}, {2});
  const Tensor x = f32({1, 2, 1, 1}, {0, 0});
  const Tensor dt = f32({1, 2, 1, 1}, {1, 1});
  const Tensor A = f32({1, 1, 1}, {-1});
  const Tensor B = f32({1, 2, 1, 1}, {1, 1});
  const Tensor C = f32({1, 2, 1, 1}, {1, 1});
  const Outputs r = run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .tokens = 2});
  EXPECT_REL(at(r, "out", {0, 0, 0, 0}), 2 * e(-1));
  EXPECT_REL(at(r, "out", {0, 1, 0, 0}), 2 * e(-2));
  EXPECT_REL(at(r, "state", {0, 0, 0, 0}), 2 * e(-2));
}

TEST_P(RecurrentTest, WriteSlotsApartFromReadSlots) {
  // One token, slots [10, 20, 30, 40], read [0, 1], write [3, 2], dt = 1, x = [1, 2]:
  //   row 0 reads 10 -> 11, stored to slot 3;  row 1 reads 20 -> 22, stored to slot 2.
  //   The read slots 0 and 1 keep their values.
  const Tensor st = f32({4, 1, 1, 1}, {10, 20, 30, 40});
  const Tensor x = f32({2, 1, 1}, {1, 2});
  const Tensor dt = f32({2, 1, 1}, {1, 1});
  const Tensor A = f32({1, 1, 1}, {0});
  const Tensor B = f32({2, 1, 1}, {1, 1});
  const Tensor C = f32({2, 1, 1}, {1, 1});
  const Tensor read = i32({2}, {0, 1});
  const Tensor write = i32({2}, {3, 2});
  const Outputs r = run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .state_batch_indices = &read,
                         .dst_state_batch_indices = &write});
  EXPECT_EQ(at(r, "out", {0, 0, 0}), 11.0);
  EXPECT_EQ(at(r, "out", {1, 0, 0}), 22.0);
  EXPECT_EQ(at(r, "state", {0, 0, 0, 0}), 10.0);
  EXPECT_EQ(at(r, "state", {1, 0, 0, 0}), 20.0);
  EXPECT_EQ(at(r, "state", {2, 0, 0, 0}), 22.0);
  EXPECT_EQ(at(r, "state", {3, 0, 0, 0}), 11.0);
}

TEST_P(RecurrentTest, PerTokenTablesStoreEveryTokenAndAcceptedTokensPickTheReadColumn) {
  // Bt = 1, T = 3, slots [0, 100, 200, 300, 400, 500, 600], read table [1, 2, 3], write table
  // [4, -1, 6], num_accepted_tokens 3: the row starts from column max(3 - 1, 0) = 2, slot 3 = 300.
  //   dt = 1, x = [1, 2, 3]: 301, 303, 306;  stored after t0 to slot 4 (301), t1 skipped (-1),
  //   after t2 to slot 6 (306). Slots 0..3 and 5 keep their values.
  const Tensor st = f32({7, 1, 1, 1}, {0, 100, 200, 300, 400, 500, 600});
  const Tensor x = f32({1, 3, 1, 1}, {1, 2, 3});
  const Tensor dt = f32({1, 3, 1, 1}, {1, 1, 1});
  const Tensor A = f32({1, 1, 1}, {0});
  const Tensor B = f32({1, 3, 1, 1}, {1, 1, 1});
  const Tensor C = f32({1, 3, 1, 1}, {1, 1, 1});
  const Tensor read = i32({1, 3}, {1, 2, 3});
  const Tensor write = i32({1, 3}, {4, -1, 6});
  const Tensor accepted = i32({1}, {3});
  const Outputs r = run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .state_batch_indices = &read,
                         .dst_state_batch_indices = &write, .num_accepted_tokens = &accepted, .tokens = 3});
  EXPECT_EQ(at(r, "out", {0, 0, 0, 0}), 301.0);
  EXPECT_EQ(at(r, "out", {0, 1, 0, 0}), 303.0);
  EXPECT_EQ(at(r, "out", {0, 2, 0, 0}), 306.0);
  const double want[7] = {0, 100, 200, 300, 301, 500, 306};
  for (std::int64_t slot = 0; slot < 7; ++slot) EXPECT_EQ(at(r, "state", {slot, 0, 0, 0}), want[slot]) << slot;
  //   0 accepted tokens: column max(0 - 1, 0) = 0, slot 1 = 100: 101, 103, 106.
  const Tensor none = i32({1}, {0});
  const Outputs q = run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .state_batch_indices = &read,
                         .dst_state_batch_indices = &write, .num_accepted_tokens = &none, .tokens = 3});
  EXPECT_EQ(at(q, "out", {0, 0, 0, 0}), 101.0);
  EXPECT_EQ(at(q, "state", {6, 0, 0, 0}), 106.0);
}

TEST_P(RecurrentTest, PaddingIdIsARealSlotThatStaysUntouched) {
  // pad_slot_id 0 (a null block): read [0, 2], slots [7, 8, 9]: row 0 is padding (its out
  // undefined), row 1 reads 9 -> 9 + 1*1 = 10 into slot 2; the null block 0 keeps 7.
  const Tensor st = f32({3, 1, 1, 1}, {7, 8, 9});
  const Tensor x = f32({2, 1, 1}, {5, 1});
  const Tensor dt = f32({2, 1, 1}, {1, 1});
  const Tensor A = f32({1, 1, 1}, {0});
  const Tensor B = f32({2, 1, 1}, {1, 1});
  const Tensor C = f32({2, 1, 1}, {1, 1});
  const Tensor read = i32({2}, {0, 2});
  const Outputs r = run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .state_batch_indices = &read,
                         .pad_slot_id = 0});
  EXPECT_FALSE(defined_at(r, "out", {0, 0, 0}));
  EXPECT_EQ(at(r, "out", {1, 0, 0}), 10.0);
  EXPECT_EQ(at(r, "state", {0, 0, 0, 0}), 7.0);
  EXPECT_EQ(at(r, "state", {1, 0, 0, 0}), 8.0);
  EXPECT_EQ(at(r, "state", {2, 0, 0, 0}), 10.0);
}

TEST_P(RecurrentTest, DisabledStateUpdateLeavesTheBufferAlone) {
  // state 5, dt = 1, x = 2: out = 7, but the state buffer keeps 5.
  const Tensor st = f32({1, 1, 1, 1}, {5});
  const Tensor x = f32({1, 1, 1}, {2});
  const Tensor dt = f32({1, 1, 1}, {1});
  const Tensor A = f32({1, 1, 1}, {0});
  const Tensor B = f32({1, 1, 1}, {1});
  const Tensor C = f32({1, 1, 1}, {1});
  const Outputs r = run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .disable_state_update = true});
  EXPECT_EQ(at(r, "out", {0, 0, 0}), 7.0);
  EXPECT_EQ(at(r, "state", {0, 0, 0, 0}), 5.0);
}

TEST_P(RecurrentTest, SlotTablesThatRaceAreRejected) {
  // Row 0 stores slot 1, which row 1 reads: the result would depend on the order of the rows.
  const Tensor st = f32({3, 1, 1, 1}, {0, 0, 0});
  const Tensor x = f32({2, 1, 1}, {1, 1});
  const Tensor dt = f32({2, 1, 1}, {1, 1});
  const Tensor A = f32({1, 1, 1}, {0});
  const Tensor B = f32({2, 1, 1}, {1, 1});
  const Tensor C = f32({2, 1, 1}, {1, 1});
  const Tensor read = i32({2}, {0, 1});
  const Tensor write = i32({2}, {1, 2});
  auto message = [&](const Tensor& writes) {
    try {
      run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .state_batch_indices = &read,
           .dst_state_batch_indices = &writes});
    } catch (const ssd::ArgumentError& e) {
      EXPECT_EQ(e.argument(), "dst_state_batch_indices");
      return std::string(e.what());
    }
    return std::string("no ssd::ArgumentError");
  };
  EXPECT_NE(message(write).find("row 0 stores state slot 1, which row 1 reads"), std::string::npos) << message(write);
  const Tensor twice = i32({2}, {2, 2});
  EXPECT_NE(message(twice).find("state slot 2 is stored twice"), std::string::npos) << message(twice);
}

TEST_P(RecurrentTest, VarlenRowsOfDifferentLengths) {
  // Rows of 2, 0 and 1 tokens (cu_seqlens [0, 2, 2, 3], tokens = 2 at most), packed x = [1, 2, 5],
  // dt = 1, A = 0, B = C = 1, state rows [10, 20, 30]:
  //   row 0: 10 + 1 = 11, 11 + 2 = 13 (stored 13);  row 1: no tokens, nothing stored (20);
  //   row 2: 30 + 5 = 35 (stored). intermediate_states [3,2,...]: [11, 13], [-, -], [35, -].
  const Tensor st = f32({3, 1, 1, 1}, {10, 20, 30});
  const Tensor x = f32({3, 1, 1}, {1, 2, 5});
  const Tensor dt = f32({3, 1, 1}, {1, 1, 1});
  const Tensor A = f32({1, 1, 1}, {0});
  const Tensor B = f32({3, 1, 1}, {1, 1, 1});
  const Tensor C = f32({3, 1, 1}, {1, 1, 1});
  const Tensor cu = i32({4}, {0, 2, 2, 3});
  const Outputs r = run({.state = &st, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .intermediate_states = true,
                         .tokens = 2, .cu_seqlens = &cu});
  EXPECT_EQ(r.get("out").value.shape(), (Shape{3, 1, 1}));
  EXPECT_EQ(at(r, "out", {0, 0, 0}), 11.0);
  EXPECT_EQ(at(r, "out", {1, 0, 0}), 13.0);
  EXPECT_EQ(at(r, "out", {2, 0, 0}), 35.0);
  EXPECT_EQ(at(r, "state", {0, 0, 0, 0}), 13.0);
  EXPECT_EQ(at(r, "state", {1, 0, 0, 0}), 20.0);
  EXPECT_EQ(at(r, "state", {2, 0, 0, 0}), 35.0);
  EXPECT_EQ(at(r, "intermediate_states", {0, 1, 0, 0, 0}), 13.0);
  EXPECT_EQ(at(r, "intermediate_states", {2, 0, 0, 0, 0}), 35.0);
  EXPECT_FALSE(defined_at(r, "intermediate_states", {1, 0, 0, 0, 0}));
  EXPECT_FALSE(defined_at(r, "intermediate_states", {2, 1, 0, 0, 0}));
  EXPECT_TRUE(defined_at(r, "intermediate_states", {0, 1, 0, 0, 0}));
}

}  // namespace
}  // namespace ssd_test
