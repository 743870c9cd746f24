// Bad input, the op-specific rules: chunk sizes, the dt clamp, state_passing's seq_idx and chunk
// count, recurrent state slots, tensor construction. The rules every op shares (required roles,
// ranks, shapes, dtypes, seq_idx, empty sizes, H % G) are generated from the OpSpecs in
// bad_input_generated_test.cpp.
#include <vector>

#include "test_support.h"

namespace ssd_test {
namespace {

using ssd::ChunkCouplingArgs;
using ssd::ChunkCumsumArgs;
using ssd::ChunkScanArgs;
using ssd::ChunkStateArgs;
using ssd::DiscretizeSegsumArgs;
using ssd::Mamba2Args;
using ssd::RecurrentArgs;
using ssd::StatePassingArgs;

// Ones of a shape, in a dtype.
Tensor ones(DType t, Shape shape) {
  return Tensor(t, shape, std::vector<double>(static_cast<std::size_t>(ssd::element_count(shape)), 1.0));
}
Tensor f(Shape shape) { return ones(DType::f32, std::move(shape)); }
Tensor ids(std::vector<double> v) {
  const auto S = static_cast<std::int64_t>(v.size());
  return i32({1, S}, std::move(v));
}

// Runs `args` through the form and expects the rejection to name one of `names`.
template <class Args>
void expect_rejected(const OracleForm<Args>& form, const Args& args, std::initializer_list<std::string_view> names) {
  expect_argument_error([&] { (void)form.run(args); }, names);
}

// ---------------------------------------------------------------------------------------------
// Tensor construction.

TEST(BadInputTensor, NegativeExtent) {
  EXPECT_THROW(Tensor(DType::f32, {2, -1}), ssd::ArgumentError);
  expect_argument_error([] { Tensor t(DType::f32, {2, -1}); }, {"shape"});
  expect_argument_error([] { Tensor t(DType::f32, {-3}, {}); }, {"shape"});
}

TEST(BadInputTensor, WrongNumberOfValues) {
  EXPECT_THROW(Tensor(DType::f32, {2, 2}, {1, 2, 3}), ssd::ArgumentError);
  expect_argument_error([] { Tensor t(DType::f32, {2, 2}, {1, 2, 3}); }, {"values"});
  expect_argument_error([] { Tensor t(DType::bf16, {1}, {1, 2}); }, {"values"});
  expect_argument_error([] { Tensor t(DType::i32, {0}, {5}); }, {"values"});
}

TEST(BadInputTensor, ReshapeToADifferentCount) {
  const Tensor t = f({2, 3});
  EXPECT_THROW((void)t.reshaped({4, 2}), ssd::ArgumentError);
  EXPECT_EQ(t.reshaped({3, 2}).shape(), (Shape{3, 2}));
}

TEST(BadInputTensor, RowOutsideAxisZero) {
  // [3,2] holding 0..5: row 1 is [[2, 3]]; rows -1 and 3 do not exist, nor any row of a scalar.
  const Tensor t(DType::f32, {3, 2}, {0, 1, 2, 3, 4, 5});
  const Tensor r = t.row(1);
  EXPECT_EQ(r.shape(), (Shape{1, 2}));
  EXPECT_EQ(r.dtype(), DType::f32);
  EXPECT_EQ(r.values(), (std::vector<double>{2, 3}));
  expect_argument_error([&] { (void)t.row(3); }, {"row"});
  expect_argument_error([&] { (void)t.row(-1); }, {"row"});
  expect_argument_error([] { (void)Tensor(DType::f32, {}).row(0); }, {"row"});
}

TEST(BadInputTensor, RowsARangeOfAxisZero) {
  // [4,2] holding 0..7: rows 1..2 are [[2, 3], [4, 5]]; no rows is [0,2]; 3..4 does not exist.
  const Tensor t(DType::f32, {4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  const Tensor r = t.rows(1, 2);
  EXPECT_EQ(r.shape(), (Shape{2, 2}));
  EXPECT_EQ(r.values(), (std::vector<double>{2, 3, 4, 5}));
  EXPECT_EQ(t.rows(4, 0).shape(), (Shape{0, 2}));
  expect_argument_error([&] { (void)t.rows(3, 2); }, {"rows"});
  expect_argument_error([&] { (void)t.rows(-1, 1); }, {"rows"});
  expect_argument_error([&] { (void)t.rows(0, -1); }, {"rows"});
}

// ---------------------------------------------------------------------------------------------
// Mamba2Fwd. Valid base: Bt = 1, S = 2, H = 2, P = 1, G = 1, N = 1, Q = 2.

class Mamba2BadInput : public ::testing::TestWithParam<OracleForm<Mamba2Args>> {
 protected:
  Tensor x = f({1, 2, 2, 1}), dt = f({1, 2, 2}), A = f({2}), B = f({1, 2, 1, 1}), C = f({1, 2, 1, 1});
  Mamba2Args base() const { return {.x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C, .chunk_size = 2, .dt_limit = {}}; }
  void expect(const Mamba2Args& a, std::initializer_list<std::string_view> names) const {
    expect_rejected(GetParam(), a, names);
  }
};
INSTANTIATE_TEST_SUITE_P(BothForms, Mamba2BadInput, ::testing::ValuesIn(kMamba2Forms), form_name<Mamba2Args>);

TEST_P(Mamba2BadInput, BaseIsValid) { EXPECT_NO_THROW((void)GetParam().run(base())); }

TEST_P(Mamba2BadInput, WrongShapes) {
  const Tensor x3 = f({1, 2, 2});        // rank 3
  const Tensor dt_s = f({1, 3, 2});      // S = 3 vs 2
  const Tensor A3 = f({3});              // H = 3 vs 2
  const Tensor C_n = f({1, 2, 1, 2});    // N differs from B
  const Tensor B_s = f({1, 3, 1, 1});    // S differs from x
  const Tensor D3 = f({3});
  const Tensor D_hp = f({2, 2});         // [H, P+1]
  const Tensor z_bad = f({1, 2, 2, 2});
  const Tensor bias3 = f({3});
  const Tensor init_bad = f({1, 2, 1, 2});
  Mamba2Args a = base();
  a.x = &x3;
  expect(a, {"x"});
  a = base(); a.dt = &dt_s;
  expect(a, {"dt"});
  a = base(); a.A = &A3;
  expect(a, {"A"});
  a = base(); a.C = &C_n;
  expect(a, {"C", "B"});
  a = base(); a.B = &B_s;
  expect(a, {"B"});
  a = base(); a.D = &D3;
  expect(a, {"D"});
  a = base(); a.D = &D_hp;
  expect(a, {"D"});
  a = base(); a.z = &z_bad;
  expect(a, {"z"});
  a = base(); a.dt_bias = &bias3;
  expect(a, {"dt_bias"});
  a = base(); a.initial_states = &init_bad;
  expect(a, {"initial_states"});
}

TEST_P(Mamba2BadInput, NonPositiveChunkSize) {
  Mamba2Args a = base();
  a.chunk_size = 0;
  expect(a, {"chunk_size"});
  a.chunk_size = -2;
  expect(a, {"chunk_size"});
}

TEST_P(Mamba2BadInput, InvertedDtLimit) {
  Mamba2Args a = base();
  a.dt_limit = {2.0, 1.0};
  expect(a, {"dt_limit"});
}

// ---------------------------------------------------------------------------------------------
// SSDChunkCumsumFwd. Valid base: dt [1,2,1], A [1], Q = 2.

class ChunkCumsumBadInput : public ::testing::TestWithParam<OracleForm<ChunkCumsumArgs>> {
 protected:
  Tensor dt = f({1, 2, 1}), A = f({1});
  ChunkCumsumArgs base() const { return {.dt = &dt, .A = &A, .chunk_size = 2, .dt_limit = {}}; }
  void expect(const ChunkCumsumArgs& a, std::initializer_list<std::string_view> names) const {
    expect_rejected(GetParam(), a, names);
  }
};
INSTANTIATE_TEST_SUITE_P(BothForms, ChunkCumsumBadInput, ::testing::ValuesIn(kChunkCumsumForms),
                         form_name<ChunkCumsumArgs>);

TEST_P(ChunkCumsumBadInput, BaseIsValid) { EXPECT_NO_THROW((void)GetParam().run(base())); }

TEST_P(ChunkCumsumBadInput, WrongShapes) {
  const Tensor dt4 = f({1, 2, 1, 1});
  const Tensor A2 = f({2});
  const Tensor bias2 = f({2});
  ChunkCumsumArgs a = base();
  a.dt = &dt4;
  expect(a, {"dt"});
  a = base(); a.A = &A2;
  expect(a, {"A"});
  a = base(); a.dt_bias = &bias2;
  expect(a, {"dt_bias"});
}

TEST_P(ChunkCumsumBadInput, NonPositiveChunkSize) {
  ChunkCumsumArgs a = base();
  a.chunk_size = 0;
  expect(a, {"chunk_size"});
  a.chunk_size = -1;
  expect(a, {"chunk_size"});
}

// ---------------------------------------------------------------------------------------------
// SSDChunkCouplingFwd. Valid base: C, B [1,2,1,1], Q = 2.

class ChunkCouplingBadInput : public ::testing::TestWithParam<OracleForm<ChunkCouplingArgs>> {
 protected:
  Tensor C = f({1, 2, 1, 1}), B = f({1, 2, 1, 1});
  ChunkCouplingArgs base() const { return {.C = &C, .B = &B, .chunk_size = 2}; }
  void expect(const ChunkCouplingArgs& a, std::initializer_list<std::string_view> names) const {
    expect_rejected(GetParam(), a, names);
  }
};
INSTANTIATE_TEST_SUITE_P(BothForms, ChunkCouplingBadInput, ::testing::ValuesIn(kChunkCouplingForms),
                         form_name<ChunkCouplingArgs>);

TEST_P(ChunkCouplingBadInput, BaseIsValid) { EXPECT_NO_THROW((void)GetParam().run(base())); }

TEST_P(ChunkCouplingBadInput, WrongShapes) {
  const Tensor C3 = f({1, 2, 1});
  const Tensor B_n = f({1, 2, 1, 2});
  ChunkCouplingArgs a = base();
  a.C = &C3;
  expect(a, {"C"});
  a = base(); a.B = &B_n;
  expect(a, {"B", "C"});
}

TEST_P(ChunkCouplingBadInput, NonPositiveChunkSize) {
  ChunkCouplingArgs a = base();
  a.chunk_size = 0;
  expect(a, {"chunk_size"});
  a.chunk_size = -4;
  expect(a, {"chunk_size"});
}

// ---------------------------------------------------------------------------------------------
// SSDChunkStateFwd. Valid base: Bt = 1, S = 2, H = 2, P = G = N = 1, Q = 2 (NC = 1).

class ChunkStateBadInput : public ::testing::TestWithParam<OracleForm<ChunkStateArgs>> {
 protected:
  Tensor B = f({1, 2, 1, 1}), x = f({1, 2, 2, 1}), dt = f({1, 2, 1, 2}), dA = f({1, 2, 1, 2});
  ChunkStateArgs base() const { return {.B = &B, .x = &x, .dt = &dt, .dA_cumsum = &dA}; }
  void expect(const ChunkStateArgs& a, std::initializer_list<std::string_view> names) const {
    expect_rejected(GetParam(), a, names);
  }
};
INSTANTIATE_TEST_SUITE_P(BothForms, ChunkStateBadInput, ::testing::ValuesIn(kChunkStateForms),
                         form_name<ChunkStateArgs>);

TEST_P(ChunkStateBadInput, BaseIsValid) { EXPECT_NO_THROW((void)GetParam().run(base())); }

TEST_P(ChunkStateBadInput, WrongShapes) {
  const Tensor x_s = f({1, 3, 2, 1});      // S = 3 disagrees with B
  const Tensor B3 = f({1, 2, 1});
  const Tensor dt_nc = f({1, 2, 2, 2});    // NC = 2, but S = 2 with Q = 2 has one chunk
  const Tensor dA_h = f({1, 1, 1, 2});     // H = 1 vs 2
  ChunkStateArgs a = base();
  a.x = &x_s;
  expect(a, {"x", "B"});
  a = base(); a.B = &B3;
  expect(a, {"B"});
  a = base(); a.dt = &dt_nc;
  expect(a, {"dt"});
  a = base(); a.dA_cumsum = &dA_h;
  expect(a, {"dA_cumsum"});
}

TEST_P(ChunkStateBadInput, ZeroChunkSizeInDt) {
  // Q is the last extent of dt here; Q = 0 is rejected naming dt (the tensor that carries it).
  const Tensor dt_q0 = f({1, 2, 1, 0}), dA_q0 = f({1, 2, 1, 0});
  expect({.B = &B, .x = &x, .dt = &dt_q0, .dA_cumsum = &dA_q0}, {"dt", "chunk_size"});
}

// ---------------------------------------------------------------------------------------------
// SSDStatePassingFwd. Valid base: states [1,2,1,2], dA_chunk_cumsum [1,1,2].

class StatePassingBadInput : public ::testing::TestWithParam<OracleForm<StatePassingArgs>> {
 protected:
  Tensor states = f({1, 2, 1, 2}), alpha = f({1, 1, 2});
  StatePassingArgs base() const { return {.states = &states, .dA_chunk_cumsum = &alpha}; }
  void expect(const StatePassingArgs& a, std::initializer_list<std::string_view> names) const {
    expect_rejected(GetParam(), a, names);
  }
};
INSTANTIATE_TEST_SUITE_P(BothForms, StatePassingBadInput, ::testing::ValuesIn(kStatePassingForms),
                         form_name<StatePassingArgs>);

TEST_P(StatePassingBadInput, BaseIsValid) { EXPECT_NO_THROW((void)GetParam().run(base())); }

TEST_P(StatePassingBadInput, WrongShapes) {
  const Tensor states3 = f({1, 2, 2});
  const Tensor alpha_nc = f({1, 1, 3});
  const Tensor init_d = f({1, 1, 3});
  StatePassingArgs a = base();
  a.states = &states3;
  expect(a, {"states"});
  a = base(); a.dA_chunk_cumsum = &alpha_nc;
  expect(a, {"dA_chunk_cumsum"});
  a = base(); a.initial_states = &init_d;
  expect(a, {"initial_states"});
}

TEST_P(StatePassingBadInput, SeqIdxNeedsAPositiveChunkSize) {
  const Tensor seq = ids({0, 0, 0, 0});
  StatePassingArgs a = base();
  a.seq_idx = &seq;
  a.chunk_size = 0;
  expect(a, {"chunk_size"});
  a.chunk_size = -2;
  expect(a, {"chunk_size"});
}

TEST_P(StatePassingBadInput, SeqIdxLengthDisagreesWithChunkCount) {
  // S = 5 with Q = 2 gives 3 chunks, but states has NC = 2.
  const Tensor seq = ids({0, 0, 0, 0, 0});
  StatePassingArgs a = base();
  a.seq_idx = &seq;
  a.chunk_size = 2;
  expect(a, {"seq_idx", "chunk_size"});
}

// ---------------------------------------------------------------------------------------------
// SSDChunkScanFwd. Valid base: Bt = 1, S = 2, H = 2, P = G = N = 1, Q = 2 (NC = 1).

class ChunkScanBadInput : public ::testing::TestWithParam<OracleForm<ChunkScanArgs>> {
 protected:
  Tensor cb = f({1, 1, 1, 2, 2}), x = f({1, 2, 2, 1}), dt = f({1, 2, 1, 2}), dA = f({1, 2, 1, 2}),
         C = f({1, 2, 1, 1}), states = f({1, 1, 2, 1, 1});
  ChunkScanArgs base() const {
    return {.cb = &cb, .x = &x, .dt = &dt, .dA_cumsum = &dA, .C = &C, .states = &states};
  }
  void expect(const ChunkScanArgs& a, std::initializer_list<std::string_view> names) const {
    expect_rejected(GetParam(), a, names);
  }
};
INSTANTIATE_TEST_SUITE_P(BothForms, ChunkScanBadInput, ::testing::ValuesIn(kChunkScanForms),
                         form_name<ChunkScanArgs>);

TEST_P(ChunkScanBadInput, BaseIsValid) { EXPECT_NO_THROW((void)GetParam().run(base())); }

TEST_P(ChunkScanBadInput, WrongShapes) {
  const Tensor cb_g = f({1, 1, 2, 2, 2});       // G = 2 vs C's 1
  const Tensor cb_q = f({1, 1, 1, 2, 3});       // not square
  const Tensor x3 = f({1, 2, 2});
  const Tensor dt_h = f({1, 1, 1, 2});
  const Tensor states_n = f({1, 1, 2, 1, 2});
  const Tensor D_hp = f({2, 2});
  const Tensor z_bad = f({1, 2, 1, 1});
  ChunkScanArgs a = base();
  a.cb = &cb_g;
  expect(a, {"cb"});
  a = base(); a.cb = &cb_q;
  expect(a, {"cb"});
  a = base(); a.x = &x3;
  expect(a, {"x"});
  a = base(); a.dt = &dt_h;
  expect(a, {"dt"});
  a = base(); a.states = &states_n;
  expect(a, {"states"});
  a = base(); a.D = &D_hp;
  expect(a, {"D"});
  a = base(); a.z = &z_bad;
  expect(a, {"z"});
}

TEST_P(ChunkScanBadInput, ZeroChunkSizeInCb) {
  const Tensor cb_q0 = f({1, 1, 1, 0, 0}), dt_q0 = f({1, 2, 1, 0}), dA_q0 = f({1, 2, 1, 0});
  ChunkScanArgs a = base();
  a.cb = &cb_q0;
  a.dt = &dt_q0;
  a.dA_cumsum = &dA_q0;
  expect(a, {"cb", "chunk_size"});
}

// ---------------------------------------------------------------------------------------------
// SSDRecurrentFwd. Valid base: Bs = Bt = 1, H = 2, P = 1, N = 1, G = 1.

class RecurrentBadInput : public ::testing::TestWithParam<OracleForm<RecurrentArgs>> {
 protected:
  Tensor state = f({1, 2, 1, 1}), x = f({1, 2, 1}), dt = f({1, 2, 1}), A = f({2, 1, 1}), B = f({1, 1, 1}),
         C = f({1, 1, 1});
  RecurrentArgs base() const { return {.state = &state, .x = &x, .dt = &dt, .A = &A, .B = &B, .C = &C}; }
  void expect(const RecurrentArgs& a, std::initializer_list<std::string_view> names) const {
    expect_rejected(GetParam(), a, names);
  }
};
INSTANTIATE_TEST_SUITE_P(BothForms, RecurrentBadInput, ::testing::ValuesIn(kRecurrentForms),
                         form_name<RecurrentArgs>);

TEST_P(RecurrentBadInput, BaseIsValid) { EXPECT_NO_THROW((void)GetParam().run(base())); }

TEST_P(RecurrentBadInput, WrongShapes) {
  const Tensor state3 = f({1, 2, 1});
  const Tensor x_h = f({1, 3, 1});
  const Tensor dt_p = f({1, 2, 2});
  const Tensor A_h = f({2});               // per-head A is not this op's layout: [H,P,N]
  const Tensor C_n = f({1, 1, 2});
  const Tensor D_h = f({3, 1});
  const Tensor z_bad = f({1, 2, 2});
  const Tensor bias_bad = f({2, 2});
  RecurrentArgs a = base();
  a.state = &state3;
  expect(a, {"state"});
  a = base(); a.x = &x_h;
  expect(a, {"x"});
  a = base(); a.dt = &dt_p;
  expect(a, {"dt"});
  a = base(); a.A = &A_h;
  expect(a, {"A"});
  a = base(); a.C = &C_n;
  expect(a, {"C", "B"});
  a = base(); a.D = &D_h;
  expect(a, {"D"});
  a = base(); a.z = &z_bad;
  expect(a, {"z"});
  a = base(); a.dt_bias = &bias_bad;
  expect(a, {"dt_bias"});
}

TEST_P(RecurrentBadInput, StateBatchIndices) {
  const Tensor out_of_range = i32({1}, {1});  // Bs = 1 slot
  const Tensor wrong_shape = i32({2}, {0, 0});
  RecurrentArgs a = base();
  a.state_batch_indices = &out_of_range;
  expect(a, {"state_batch_indices"});
  a.state_batch_indices = &wrong_shape;
  expect(a, {"state_batch_indices"});
}

// ---------------------------------------------------------------------------------------------
// MambaDiscretizeSegsum. Valid base: b = 1, c = 1, Q = 2, h = 2, p = 1, g = 1, n = 1.

class DiscretizeSegsumBadInput : public ::testing::TestWithParam<OracleForm<DiscretizeSegsumArgs>> {
 protected:
  Tensor hidden = f({1, 1, 2, 2, 1}), dt = f({1, 1, 2, 2}), A_log = f({2}), B = f({1, 1, 2, 1, 1}),
         C = f({1, 1, 2, 1, 1});
  DiscretizeSegsumArgs base() const {
    return {.hidden_states = &hidden, .dt = &dt, .A_log = &A_log, .B = &B, .C = &C};
  }
  void expect(const DiscretizeSegsumArgs& a, std::initializer_list<std::string_view> names) const {
    expect_rejected(GetParam(), a, names);
  }
};
INSTANTIATE_TEST_SUITE_P(BothForms, DiscretizeSegsumBadInput, ::testing::ValuesIn(kDiscretizeSegsumForms),
                         form_name<DiscretizeSegsumArgs>);

TEST_P(DiscretizeSegsumBadInput, BaseIsValid) { EXPECT_NO_THROW((void)GetParam().run(base())); }

TEST_P(DiscretizeSegsumBadInput, WrongShapes) {
  const Tensor hidden4 = f({1, 1, 2, 2});
  const Tensor dt_q = f({1, 1, 3, 2});
  const Tensor A_log3 = f({3});
  const Tensor B_q = f({1, 1, 3, 1, 1});
  const Tensor C_n = f({1, 1, 2, 1, 2});
  DiscretizeSegsumArgs a = base();
  a.hidden_states = &hidden4;
  expect(a, {"hidden_states"});
  a = base(); a.dt = &dt_q;
  expect(a, {"dt"});
  a = base(); a.A_log = &A_log3;
  expect(a, {"A_log"});
  a = base(); a.B = &B_q;
  expect(a, {"B"});
  a = base(); a.C = &C_n;
  expect(a, {"C", "B"});
}

TEST_P(DiscretizeSegsumBadInput, EmptyChunk) {
  // Q = 0 (the chunk axis of every input is empty).
  const Tensor h0 = f({1, 1, 0, 2, 1}), dt0 = f({1, 1, 0, 2}), B0 = f({1, 1, 0, 1, 1}), C0 = f({1, 1, 0, 1, 1});
  expect({.hidden_states = &h0, .dt = &dt0, .A_log = &A_log, .B = &B0, .C = &C0},
         {"hidden_states", "dt", "B", "C"});
}

}  // namespace
}  // namespace ssd_test
