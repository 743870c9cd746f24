// Prefix and packing invariance of Mamba2Fwd's packed batches (ssd/harness/packed_invariance.h):
// the cut batches against encodings worked by hand (docs/contract.md §2.1 defines each), the honest
// emulation keeping both relations, and the planted packing_dependent_sum (the sum over a chunk's
// tokens right to left when the batch packs more than two sequences) VARIANT under each.
#include <gtest/gtest.h>

#include "ssd/harness/case_checker.h"
#include "ssd/harness/packed_invariance.h"
#include "runner_helpers.h"

namespace {

std::vector<std::int64_t> ints(const ssd::InputSet& in, const char* name) {
  std::vector<std::int64_t> v;
  for (double e : in.at(name).values()) v.push_back(static_cast<std::int64_t>(e));
  return v;
}

using Ints = std::vector<std::int64_t>;

// Tokens [from, from + count) of a [1,S,...] input, for comparing a cut's slice with its source.
std::vector<double> tokens(const ssd::Tensor& t, std::int64_t from, std::int64_t count) {
  const std::int64_t per_token = t.numel() / t.shape()[1];
  return {t.values().begin() + from * per_token, t.values().begin() + (from + count) * per_token};
}

std::vector<double> row(const ssd::Tensor& t, std::int64_t r) {
  const std::int64_t per_row = t.numel() / t.shape()[0];
  return {t.values().begin() + r * per_row, t.values().begin() + (r + 1) * per_row};
}

// Four sequences with Q = 4: tokens 0-4 (seq 0), 5 (seq 1), 6-8 (seq 2), 9-11 (seq 3); the chunks
// of the packed row are [0,4) [4,8) [8,12).
std::string four_sequences(int seed) {
  return "mamba2:f32 b1 s12 h2 p2 g1 n2 q4 +softplus +init +varlen seq=0:5,1,3,3 seed=" + std::to_string(seed);
}

TEST(PackedInvariance, AloneStartsAtTheChunkBoundaryWithAFiller) {
  // seed 1: k = 1 + 1 mod 3 = 2. start_2 = 6, floor(6/4)*4 = 4, so the cut is tokens [4,9): a filler
  // of 6 - 4 = 2 tokens (token 4 of seq 0 and token 5, all of seq 1), then seq 2's 3 tokens.
  const ssd::Problem p = ssd::parse_problem(four_sequences(1));
  const ssd::InputSet in = ssd::make_inputs(p);
  const ssd::PackedCut cut = ssd::packed_alone(p, in);
  EXPECT_EQ(cut.sequence, 2);
  EXPECT_EQ(cut.first_token, 4);
  EXPECT_EQ(cut.filler, 2);
  EXPECT_EQ(cut.problem.s, 5);
  EXPECT_EQ(ints(cut.inputs, "seq_idx"), (Ints{0, 0, 1, 1, 1}));
  EXPECT_EQ(ints(cut.inputs, "cu_seqlens"), (Ints{0, 2, 5}));
  // Chunks [0,4) [4,5) of the cut: chunk 0 holds the filler and seq 2 from position 2; chunk 1 starts
  // its own logical chunk.
  EXPECT_EQ(ints(cut.inputs, "chunk_indices"), (Ints{0, 0, 1}));
  EXPECT_EQ(ints(cut.inputs, "chunk_offsets"), (Ints{0, 2, 0}));
  // Per sequence: the filler's 2 tokens one chunk, seq 2's 3 tokens one chunk (3 < Q).
  EXPECT_EQ(ints(cut.inputs, "cu_chunk_seqlens"), (Ints{0, 2, 5}));
  EXPECT_EQ(ints(cut.inputs, "chunk_seq_idx"), (Ints{0, 1}));
  EXPECT_EQ(ints(cut.inputs, "last_chunk_indices"), (Ints{0, 1}));
  // The filler has no initial state; seq 2 keeps its own row and flag.
  EXPECT_EQ(ints(cut.inputs, "has_initial_states"), (Ints{0, ints(in, "has_initial_states")[2]}));
  EXPECT_EQ(cut.inputs.at("initial_states").shape(), (ssd::Shape{2, 2, 2, 2}));
  EXPECT_EQ(row(cut.inputs.at("initial_states"), 0), std::vector<double>(8, 0.0));
  EXPECT_EQ(row(cut.inputs.at("initial_states"), 1), row(in.at("initial_states"), 2));
  for (const char* name : {"x", "dt", "B", "C"})
    EXPECT_EQ(cut.inputs.at(name).values(), tokens(in.at(name), 4, 5)) << name;
  EXPECT_EQ(cut.inputs.at("A").values(), in.at("A").values());
  EXPECT_EQ(cut.states, (std::vector<std::pair<std::int64_t, std::int64_t>>{{2, 1}}));
  EXPECT_EQ(ssd::to_string(cut.problem),
            "mamba2:f32 b1 s5 h2 p2 g1 n2 q4 +softplus +init +varlen seq=0:2,3 seed=1");
}

TEST(PackedInvariance, AloneOnAChunkBoundaryHasNoFiller) {
  // seq=0:4,4,4 with Q = 4, seed 2: k = 1 + 2 mod 2 = 1, start_1 = 4 = floor(4/4)*4: no filler, the
  // cut is tokens [4,8), seq 1 alone.
  const ssd::Problem p = ssd::parse_problem("mamba2:f32 b1 s12 h1 p2 g1 n2 q4 +init +varlen seq=0:4,4,4 seed=2");
  const ssd::PackedCut cut = ssd::packed_alone(p, ssd::make_inputs(p));
  EXPECT_EQ(cut.sequence, 1);
  EXPECT_EQ(cut.first_token, 4);
  EXPECT_EQ(cut.filler, 0);
  EXPECT_EQ(ints(cut.inputs, "seq_idx"), (Ints{0, 0, 0, 0}));
  EXPECT_EQ(ints(cut.inputs, "cu_seqlens"), (Ints{0, 4}));
  EXPECT_EQ(ints(cut.inputs, "chunk_indices"), (Ints{0}));
  EXPECT_EQ(ints(cut.inputs, "chunk_offsets"), (Ints{0}));
  EXPECT_EQ(ints(cut.inputs, "cu_chunk_seqlens"), (Ints{0, 4}));
  EXPECT_EQ(ints(cut.inputs, "last_chunk_indices"), (Ints{0}));
  EXPECT_EQ(cut.states, (std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 0}}));
}

TEST(PackedInvariance, PrefixKeepsTheFirstSequences) {
  // seed 2: k = 2 mod 3 = 2, the cut is tokens [0, end_2 = 9) with seqs 0, 1, 2 as they are.
  const ssd::Problem p = ssd::parse_problem(four_sequences(2));
  const ssd::InputSet in = ssd::make_inputs(p);
  const ssd::PackedCut cut = ssd::packed_prefix(p, in);
  EXPECT_EQ(cut.sequence, 2);
  EXPECT_EQ(cut.first_token, 0);
  EXPECT_EQ(cut.filler, 0);
  EXPECT_EQ(cut.problem.s, 9);
  EXPECT_EQ(ints(cut.inputs, "seq_idx"), (Ints{0, 0, 0, 0, 0, 1, 2, 2, 2}));
  EXPECT_EQ(ints(cut.inputs, "cu_seqlens"), (Ints{0, 5, 6, 9}));
  // Chunks [0,4) [4,8) [8,9): chunk 1 holds seq 0's last token, seq 1 from position 1 and seq 2
  // from position 2.
  EXPECT_EQ(ints(cut.inputs, "chunk_indices"), (Ints{0, 1, 1, 1, 2}));
  EXPECT_EQ(ints(cut.inputs, "chunk_offsets"), (Ints{0, 0, 1, 2, 0}));
  // Per sequence: seq 0's 5 tokens as 4 + 1, seq 1's 1, seq 2's 3.
  EXPECT_EQ(ints(cut.inputs, "cu_chunk_seqlens"), (Ints{0, 4, 5, 6, 9}));
  EXPECT_EQ(ints(cut.inputs, "chunk_seq_idx"), (Ints{0, 0, 1, 2}));
  EXPECT_EQ(ints(cut.inputs, "last_chunk_indices"), (Ints{1, 2, 3}));
  const Ints flags = ints(in, "has_initial_states");
  EXPECT_EQ(ints(cut.inputs, "has_initial_states"), (Ints{flags[0], flags[1], flags[2]}));
  for (int j = 0; j < 3; ++j) EXPECT_EQ(row(cut.inputs.at("initial_states"), j), row(in.at("initial_states"), j));
  EXPECT_EQ(cut.inputs.at("x").values(), tokens(in.at("x"), 0, 9));
  EXPECT_EQ(cut.states, (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 0}, {1, 1}, {2, 2}}));
}

TEST(PackedInvariance, WhereItApplies) {
  EXPECT_TRUE(ssd::packed_invariance_applies(ssd::parse_problem(four_sequences(1))));
  for (const char* text : {"mamba2:f32 b1 s20 h2 p4 g2 n4 q8 +init +varlen seq=0:20 seed=1",  // one sequence
                           "mamba2:f32 b1 s24 h2 p4 g2 n4 q8 +init +varlen seq=0:20,-4 seed=1",  // and padding
                           "mamba2:f32 b1 s20 h2 p4 g2 n4 q8 seq=0:10,10 seed=1",             // not packed
                           "recurrent:f32 b3 h1 p1 g1 n1 +varlen tokens=2 seed=1"})
    EXPECT_FALSE(ssd::packed_invariance_applies(ssd::parse_problem(text))) << text;
}

using ssd_test::check_in_process;

// Three sequences, seed 12: prefix k = 12 mod 2 = 0 (one sequence kept: the mutant sums left to
// right there, right to left in the whole call).
constexpr const char* kThree = "mamba2:f32 b1 s40 h2 p4 g1 n4 q8 +softplus +init +varlen seq=0:5,20,15 seed=12";
// Four sequences, seed 2: prefix k = 2 keeps three (the mutant sums right to left in both calls);
// alone k = 1 + 2 mod 3 = 3 at token 28: a filler of 28 - 24 = 4 tokens, two sequences.
constexpr const char* kFour = "mamba2:f32 b1 s40 h2 p4 g1 n4 q8 +softplus +init +varlen seq=0:10,6,12,12 seed=2";

TEST(PackedInvariance, PrefixCatchesASequenceThatDependsOnLaterOnes) {
  const ssd::CaseJudgement j = check_in_process("mutant-packing_dependent_sum", kThree);
  EXPECT_EQ(j.verdict, ssd::Verdict::variant) << ssd::describe(j);
  EXPECT_NE(j.message.find("prefix invariance: the packed batch cut after sequence 0 (its first 1 of 3 sequences, "
                           "5 of 40 tokens) differs from the whole call"),
            std::string::npos)
      << j.message;
  EXPECT_LT(j.max_r(), 1.0);  // inside every bound: the values alone pass
  EXPECT_EQ(check_in_process("mutant-packing_dependent_sum", kThree, false).verdict, ssd::Verdict::passed);
}

TEST(PackedInvariance, PackingCatchesASequenceThatDependsOnItsNeighbours) {
  const ssd::CaseJudgement j = check_in_process("mutant-packing_dependent_sum", kFour);
  EXPECT_EQ(j.verdict, ssd::Verdict::variant) << ssd::describe(j);
  EXPECT_NE(j.message.find("packing invariance: sequence 3 alone at its place in its chunk (tokens 24..39, the first 4 "
                           "one filler sequence) differs from sequence 3 in its batch"),
            std::string::npos)
      << j.message;
  EXPECT_LT(j.max_r(), 1.0);
  EXPECT_EQ(check_in_process("mutant-packing_dependent_sum", kFour, false).verdict, ssd::Verdict::passed);
}

TEST(PackedInvariance, HonestEmulationKeepsBoth) {
  for (const std::string& problem :
       {std::string(kThree), std::string(kFour), four_sequences(1), four_sequences(2),
        // Found by a campaign with +0 and -0 told apart: sequence 1's out at token 1, p = 2, is an exact
        // 0 (its oracle value and bound are 0), -0 in the batch (the masked carried term 0 * (C . M)
        // takes the sign of sequence 0's state M) and +0 alone: one value, as the contract says.
        std::string("mamba2:bf16 b1 s2 h1 p3 g1 n1 q1 +varlen seq=0:1,1 seed=0"),
        std::string("mamba2:bf16 b1 s37 h4 p8 g2 n8 q16 +softplus +D +z +init +varlen seq=0:7,9,1,20 seed=5"),
        std::string("mamba2:f16 b1 s50 h2 p4 g1 n8 q7 +dt_bias +softplus +Dhp +init +varlen state=bf16 "
                    "seq=0:3,11,30,-6 seed=4")})
    for (const char* library : {"emulation", "emulation-blocked"}) {
      const ssd::CaseJudgement j = check_in_process(library, problem);
      EXPECT_EQ(j.verdict, ssd::Verdict::passed) << library << ": " << ssd::describe(j);
    }
}

}  // namespace
