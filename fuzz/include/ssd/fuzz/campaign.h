// A fuzz campaign: generated problems (deterministic per seed and case index, so shards are
// disjoint), each checked against the oracle through a kernel library; every failure shrunk to a
// minimal problem, printed as a repro line and dumped as a results case file.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ssd/fuzz/generators.h"
#include "ssd/harness/case_checker.h"
#include "ssd/harness/runner.h"

namespace ssd {

struct CampaignOptions {
  std::vector<Op> ops;            // empty = every op the library implements
  std::vector<DType> dtypes;      // primary dtypes (empty = all)
  std::optional<double> seconds;  // stop after this long ...
  std::optional<std::int64_t> cases;  // ... or after this many cases (of this shard)
  std::uint64_t seed = 0;
  std::int64_t shard = 0, shards = 1;  // case k belongs to shard k % shards
  int max_failures = 0;           // stop the campaign after this many failures (0 = never)
  double large_fraction = 0.05;   // share of cases drawn with large shapes
  // Share of cases past 2^31 elements in one tensor (mamba2, chunk_state, chunk_scan: x; coupling:
  // CB) - the 32-bit offset bug of mamba_ssm #1015. GPU hosts only: the float64 oracle of such a
  // case needs tens of GB of memory and minutes of CPU.
  double huge_fraction = 0;
  std::filesystem::path dump_dir; // failing cases written here (empty = no dumps)
  double shrink_seconds = 30;     // time allowed to minimize one failure
  CheckOptions check;             // where kernel calls run (a worker process by default) and their time limit
};

struct OpTally {
  std::int64_t cases = 0, passed = 0, failed = 0, mistrusted = 0, skipped = 0, invalid = 0;
  double max_r = 0, seconds = 0;
};

struct Failure {
  Problem original, minimal;
  CaseJudgement judgement;      // of the minimal problem
  std::filesystem::path dump;   // empty when not dumped
};

struct CampaignResult {
  std::map<Op, OpTally> tallies;
  std::vector<Failure> failures;
  double seconds = 0;
};

// Progress callback: called after every case with the running totals.
using Progress = std::function<void(const CampaignResult&, double elapsed)>;

CampaignResult run_campaign(const KernelLibrary& library, const CampaignOptions& options, const Progress& progress = {});

// The problem of case k of a campaign with this seed (what a shard draws; shrinking starts here).
Problem campaign_problem(Op op, const CampaignOptions& options, std::int64_t k);
// A case past 2^31 elements for ops that have one (nullopt otherwise); not shrunk.
std::optional<Problem> huge_problem(Op op, std::uint64_t seed);

// Greedy shrinking of a failing case: the smallest problem (RapidCheck's shrink tree of the
// generated value) that still fails (FAILED, CRASHED or TIMEOUT) on this library.
Problem shrink_failure(const KernelLibrary& library, Op op, const CampaignOptions& options, std::int64_t k);
Problem shrink_failure(CaseChecker& checker, Op op, const CampaignOptions& options, std::int64_t k);

}  // namespace ssd
