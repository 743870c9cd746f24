// Campaigns as a whole: every op is fuzzed until its own failure stops it, exit statuses say what
// was tested, replayed problems give the same verdicts, token shrinking keeps problems valid, and
// non-finite outputs show as r = inf.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "ssd/fuzz/campaign.h"
#include "ssd/fuzz/report.h"
#include "ssd/fuzz/shrink.h"
#include "ssd/reference/decode_plan.h"
#include "ssd/reference/truth.h"

namespace {

using ssd::Op;

ssd::CampaignOptions cases(std::int64_t n, std::uint64_t seed) {
  ssd::CampaignOptions o;
  o.cases = n;
  o.seed = seed;
  o.shrink_seconds = 2;
  return o;
}

// mutant-seq_boundary_late breaks every op that reads seq_idx. An early failure of one op must not
// end the campaign: chunk_state, which fails when fuzzed alone, must fail here too.
TEST(Campaign, EachOpStopsOnlyAtItsOwnFailure) {
  const auto library = ssd::KernelLibrary::open("mutant-seq_boundary_late");
  const ssd::CampaignResult r = ssd::run_campaign(library, cases(4000, 1));
  std::set<Op> failed;
  for (const auto& f : r.failures) failed.insert(f.minimal.op);
  for (Op op : {Op::mamba2, Op::chunk_coupling, Op::chunk_state, Op::state_passing, Op::chunk_scan})
    EXPECT_TRUE(failed.count(op)) << ssd::op_name(op) << " was not caught";
  // Ops without seq_idx ran on after the others stopped.
  EXPECT_GT(r.tallies.at(Op::recurrent).cases, 100);
  EXPECT_EQ(ssd::summarize(r).exit_status, 1);
}

TEST(Campaign, HonestLibraryExitsZeroAndEveryOpRanCases) {
  const ssd::CampaignResult r = ssd::run_campaign(ssd::KernelLibrary::open("emulation"), cases(160, 5));
  EXPECT_EQ(ssd::summarize(r).exit_status, 0) << ssd::summarize(r).line;
  for (Op op : ssd::kAllOps) EXPECT_GE(r.tallies.at(op).cases, 20) << ssd::op_name(op);
}

// A table with one op only: asking for another op tests nothing (exit 3), never "no failures".
TEST(Campaign, NothingTestedExitsThree) {
  const auto full = ssd::KernelLibrary::open("emulation");
  static ssd_kernel_table only_cumsum{};
  only_cumsum = full.table();
  only_cumsum.mamba2 = nullptr, only_cumsum.chunk_coupling = nullptr, only_cumsum.chunk_state = nullptr;
  only_cumsum.state_passing = nullptr, only_cumsum.chunk_scan = nullptr, only_cumsum.recurrent = nullptr;
  only_cumsum.discretize_segsum = nullptr;
  const auto library = ssd::KernelLibrary::from_table(&only_cumsum, "cumsum-only");
  ssd::CampaignOptions o = cases(20, 1);
  o.check.isolation = ssd::Isolation::none;  // a table in memory has no file for a worker to open
  o.ops = {Op::recurrent};
  const ssd::CampaignResult r = ssd::run_campaign(library, o);
  EXPECT_EQ(ssd::summarize(r).exit_status, 3);
  EXPECT_NE(ssd::summarize(r).line.find("NOTHING TESTED"), std::string::npos);
  o.ops = {Op::recurrent, Op::chunk_cumsum};
  EXPECT_EQ(ssd::summarize(ssd::run_campaign(library, o)).exit_status, 0);  // chunk_cumsum ran; recurrent is listed apart
}

// Cases run with the next one's call queued in the worker: a campaign counts exactly what it
// counts with the kernel in process.
TEST(Campaign, IsolatedTalliesEqualInProcessTallies) {
  const auto library = ssd::KernelLibrary::open("emulation");
  ssd::CampaignOptions o = cases(240, 3);
  const ssd::CampaignResult isolated = ssd::run_campaign(library, o);
  o.check.isolation = ssd::Isolation::none;
  const ssd::CampaignResult in_process = ssd::run_campaign(library, o);
  for (Op op : ssd::kAllOps) {
    const ssd::OpTally &a = isolated.tallies.at(op), &b = in_process.tallies.at(op);
    EXPECT_EQ(a.cases, b.cases) << ssd::op_name(op);
    EXPECT_EQ(a.passed, b.passed) << ssd::op_name(op);
    EXPECT_EQ(a.invalid, b.invalid) << ssd::op_name(op);
    EXPECT_EQ(a.max_r, b.max_r) << ssd::op_name(op);
    EXPECT_EQ(a.r_decades, b.r_decades) << ssd::op_name(op);
  }
}

// The planted segv crashes every chunk_cumsum call and nothing else. Ops alternate, so each crash
// happens with a chunk_state case queued behind it: every crash is chunk_cumsum's, and every
// chunk_state case passes.
TEST(Campaign, CrashesAreChargedToTheCaseThatCrashed) {
  const auto library = ssd::KernelLibrary::open(std::string(SSD_PLANTED_DIR) + "/libssd-planted-segv.so");
  ssd::CampaignOptions o = cases(30, 2);
  o.ops = {Op::chunk_cumsum, Op::chunk_state};
  o.max_failures = 1000;
  o.shrink_seconds = 0;
  const ssd::CampaignResult r = ssd::run_campaign(library, o);
  const ssd::OpTally &cumsum = r.tallies.at(Op::chunk_cumsum), &state = r.tallies.at(Op::chunk_state);
  EXPECT_EQ(cumsum.cases, 15);
  EXPECT_EQ(cumsum.crashed, cumsum.cases - cumsum.invalid);
  EXPECT_EQ(state.cases, 15);
  EXPECT_EQ(state.crashed, 0);
  EXPECT_EQ(state.failed, 0);
  EXPECT_GT(state.passed, 0);
  for (const auto& f : r.failures) EXPECT_EQ(f.original.op, Op::chunk_cumsum) << ssd::to_string(f.original);
}

TEST(Campaign, ReplayRunsExactlyTheGivenProblems) {
  ssd::CampaignOptions o;
  o.problems = {ssd::parse_problem("chunk_state:bf16 b1 s2 h1 p1 g1 n1 q1 seq=0:1,-1 seed=0"),
                ssd::parse_problem("recurrent:f32 b2 h2 p4 g1 n4 seed=1")};
  o.shrink_seconds = 0;
  const ssd::CampaignResult r = ssd::run_campaign(ssd::KernelLibrary::open("mutant-seq_boundary_late"), o);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(ssd::to_string(r.failures[0].minimal), ssd::to_string(o.problems[0]));
  EXPECT_EQ(r.tallies.at(Op::recurrent).passed, 1);
  const ssd::ReportContext context{"mutant-seq_boundary_late", "mutant-seq_boundary_late", 0, "0/1",
                                   "ssd-fuzz --kernels mutant-seq_boundary_late"};
  EXPECT_EQ(ssd::repro_command(context, r.failures[0].judgement.problem),
            "ssd-fuzz --kernels mutant-seq_boundary_late --problem 'chunk_state:bf16 b1 s2 h1 p1 g1 n1 q1 seq=0:1,-1 seed=0'");
  const auto report = nlohmann::json::parse(ssd::json_report(r, context));
  EXPECT_EQ(report["exit_status"], 1);
  EXPECT_EQ(report["failures"][0]["problem"], r.failures[0].judgement.problem);
}

// A replay cut short by its case limit says how many of the given problems ran (2 of 3 here);
// one that ran them all says nothing more.
TEST(Campaign, ReplayCutShortSaysHowManyRan) {
  ssd::CampaignOptions o;
  o.problems = {ssd::parse_problem("recurrent:f32 b2 h2 p4 g1 n4 seed=1"),
                ssd::parse_problem("recurrent:f32 b1 h2 p4 g1 n4 seed=2"),
                ssd::parse_problem("recurrent:f32 b3 h1 p4 g1 n4 seed=3")};
  o.cases = 2;
  const auto library = ssd::KernelLibrary::open("emulation");
  const ssd::CampaignResult cut = ssd::run_campaign(library, o);
  EXPECT_EQ(cut.given, 3);
  EXPECT_EQ(cut.given_run, 2);
  EXPECT_NE(ssd::summarize(cut).line.find("(2 of 3 given problems run"), std::string::npos) << ssd::summarize(cut).line;
  o.cases.reset();
  const ssd::CampaignResult all = ssd::run_campaign(library, o);
  EXPECT_EQ(all.given_run, 3);
  EXPECT_EQ(ssd::summarize(all).line.find("given problems run"), std::string::npos) << ssd::summarize(all).line;
  o.shard = 1, o.shards = 2;  // shard 1 of 2 holds the second problem only
  EXPECT_EQ(ssd::run_campaign(library, o).given, 1);
}

TEST(Shrink, CandidatesAreValidAndDropTokens) {
  const ssd::Problem p = ssd::parse_problem("mamba2:bf16 b2 s37 h4 p8 g2 n8 q16 +dt_bias +softplus +D +z +init seq=rand B=f32 seed=3");
  const auto candidates = ssd::shrink_candidates(p);
  ASSERT_FALSE(candidates.empty());
  bool explicit_runs = false, dropped_override = false, dropped_z = false;
  for (const auto& c : candidates) {
    EXPECT_FALSE(ssd::invalid_reason(c)) << ssd::to_string(c);
    EXPECT_NE(c, p);
    explicit_runs = explicit_runs || c.seq.kind == ssd::SeqSpec::Kind::runs;
    dropped_override = dropped_override || c.dtypes.empty();
    dropped_z = dropped_z || !c.z;
  }
  EXPECT_TRUE(explicit_runs && dropped_override && dropped_z);
}

// seq=rand written as runs keeps row 0's seq_idx exactly.
TEST(Shrink, RandomSeqBecomesTheRunsOfItsFirstRow) {
  const ssd::Problem p = ssd::parse_problem("chunk_state:f32 b1 s40 h2 p2 g1 n2 q8 seq=rand seed=11");
  for (const auto& c : ssd::shrink_candidates(p)) {
    if (c.seq.kind != ssd::SeqSpec::Kind::runs) continue;
    EXPECT_EQ(ssd::make_inputs(c).at("seq_idx").values(), ssd::make_inputs(p).at("seq_idx").values()) << ssd::to_string(c);
    return;
  }
  FAIL() << "no explicit-runs candidate";
}

// A varlen decode call's drawn row lengths written as rows= keep its cu_seqlens exactly; fewer rows
// keep the first rows' lengths, fewer tokens cap them.
TEST(Shrink, DrawnRowLengthsBecomeRowsAndShrinkWithTheSizes) {
  const ssd::Problem p = ssd::parse_problem("recurrent:f32 b6 h2 p2 g1 n2 +softplus +varlen tokens=4 seed=5");
  const std::vector<std::int64_t> drawn = ssd::decode_row_lengths(p);
  bool written = false;
  for (const auto& c : ssd::shrink_candidates(p)) {
    if (c.rows.empty() || c.b != p.b || c.tokens != p.tokens) continue;
    EXPECT_EQ(c.rows, drawn);
    EXPECT_EQ(ssd::make_inputs(c).at("cu_seqlens").values(), ssd::make_inputs(p).at("cu_seqlens").values());
    written = true;
  }
  EXPECT_TRUE(written) << "no rows= candidate";
  ssd::Problem q = p;
  q.rows = drawn;
  for (const auto& c : ssd::shrink_candidates(q)) {
    EXPECT_FALSE(ssd::invalid_reason(c)) << ssd::to_string(c);
    if (!c.varlen) {
      EXPECT_TRUE(c.rows.empty()) << ssd::to_string(c);
    }
    for (std::size_t i = 0; i < c.rows.size(); ++i)
      EXPECT_EQ(c.rows[i], std::min(drawn[i], c.tokens)) << ssd::to_string(c);
  }
}

// A shrink that keeps failing ends at a problem no candidate of which fails.
TEST(Shrink, GreedyShrinkReachesALocalMinimum) {
  const ssd::Problem p = ssd::parse_problem("mamba2:f32 b2 s37 h4 p8 g2 n8 q16 +softplus +z seed=3");
  auto big_h = [](const ssd::Problem& c) { return c.h >= 2; };  // "fails" while H >= 2
  const ssd::Problem m = ssd::shrink_problem(p, big_h, 30);
  EXPECT_EQ(m.h, 2);
  EXPECT_EQ(m.b, 1);
  EXPECT_FALSE(m.z || m.softplus);
  for (const auto& c : ssd::shrink_candidates(m)) EXPECT_FALSE(big_h(c)) << ssd::to_string(c);
}

// An output that is NaN where the oracle is finite: FAILED, counted as not finite, r = inf.
TEST(Judgement, NotFiniteOutputShowsInfiniteR) {
  const ssd::Problem p = ssd::parse_problem("chunk_cumsum:f32 b1 s8 h2 q4 +softplus seed=1");
  const ssd::InputSet in = ssd::make_inputs(p);
  const ssd::Truth truth = ssd::compute_truth(p, in);
  ssd::Outputs got;
  for (const auto& o : truth.oracle.all()) got.add(o.name, ssd::Tensor(ssd::DType::f32, o.value.shape(), o.value.values()));
  got.get("dt_out").value.data()[0] = std::nan("");
  const ssd::CaseJudgement j = ssd::judge_against_oracle(p, in, got);
  EXPECT_EQ(j.verdict, ssd::Verdict::failed);
  EXPECT_TRUE(std::isinf(j.max_r()));
  EXPECT_NE(ssd::describe(j).find("max r inf"), std::string::npos) << ssd::describe(j);
  ssd::OpTally t;
  t.record(j, 0.0);
  EXPECT_EQ(t.not_finite, 1);
  EXPECT_EQ(t.r_decades[ssd::kRDecades - 1], 1);
}

}  // namespace
