// Packing and prefix invariance of the decode step (ssd/harness/invariance.h): the planted
// shape_dependent_sum (out's sum over n right to left for more than one row or token) is inside
// every bound, so only the relations catch it, each under its own name; the honest emulation keeps
// both; and --invariance off (CheckOptions::invariance) judges values only. Split prefill: a
// kernel that ignores initial_states passes every case without +init, and fails the second half
// of the same case prefilled in two calls.
#include <gtest/gtest.h>

#include "ssd/harness/case_checker.h"
#include "ssd/harness/invariance.h"
#include "runner_helpers.h"

namespace {

using ssd_test::check_in_process;

// Two rows, one token: the row alone sums left to right, in the batch right to left.
constexpr const char* kTwoRows = "recurrent:f32 b2 h2 p4 g1 n8 +softplus seed=3";
// One row, two tokens: cut to its first token (k = 1 + 3 mod 1 = 1) the call sums left to right.
constexpr const char* kTwoTokens = "recurrent:f32 b1 h2 p4 g1 n8 +softplus tokens=2 seed=3";
// A varlen call of three rows of 1, 0 and 1 tokens: row 0 (3 mod 3) alone is one row of one token,
// which sums left to right; in the batch (three rows) the flaw sums right to left.
constexpr const char* kVarlenRows = "recurrent:f32 b3 h2 p4 g1 n8 +softplus +varlen tokens=1 rows=1,0,1 seed=3";

TEST(Invariance, PackingCatchesARowThatDependsOnItsBatch) {
  const ssd::CaseJudgement j = check_in_process("mutant-shape_dependent_sum", kTwoRows);
  EXPECT_EQ(j.verdict, ssd::Verdict::variant) << ssd::describe(j);
  EXPECT_NE(j.message.find("packing invariance: row 1 called alone"), std::string::npos) << j.message;
  EXPECT_LT(j.max_r(), 1.0);  // inside every bound: the values alone would pass
  EXPECT_TRUE(ssd::is_failure(j.verdict));
}

TEST(Invariance, PackingCatchesAVarlenRowThatDependsOnItsBatch) {
  const ssd::CaseJudgement j = check_in_process("mutant-shape_dependent_sum", kVarlenRows);
  EXPECT_EQ(j.verdict, ssd::Verdict::variant) << ssd::describe(j);
  EXPECT_NE(j.message.find("packing invariance: row 0 called alone"), std::string::npos) << j.message;
  EXPECT_LT(j.max_r(), 1.0);
}

TEST(Invariance, AVarlenRowAloneIsItsStretchOfThePackedTokens) {
  // rows=2,0,3 with tokens=3: row 1 is empty, so from 4 mod 3 = 1 on the first usable row is 2,
  // whose 3 tokens are packed tokens 2, 3 and 4 of the 5.
  const ssd::Problem p = ssd::parse_problem("recurrent:f32 b3 h1 p2 g1 n2 +varlen tokens=3 rows=2,0,3 seed=4");
  const ssd::InputSet in = ssd::make_inputs(p);
  const std::optional<ssd::RowAlone> alone = ssd::row_alone(p, in);
  ASSERT_TRUE(alone.has_value());
  EXPECT_EQ(alone->row, 2);
  EXPECT_EQ(ssd::to_string(alone->problem), "recurrent:f32 b1 h1 p2 g1 n2 +varlen tokens=3 rows=3 seed=4");
  EXPECT_EQ(alone->inputs.at("x").shape(), (ssd::Shape{3, 1, 2}));
  for (std::int64_t i = 0; i < 6; ++i) EXPECT_EQ(alone->inputs.at("x")[i], in.at("x")[2 * 2 + i]) << i;
  EXPECT_EQ(alone->inputs.at("cu_seqlens").values(), (std::vector<double>{0, 3}));
  EXPECT_EQ(alone->inputs.at("state").shape(), (ssd::Shape{1, 1, 2, 2}));  // row 2's own slot
  EXPECT_EQ(alone->inputs.at("state")[0], in.at("state")[2 * 4]);
}

TEST(Invariance, PrefixCatchesATokenThatDependsOnLaterTokens) {
  const ssd::CaseJudgement j = check_in_process("mutant-shape_dependent_sum", kTwoTokens);
  EXPECT_EQ(j.verdict, ssd::Verdict::variant) << ssd::describe(j);
  EXPECT_NE(j.message.find("prefix invariance: the call cut to its first 1 of 2 tokens"), std::string::npos)
      << j.message;
}

TEST(Invariance, PrefixCatchesAVarlenTokenThatDependsOnLaterTokens) {
  // One varlen row of 2 tokens (k = 1 + 3 mod 1 = 1): cut to one token the flaw sums left to right.
  const ssd::CaseJudgement j =
      check_in_process("mutant-shape_dependent_sum", "recurrent:f32 b1 h2 p4 g1 n8 +softplus +varlen tokens=2 rows=2 seed=3");
  EXPECT_EQ(j.verdict, ssd::Verdict::variant) << ssd::describe(j);
  EXPECT_NE(j.message.find("prefix invariance: the call cut to its first 1 of 2 tokens"), std::string::npos) << j.message;
}

TEST(Invariance, AVarlenPrefixKeepsEachRowsFirstTokens) {
  // rows=3,0,2 with tokens=3 and k = 1 + 5 mod 2 = 2: rows keep 2, 0 and 2 tokens, packed tokens
  // 0, 1 (row 0) and 3, 4 (row 2, which starts at 3) of the 5; cu_seqlens 0, 2, 2, 4.
  const ssd::Problem p = ssd::parse_problem("recurrent:f32 b3 h1 p2 g1 n2 +varlen tokens=3 rows=3,0,2 seed=5");
  const ssd::InputSet in = ssd::make_inputs(p);
  const ssd::TokenPrefix cut = ssd::token_prefix(p, in);
  EXPECT_EQ(cut.tokens, 2);
  EXPECT_EQ(ssd::to_string(cut.problem), "recurrent:f32 b3 h1 p2 g1 n2 +varlen tokens=2 rows=2,0,2 seed=5");
  EXPECT_EQ(cut.inputs.at("cu_seqlens").values(), (std::vector<double>{0, 2, 2, 4}));
  const ssd::Tensor& x = cut.inputs.at("x");
  EXPECT_EQ(x.shape(), (ssd::Shape{4, 1, 2}));
  for (std::int64_t i = 0; i < 4; ++i) EXPECT_EQ(x[i], in.at("x")[i]) << i;          // tokens 0, 1
  for (std::int64_t i = 0; i < 4; ++i) EXPECT_EQ(x[4 + i], in.at("x")[6 + i]) << i;  // tokens 3, 4
}

TEST(Invariance, HonestEmulationKeepsBoth) {
  for (const char* problem : {kTwoRows, kTwoTokens, kVarlenRows,
                              "recurrent:bf16 b4 h2 p4 g2 n8 +softplus +Dhp +sbi +dst +spec +inter slots=25 tokens=3 "
                              "pad=0 seed=9",
                              "recurrent:f16 b5 h2 p4 g1 n8 +dt_bias +softplus +z +sbi +dst +inter +varlen slots=11 "
                              "tokens=3 pad=10 seed=6",
                              "recurrent:f32 b4 h2 p4 g2 n8 +softplus +Dhp +varlen tokens=4 seed=21"})
    for (const char* library : {"emulation", "emulation-blocked"}) {
      const ssd::CaseJudgement j = check_in_process(library, problem);
      EXPECT_EQ(j.verdict, ssd::Verdict::passed) << library << ": " << ssd::describe(j);
    }
}

TEST(Invariance, OffJudgesValuesOnly) {
  EXPECT_EQ(check_in_process("mutant-shape_dependent_sum", kTwoRows, false).verdict, ssd::Verdict::passed);
  EXPECT_EQ(check_in_process("mutant-shape_dependent_sum", kTwoTokens, false).verdict, ssd::Verdict::passed);
}

TEST(Invariance, WhereTheRelationsApply) {
  EXPECT_TRUE(ssd::invariance_applies(ssd::parse_problem(kTwoRows)));
  EXPECT_FALSE(ssd::invariance_applies(ssd::parse_problem(kTwoTokens)));  // one row
  EXPECT_TRUE(ssd::prefix_invariance_applies(ssd::parse_problem(kTwoTokens)));
  EXPECT_FALSE(ssd::prefix_invariance_applies(ssd::parse_problem(kTwoRows)));  // one token
  // A varlen call's rows are stretches of the packed tokens, cut row by row; accepted counts may
  // point past a cut row.
  EXPECT_TRUE(ssd::invariance_applies(ssd::parse_problem("recurrent:f32 b3 h1 p1 g1 n1 +varlen tokens=2 seed=1")));
  EXPECT_TRUE(ssd::prefix_invariance_applies(ssd::parse_problem("recurrent:f32 b3 h1 p1 g1 n1 +varlen tokens=2 seed=1")));
  EXPECT_FALSE(ssd::prefix_invariance_applies(
      ssd::parse_problem("recurrent:f32 b1 h1 p1 g1 n1 +sbi +spec +accepted slots=2 tokens=2 seed=1")));
}

// Five chunks of 8 tokens; k = 8 (1 + 3 mod 4) = 32: the first call 32 tokens, the second 8.
constexpr const char* kFiveChunks = "mamba2:f32 b1 s40 h2 p4 g1 n4 q8 +softplus seed=3";

TEST(SplitPrefill, CatchesIgnoredInitialStatesOnACaseWithout) {
  const ssd::CaseJudgement j = check_in_process("mutant-initial_states_ignored", kFiveChunks);
  EXPECT_EQ(j.verdict, ssd::Verdict::variant) << ssd::describe(j);
  EXPECT_NE(j.message.find("split prefill: the first 32 tokens, then the other 8 from their final states, are FAILED"),
            std::string::npos) << j.message;
  EXPECT_LT(j.max_r(), 1.0);  // the whole call has no initial state to ignore: its values pass
  EXPECT_EQ(check_in_process("mutant-initial_states_ignored", kFiveChunks, false).verdict, ssd::Verdict::passed);
}

TEST(SplitPrefill, HonestEmulationKeepsIt) {
  for (const char* problem : {kFiveChunks, "mamba2:bf16 b2 s37 h4 p8 g2 n8 q16 +softplus +D +z +init seed=2",
                              "mamba2:f16 b1 s50 h2 p4 g1 n8 q7 +dt_bias +softplus +Dhp state=f32 seed=4"})
    for (const char* library : {"emulation", "emulation-blocked"}) {
      const ssd::CaseJudgement j = check_in_process(library, problem);
      EXPECT_EQ(j.verdict, ssd::Verdict::passed) << library << ": " << ssd::describe(j);
    }
}

TEST(SplitPrefill, TheTwoCallsAndWhereItApplies) {
  const ssd::Problem p = ssd::parse_problem(kFiveChunks);
  const ssd::PrefillSplit split = ssd::split_prefill(p, ssd::make_inputs(p));
  EXPECT_EQ(split.tokens, 32);
  EXPECT_EQ(split.first.s, 32);
  EXPECT_EQ(split.rest.s, 8);
  EXPECT_FALSE(split.first.init);
  EXPECT_TRUE(split.rest.init);
  EXPECT_EQ(split.first_inputs.at("x").shape(), (ssd::Shape{1, 32, 2, 4}));
  EXPECT_TRUE(ssd::split_prefill_applies(p));
  for (const char* text : {"mamba2:f32 b1 s8 h2 p4 g1 n4 q8 seed=1",                    // one chunk
                           "mamba2:f32 b1 s40 h2 p4 g1 n4 q8 seq=rand seed=1",           // seq_idx
                           "mamba2:f32 b1 s40 h2 p4 g1 n4 q8 +varlen seq=0:20,20 seed=1",  // packed batch
                           "mamba2:f32 b1 s40 h2 p4 g1 n4 q8 state=bf16 seed=1",         // 16-bit final states
                           "mamba2:f32 b1 s40 h2 p4 g1 n4 q8 fill=dt_overflow seed=1"})  // overflow regime
    EXPECT_FALSE(ssd::split_prefill_applies(ssd::parse_problem(text))) << text;
}

}  // namespace
