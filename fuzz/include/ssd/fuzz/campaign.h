// A fuzz campaign: generated problems (deterministic per seed and case index, so shards are
// disjoint) or a list of given problems (replay), each checked against the oracle through a kernel
// library; every op runs until its own failures stop it; every failure shrunk to a minimal problem,
// printed as a repro line and dumped as a results case file.
#pragma once
#include <array>
#include <atomic>
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
  std::vector<Problem> problems;  // replay: exactly these cases, in order (no generation)
  std::vector<Op> ops;            // empty = every op the library implements
  std::vector<DType> dtypes;      // primary dtypes (empty = all)
  std::optional<double> seconds;  // stop after this long ...
  std::optional<std::int64_t> cases;  // ... or after this many cases (of this shard)
  std::uint64_t seed = 0;
  std::int64_t shard = 0, shards = 1;  // case k belongs to shard k % shards
  int max_failures = 1;           // an op stops after this many failures; the others go on
  double large_fraction = 0.05;   // share of cases drawn with large shapes
  // Share of cases past 2^31 elements in one tensor (mamba2, chunk_state, chunk_scan: x; coupling:
  // CB) - the 32-bit offset bug of mamba_ssm #1015. GPU hosts only: the float64 oracle of such a
  // case needs tens of GB of memory and minutes of CPU.
  double huge_fraction = 0;
  // Share of generated cases drawn with +far (strided views whose batch stride passes 2^31
  // elements, mamba_ssm #1015's trigger at small sizes): each laid-out input then spans a buffer of
  // 2^31 elements and more (4 to 8 GiB, of which only the views' spans are touched on a host).
  double far_fraction = 0;
  // Share of generated cases drawn with +farslots (recurrent: state slots at ids whose element
  // offset passes 2^32, vLLM #35275): the state buffer then spans 2^32 elements and more (16 GiB
  // at f32, 8 GiB at 16 bits, of which a few MiB are touched on a host; a CUDA table allocates it).
  double far_slots_fraction = 0;
  // How the library's kernels take f32 operands into dot products: every generated case of an op
  // with dot products carries it (dots=tf32), so its bounds charge the declared rounding.
  DotPrecision f32_dots = DotPrecision::ieee;
  std::filesystem::path dump_dir; // failing cases written here (empty = no dumps)
  double shrink_seconds = 30;     // time allowed to minimize one failure
  CheckOptions check;             // where kernel calls run (a worker process by default) and their time limit
  // Set to a signal's number (by ssd-fuzz's SIGTERM and SIGINT handler) to end the campaign as if
  // its time were up: the case under way finishes, shrinking stops calling the kernel.
  const std::atomic<int>* stop_signal = nullptr;
};

// The max r of each case in decades: [0,1e-4) [1e-4,1e-3) [1e-3,1e-2) [1e-2,0.1) [0.1,1) [1,10)
// [10,inf) and inf (an output not finite where the oracle is, or an exact value missed).
inline constexpr int kRDecades = 8;
int r_decade(double r);
std::string r_decade_label(int decade);

struct OpTally {
  std::int64_t cases = 0, passed = 0, failed = 0, mistrusted = 0, skipped = 0, invalid = 0;
  std::int64_t suspect = 0;  // SUSPECT: within every bound, error norm far above honest rounding
  std::int64_t crashed = 0, timeout = 0;  // of the FAILED cases, those whose call never returned
  std::int64_t variant = 0;  // of the FAILED cases, those within every bound but not packing-invariant
  std::int64_t not_finite = 0;  // cases with a NaN or Inf output where the oracle is finite
  double max_r = 0, seconds = 0;
  double max_ratio = 0;  // largest statistical ratio ||y - y*|| / scale of any output (SUSPECT above the threshold)
  std::array<std::int64_t, kRDecades> r_decades{};  // judged cases (PASSED, FAILED, MISTRUSTED)
  void record(const CaseJudgement& j, double seconds);
};

// A FAILED (CRASHED, TIMEOUT) case shrunk to a minimal problem, or a SUSPECT case as drawn: the
// statistic needs many elements, so a shrunk case would no longer show it.
struct Failure {
  Problem original, minimal;
  CaseJudgement judgement;      // of the minimal problem
  std::filesystem::path dump;   // empty when not dumped
};

struct CampaignResult {
  std::vector<Op> ops;            // the ops run (requested and implemented)
  std::vector<Op> unimplemented;  // requested ops the library does not implement
  std::map<Op, OpTally> tallies;
  std::map<std::pair<Op, DType>, OpTally> by_dtype;  // the same, per op and primary dtype
  std::vector<Failure> failures;
  double seconds = 0;
  int stopped_by = 0;  // the signal that ended the campaign before its time, 0 when none did
  // Replay: this shard's share of the given problems, and how many of them ran (fewer where
  // `seconds`, `cases` or a signal ended the replay first).
  std::int64_t given = 0, given_run = 0;
};

// How a campaign ended, as ssd-fuzz reports it: exit status 0 (every op ran cases, none failed),
// 1 (a failure or a SUSPECT case), 3 (nothing was tested: no op selected, or every case SKIPPED), and one line saying so.
struct CampaignSummary {
  int exit_status = 0;
  std::string line;
};
// "... (stopped by SIGTERM)" when a signal ended it, "... (58 of 71 given problems run ...)" when a
// replay ended before its last problem.
CampaignSummary summarize(const CampaignResult& result);
std::string signal_name(int signal);  // "SIGTERM", "SIGINT", "signal 10"

// Progress callback: called after every case with the running totals.
using Progress = std::function<void(const CampaignResult&, double elapsed)>;

CampaignResult run_campaign(const KernelLibrary& library, const CampaignOptions& options, const Progress& progress = {});

// The problem of case k of a campaign with this seed (what a shard draws; shrinking starts here).
Problem campaign_problem(Op op, const CampaignOptions& options, std::int64_t k);
// A case past 2^31 elements for ops that have one (nullopt otherwise); not shrunk.
std::optional<Problem> huge_problem(Op op, std::uint64_t seed);

// Greedy shrinking of a failing case: RapidCheck's shrink tree of the generated value, then the
// problem's tokens (ssd/fuzz/shrink.h); the smallest problem that still fails (FAILED, CRASHED or
// TIMEOUT) on this library.
Problem shrink_failure(const KernelLibrary& library, Op op, const CampaignOptions& options, std::int64_t k);
Problem shrink_failure(CaseChecker& checker, Op op, const CampaignOptions& options, std::int64_t k);

}  // namespace ssd
