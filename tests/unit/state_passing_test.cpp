// SSDStatePassingFwd: hand-worked exclusive inter-chunk scan (decays, initial_states, seq_idx, NC = 1).
#include "test_support.h"

namespace ssd_test {
namespace {

using ssd::StatePassingArgs;

class StatePassingTest : public ::testing::TestWithParam<OracleForm<StatePassingArgs>> {
 protected:
  Outputs run(const StatePassingArgs& args) const { return GetParam().run(args); }
};
INSTANTIATE_TEST_SUITE_P(BothForms, StatePassingTest, ::testing::ValuesIn(kStatePassingForms),
                         form_name<StatePassingArgs>);

TEST_P(StatePassingTest, ExclusiveScanWithoutDecayOrInitialState) {
  // alpha = 0 (decay 1), states [1,2,3]: out = [0, 1, 1+2] (state entering each chunk), final = 6.
  const Tensor states = f32({1, 3, 1, 1}, {1, 2, 3});
  const Tensor alpha = f32({1, 1, 3}, {0, 0, 0});
  const Outputs r = run({.states = &states, .dA_chunk_cumsum = &alpha});
  EXPECT_EQ(r.get("out").value.shape(), (Shape{1, 3, 1, 1}));
  EXPECT_EQ(r.get("final_states").value.shape(), (Shape{1, 1, 1}));
  EXPECT_EQ(at(r, "out", {0, 0, 0, 0}), 0.0);
  EXPECT_EQ(at(r, "out", {0, 1, 0, 0}), 1.0);
  EXPECT_EQ(at(r, "out", {0, 2, 0, 0}), 3.0);
  EXPECT_EQ(at(r, "final_states", {0, 0, 0}), 6.0);
}

TEST_P(StatePassingTest, DecaysAndInitialState) {
  // alpha = [-1,-2,-3], S_c = [1,2,3], h_init = 4:
  //   out0 = 4
  //   out1 = e^-1*4 + 1
  //   out2 = e^-2*out1 + 2 = 4e^-3 + e^-2 + 2
  //   final = e^-3*out2 + 3 = 4e^-6 + e^-5 + 2e^-3 + 3
  const Tensor states = f32({1, 3, 1, 1}, {1, 2, 3});
  const Tensor alpha = f32({1, 1, 3}, {-1, -2, -3});
  const Tensor init = f32({1, 1, 1}, {4});
  const Outputs r = run({.states = &states, .dA_chunk_cumsum = &alpha, .initial_states = &init});
  EXPECT_EQ(at(r, "out", {0, 0, 0, 0}), 4.0);
  EXPECT_REL(at(r, "out", {0, 1, 0, 0}), 4 * e(-1) + 1);
  EXPECT_REL(at(r, "out", {0, 2, 0, 0}), 4 * e(-3) + e(-2) + 2);
  EXPECT_REL(at(r, "final_states", {0, 0, 0}), 4 * e(-6) + e(-5) + 2 * e(-3) + 3);
}

TEST_P(StatePassingTest, SingleChunk) {
  // NC = 1: out[0] = h_init; final = e^alpha0 * h_init + S_0, D = 2.
  const Tensor states = f32({1, 1, 1, 2}, {1, 1});
  const Tensor alpha = f32({1, 1, 1}, {-1});
  const Tensor init = f32({1, 1, 2}, {2, -1});
  const Outputs r = run({.states = &states, .dA_chunk_cumsum = &alpha, .initial_states = &init});
  EXPECT_EQ(at(r, "out", {0, 0, 0, 0}), 2.0);
  EXPECT_EQ(at(r, "out", {0, 0, 0, 1}), -1.0);
  EXPECT_REL(at(r, "final_states", {0, 0, 0}), 2 * e(-1) + 1);
  EXPECT_REL(at(r, "final_states", {0, 0, 1}), 1 - e(-1));
}

TEST_P(StatePassingTest, SingleChunkWithoutInitialState) {
  const Tensor states = f32({1, 1, 1, 1}, {5});
  const Tensor alpha = f32({1, 1, 1}, {-2});
  const Outputs r = run({.states = &states, .dA_chunk_cumsum = &alpha});
  EXPECT_EQ(at(r, "out", {0, 0, 0, 0}), 0.0);
  EXPECT_EQ(at(r, "final_states", {0, 0, 0}), 5.0);
}

TEST_P(StatePassingTest, LayoutOfBatchesHeadsAndFlatD) {
  // Bt = 2, NC = 2, H = 2, D = 2. states[b,c,h,d] and h_init[b,h,d] are distinct integers;
  // alpha[b,h,c] (H before NC) is 0 except alpha[1,1,:] = [-1, -2] and alpha[0,1,1] = -5, which
  // only enters the final state.
  std::vector<double> sv, iv;
  for (int b = 0; b < 2; ++b)
    for (int c = 0; c < 2; ++c)
      for (int h = 0; h < 2; ++h)
        for (int d = 0; d < 2; ++d) sv.push_back(1000 * b + 100 * c + 10 * h + d);
  for (int b = 0; b < 2; ++b)
    for (int h = 0; h < 2; ++h)
      for (int d = 0; d < 2; ++d) iv.push_back(-(1000 * b + 10 * h + d) - 1);
  const Tensor states = f32({2, 2, 2, 2}, sv);
  const Tensor init = f32({2, 2, 2}, iv);
  const Tensor alpha = f32({2, 2, 2}, {0, 0,     // b0 h0: c0, c1
                                       0, -5,    // b0 h1
                                       0, 0,     // b1 h0
                                       -1, -2}); // b1 h1
  const Outputs r = run({.states = &states, .dA_chunk_cumsum = &alpha, .initial_states = &init});
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t h = 0; h < 2; ++h)
      for (std::int64_t d = 0; d < 2; ++d) {
        SCOPED_TRACE(::testing::Message() << "b" << b << " h" << h << " d" << d);
        const double hi = init.at({b, h, d});
        const double s0 = states.at({b, 0, h, d}), s1 = states.at({b, 1, h, d});
        const double a0 = alpha.at({b, h, 0}), a1 = alpha.at({b, h, 1});
        EXPECT_EQ(at(r, "out", {b, 0, h, d}), hi);
        // out1 = e^a0*h_init + S0; final = e^a1*out1 + S1 (e^0 = 1 makes most of these exact).
        EXPECT_REL(at(r, "out", {b, 1, h, d}), e(a0) * hi + s0);
        EXPECT_REL(at(r, "final_states", {b, h, d}), e(a1) * (e(a0) * hi + s0) + s1);
      }
  // Spot values: b1 h1 d1: h_init = -1012, S0 = 1011, S1 = 1111.
  EXPECT_REL(at(r, "out", {1, 1, 1, 1}), -1012 * e(-1) + 1011);
  EXPECT_REL(at(r, "final_states", {1, 1, 1}), e(-2) * (-1012 * e(-1) + 1011) + 1111);
  // b0 h0 d1: all decays 1: final = -2 + 1 + 101 = 100.
  EXPECT_EQ(at(r, "final_states", {0, 0, 1}), 100.0);
}

TEST_P(StatePassingTest, ChunkSizeIsIgnoredWithoutSeqIdx) {
  const Tensor states = f32({1, 2, 1, 1}, {1, 2});
  const Tensor alpha = f32({1, 1, 2}, {0, 0});
  const Outputs r = run({.states = &states, .dA_chunk_cumsum = &alpha, .chunk_size = 0});
  EXPECT_EQ(at(r, "final_states", {0, 0, 0}), 3.0);
}

TEST_P(StatePassingTest, SeqIdxResetsWhereTheChunkEndIdChanges) {
  // S = 5, Q = 2: chunks end at t1, t3, t4 with ids 0, 1, 1 (ids [0,0,0,1,1]).
  // alpha = -1 each, S_c = [1,2,3], h_init = 4; previous id starts at 0:
  //   c0: id 0 == 0 -> M = 4e^-1 + 1 = out1
  //   c1: id 1 != 0 -> M = 0*M + 2 = 2 = out2
  //   c2: id 1 == 1 -> final = 2e^-1 + 3
  const Tensor states = f32({1, 3, 1, 1}, {1, 2, 3});
  const Tensor alpha = f32({1, 1, 3}, {-1, -1, -1});
  const Tensor init = f32({1, 1, 1}, {4});
  const Tensor seq = i32({1, 5}, {0, 0, 0, 1, 1});
  const Outputs r = run({.states = &states, .dA_chunk_cumsum = &alpha, .initial_states = &init,
                         .seq_idx = &seq, .chunk_size = 2});
  EXPECT_EQ(at(r, "out", {0, 0, 0, 0}), 4.0);
  EXPECT_REL(at(r, "out", {0, 1, 0, 0}), 4 * e(-1) + 1);
  EXPECT_EQ(at(r, "out", {0, 2, 0, 0}), 2.0);
  EXPECT_REL(at(r, "final_states", {0, 0, 0}), 2 * e(-1) + 3);
}

TEST_P(StatePassingTest, SeqIdxBoundaryInsideChunk) {
  // S = 4, Q = 2, ids [0,1,1,1]: chunk 0 ends with id 1 != 0, so h_init is dropped:
  //   out1 = S0 = 1; final = e^-1*1 + 2.
  const Tensor states = f32({1, 2, 1, 1}, {1, 2});
  const Tensor alpha = f32({1, 1, 2}, {-1, -1});
  const Tensor init = f32({1, 1, 1}, {4});
  const Tensor seq = i32({1, 4}, {0, 1, 1, 1});
  const Outputs r = run({.states = &states, .dA_chunk_cumsum = &alpha, .initial_states = &init,
                         .seq_idx = &seq, .chunk_size = 2});
  EXPECT_EQ(at(r, "out", {0, 0, 0, 0}), 4.0);
  EXPECT_EQ(at(r, "out", {0, 1, 0, 0}), 1.0);
  EXPECT_REL(at(r, "final_states", {0, 0, 0}), e(-1) + 2);
}

TEST_P(StatePassingTest, InitialStatesIgnoredWhenRowStartsAtIdOne) {
  // ids [1,1,1,1], Q = 2: the previous id before chunk 0 is 0 != 1, so h_init never propagates.
  // out0 is still the state entering chunk 0 (h_init); out1 = S0 = 1; final = e^-1 + 2.
  const Tensor states = f32({1, 2, 1, 1}, {1, 2});
  const Tensor alpha = f32({1, 1, 2}, {-1, -1});
  const Tensor init = f32({1, 1, 1}, {4});
  const Tensor seq = i32({1, 4}, {1, 1, 1, 1});
  const Outputs r = run({.states = &states, .dA_chunk_cumsum = &alpha, .initial_states = &init,
                         .seq_idx = &seq, .chunk_size = 2});
  EXPECT_EQ(at(r, "out", {0, 0, 0, 0}), 4.0);
  EXPECT_EQ(at(r, "out", {0, 1, 0, 0}), 1.0);
  EXPECT_REL(at(r, "final_states", {0, 0, 0}), e(-1) + 2);
}

TEST_P(StatePassingTest, SeqIdxRaggedLastChunkEndsAtTokenSMinus1) {
  // S = 3, Q = 2: chunk 1 ends at t2 (not t3). ids [0,0,1]: chunk 0 keeps h_init, chunk 1 resets.
  //   out1 = 4e^-1 + 1; final = 2.
  const Tensor states = f32({1, 2, 1, 1}, {1, 2});
  const Tensor alpha = f32({1, 1, 2}, {-1, -1});
  const Tensor init = f32({1, 1, 1}, {4});
  const Tensor seq = i32({1, 3}, {0, 0, 1});
  const Outputs r = run({.states = &states, .dA_chunk_cumsum = &alpha, .initial_states = &init,
                         .seq_idx = &seq, .chunk_size = 2});
  EXPECT_REL(at(r, "out", {0, 1, 0, 0}), 4 * e(-1) + 1);
  EXPECT_EQ(at(r, "final_states", {0, 0, 0}), 2.0);
}

TEST_P(StatePassingTest, SeqIdxPaddingTailResets) {
  // ids [0,0,0,-1], Q = 2, alpha = 0: c0 ends with id 0 -> M = 4 + 1 = 5 = out1;
  // c1 ends with id -1 != 0 -> final = 0*5 + S1 = 7.
  const Tensor states = f32({1, 2, 1, 1}, {1, 7});
  const Tensor alpha = f32({1, 1, 2}, {0, 0});
  const Tensor init = f32({1, 1, 1}, {4});
  const Tensor seq = i32({1, 4}, {0, 0, 0, -1});
  const Outputs r = run({.states = &states, .dA_chunk_cumsum = &alpha, .initial_states = &init,
                         .seq_idx = &seq, .chunk_size = 2});
  EXPECT_EQ(at(r, "out", {0, 1, 0, 0}), 5.0);
  EXPECT_EQ(at(r, "final_states", {0, 0, 0}), 7.0);
}

}  // namespace
}  // namespace ssd_test
