// Fuzz campaigns: deterministic case generation, checking, shrinking and dumping.
#include "ssd/fuzz/campaign.h"

#include <chrono>
#include <cmath>
#include <csignal>

#include "ssd/fuzz/shrink.h"
#include "ssd/golden/case_file.h"
#include "ssd/reference/errors.h"

namespace ssd {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The signal that stopped the campaign, 0 while none has.
int stop_requested(const CampaignOptions& o) { return o.stop_signal ? o.stop_signal->load() : 0; }

std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

GenOptions options_for(const CampaignOptions& o, std::int64_t k) {
  // Mostly small shapes (many cases per second), with a tail of large ones.
  const double u = static_cast<double>(mix(o.seed ^ mix(static_cast<std::uint64_t>(k) + 17)) >> 11) * 0x1p-53;
  GenOptions g = campaign_gen_options(u < o.large_fraction);
  g.dtypes = o.dtypes;
  const double far = static_cast<double>(mix(o.seed ^ mix(static_cast<std::uint64_t>(k) + 53)) >> 11) * 0x1p-53;
  g.far = far < o.far_fraction;
  const double far_slots = static_cast<double>(mix(o.seed ^ mix(static_cast<std::uint64_t>(k) + 59)) >> 11) * 0x1p-53;
  g.far_slots = far_slots < o.far_slots_fraction;
  return g;
}

rc::Shrinkable<Problem> generate(Op op, const CampaignOptions& o, std::int64_t k) {
  const std::uint64_t base = mix(o.seed ^ mix(static_cast<std::uint64_t>(k)));
  const rc::Random::Key key{base, mix(base + 1), mix(base + 2), static_cast<std::uint64_t>(op)};
  return gen_problem(op, options_for(o, k))(rc::Random(key), rc::kNominalSize);
}

bool fails(CaseChecker& checker, const Problem& p) { return is_failure(checker.check(p).verdict); }

// Writes the failing case (inputs, oracle, bounds and the kernel's outputs) as a results file.
std::filesystem::path dump_case(CaseChecker& checker, const Problem& p, const std::filesystem::path& dir) {
  CaseFile c = make_golden_case(p);
  const KernelRun run = checker.run(p);
  if (run.status != KernelRun::Status::ok) return {};  // nothing to store but the repro line
  c.kind = CaseKind::results;
  c.outputs = run.outputs;
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = dir / case_file_name(p);
  write_case(path, c);
  return path;
}

bool is_huge_case(const CampaignOptions& o, std::int64_t k) {
  const double u = static_cast<double>(mix(o.seed ^ mix(static_cast<std::uint64_t>(k) + 91)) >> 11) * 0x1p-53;
  return u < o.huge_fraction;
}

}  // namespace

std::optional<Problem> huge_problem(Op op, std::uint64_t seed) {
  const std::string_view huge = op_spec(op).huge;
  if (huge.empty()) return std::nullopt;
  return parse_problem(std::string(huge) + " seed=" + std::to_string(seed));
}

namespace {

Problem with_declared_dots(Problem p, const CampaignOptions& options) {
  if (op_spec(p.op).takes_flag("dots")) p.dots = options.f32_dots;
  return p;
}

}  // namespace

Problem campaign_problem(Op op, const CampaignOptions& options, std::int64_t k) {
  if (is_huge_case(options, k))
    if (auto p = huge_problem(op, mix(options.seed ^ static_cast<std::uint64_t>(k)) & 0xFFFFFF))
      return with_declared_dots(*p, options);
  return with_declared_dots(generate(op, options, k).value(), options);
}

Problem shrink_failure(const KernelLibrary& library, Op op, const CampaignOptions& options, std::int64_t k) {
  CaseChecker checker(library, options.check);
  return shrink_failure(checker, op, options, k);
}

Problem shrink_failure(CaseChecker& checker, Op op, const CampaignOptions& options, std::int64_t k) {
  if (is_huge_case(options, k) && huge_problem(op, 0)) return campaign_problem(op, options, k);  // not from the generator
  const auto start = Clock::now();
  // Once the campaign is stopped no candidate is called: each counts as passing, so the shrink
  // ends at the smallest failing case found so far.
  auto fails_unless_stopped = [&](const Problem& p) { return !stop_requested(options) && fails(checker, p); };
  rc::Shrinkable<Problem> current = generate(op, options, k);
  bool progressed = true;
  while (progressed && since(start) < options.shrink_seconds) {
    progressed = false;
    auto shrinks = current.shrinks();
    while (auto candidate = shrinks.next()) {
      if (since(start) >= options.shrink_seconds) break;
      bool still_fails = false;
      try {
        still_fails = fails_unless_stopped(with_declared_dots(candidate->value(), options));
      } catch (const std::exception&) {
        still_fails = false;  // a shrink that cannot be built is not a smaller failure
      }
      if (still_fails) {
        current = *candidate;
        progressed = true;
        break;
      }
    }
  }
  // Then the tokens the generator's tree cannot drop (flags, overrides, seq=rand as runs).
  return shrink_problem(with_declared_dots(current.value(), options), fails_unless_stopped,
                        options.shrink_seconds - since(start));
}

int r_decade(double r) {
  if (!std::isfinite(r)) return kRDecades - 1;
  for (int d = 0; d < kRDecades - 2; ++d)
    if (r < std::pow(10.0, d - 4)) return d;
  return kRDecades - 2;
}

std::string r_decade_label(int decade) {
  static const char* labels[kRDecades] = {"<1e-4", "<1e-3", "<1e-2", "<0.1", "<1", "<10", ">=10", "inf"};
  return labels[decade];
}

void OpTally::record(const CaseJudgement& j, double case_seconds) {
  ++cases;
  seconds += case_seconds;
  switch (j.verdict) {
    case Verdict::passed: ++passed; break;
    case Verdict::failed: ++failed; break;
    case Verdict::crashed: ++failed, ++crashed; return;  // no outputs to measure
    case Verdict::timeout: ++failed, ++timeout; return;
    case Verdict::mistrusted: ++mistrusted; break;
    case Verdict::suspect: ++suspect; break;
    case Verdict::variant: ++failed, ++variant; break;
    case Verdict::skipped: ++skipped; return;
    case Verdict::invalid: ++invalid; return;
  }
  bool any_not_finite = false;
  for (const auto& o : j.outputs) any_not_finite = any_not_finite || o.not_finite > 0;
  not_finite += any_not_finite ? 1 : 0;
  if (!j.outputs.empty()) {
    max_r = std::max(max_r, j.max_r());
    max_ratio = std::max(max_ratio, j.max_ratio());
    ++r_decades[static_cast<std::size_t>(r_decade(j.max_r()))];
  }
}

namespace {

CampaignSummary summarize_verdicts(const CampaignResult& r) {
  std::int64_t failed = 0, suspect = 0;
  std::string untested;
  for (Op op : r.ops) {
    const auto it = r.tallies.find(op);
    const OpTally t = it == r.tallies.end() ? OpTally{} : it->second;
    failed += t.failed;
    suspect += t.suspect;
    if (t.cases == t.skipped) untested += (untested.empty() ? "" : ", ") + std::string(op_name(op));
  }
  if (failed > 0)
    return {1, "FAILURES FOUND: " + std::to_string(failed) + " failing case(s)" +
                   (suspect > 0 ? ", " + std::to_string(suspect) + " SUSPECT" : std::string())};
  if (suspect > 0)
    return {1, "SUSPECT: " + std::to_string(suspect) +
                   " case(s) within every bound but with errors far above honest rounding"};
  if (r.ops.empty()) return {3, "NOTHING TESTED: the library implements none of the selected ops"};
  if (!untested.empty()) return {3, "NOTHING TESTED for " + untested + ": every case SKIPPED"};
  return {0, "no failures"};
}

}  // namespace

CampaignSummary summarize(const CampaignResult& r) {
  CampaignSummary s = summarize_verdicts(r);
  if (r.stopped_by) s.line += " (stopped by " + signal_name(r.stopped_by) + ")";
  if (r.given_run < r.given)
    s.line += " (" + std::to_string(r.given_run) + " of " + std::to_string(r.given) +
              " given problems run: the time or case limit ended the replay)";
  return s;
}

std::string signal_name(int signal) {
  if (signal == SIGTERM) return "SIGTERM";
  if (signal == SIGINT) return "SIGINT";
  return "signal " + std::to_string(signal);
}

namespace {

// One case: checked, tallied, and when it fails shrunk (by `shrink`) and dumped. `next` (the case
// after it, when known) has its call queued in the worker behind this one's.
void run_case(CaseChecker& checker, const CampaignOptions& o, const Problem& given, CampaignResult& result,
              const std::function<Problem()>& shrink, const Problem* next) {
  const Problem p = checker.library().as_declared(given);  // what the case is judged as, and its repro
  const CaseJudgement j = checker.check(p, next);
  const double seconds = checker.last_case_seconds();
  result.tallies[p.op].record(j, seconds);
  result.by_dtype[{p.op, p.dtype}].record(j, seconds);
  if (!is_alarm(j.verdict)) return;
  Failure f;
  f.original = p;
  f.minimal = j.verdict == Verdict::suspect ? p : checker.library().as_declared(shrink());
  f.judgement = f.minimal == p ? j : checker.check(f.minimal);
  if (!o.dump_dir.empty()) {
    try {
      f.dump = dump_case(checker, f.minimal, o.dump_dir);
    } catch (const std::exception&) {
      f.dump.clear();  // the repro line still reproduces it
    }
  }
  result.failures.push_back(std::move(f));
}

}  // namespace

CampaignResult run_campaign(const KernelLibrary& library, const CampaignOptions& o, const Progress& progress) {
  if (o.shards < 1 || o.shard < 0 || o.shard >= o.shards)
    throw ArgumentError("shard", std::to_string(o.shard) + "/" + std::to_string(o.shards) + " is not i/n with 0 <= i < n");
  CaseChecker checker(library, o.check);
  CampaignResult result;
  // The ops asked for: those of the replayed problems, the --ops list, or every op.
  std::vector<Op> requested;
  for (const Problem& p : o.problems)
    if (std::find(requested.begin(), requested.end(), p.op) == requested.end()) requested.push_back(p.op);
  if (o.problems.empty()) requested = o.ops.empty() ? std::vector<Op>(kAllOps.begin(), kAllOps.end()) : o.ops;
  for (Op op : requested) (library.implements(op) ? result.ops : result.unimplemented).push_back(op);
  const auto start = Clock::now();
  auto out_of_time = [&](std::int64_t done) {
    return (o.cases && done >= *o.cases) || (o.seconds && since(start) >= *o.seconds) || stop_requested(o);
  };

  if (!o.problems.empty()) {  // replay: the given cases, this shard's share of them
    std::int64_t done = 0;
    result.given = static_cast<std::int64_t>((o.problems.size() - static_cast<std::size_t>(o.shard) +
                                              static_cast<std::size_t>(o.shards) - 1) /
                                             static_cast<std::size_t>(o.shards));
    for (std::size_t i = static_cast<std::size_t>(o.shard); i < o.problems.size(); i += static_cast<std::size_t>(o.shards)) {
      if (out_of_time(done)) break;
      const Problem& p = o.problems[i];
      ++done;
      const std::size_t after = i + static_cast<std::size_t>(o.shards);
      const Problem* next = after < o.problems.size() && !(o.cases && done >= *o.cases) ? &o.problems[after] : nullptr;
      run_case(checker, o, p, result, [&] {
        return shrink_problem(p, [&](const Problem& c) { return fails(checker, c); }, o.shrink_seconds);
      }, next);
      result.seconds = since(start);
      if (progress) progress(result, result.seconds);
    }
    result.seconds = since(start);
    result.given_run = done;
    result.stopped_by = stop_requested(o);
    return result;
  }

  if (result.ops.empty()) return result;
  // Each op stops at its own max_failures; the others keep their turns until time or cases run out.
  const int per_op_limit = std::max(1, o.max_failures);
  std::map<Op, int> failures_of;
  auto op_of = [&](std::int64_t k) {
    return result.ops[static_cast<std::size_t>((k / o.shards) % static_cast<std::int64_t>(result.ops.size()))];
  };
  // The first case from index k on whose op has not stopped (none when every op has): an op's
  // turn passes when it stops, but the case index stays with the op, so shards stay disjoint.
  auto draw = [&](std::int64_t k) -> std::optional<std::pair<std::int64_t, Problem>> {
    for (;; k += o.shards) {
      if (failures_of[op_of(k)] < per_op_limit) return std::pair{k, campaign_problem(op_of(k), o, k)};
      bool all_stopped = true;
      for (Op other : result.ops) all_stopped = all_stopped && failures_of[other] >= per_op_limit;
      if (all_stopped) return std::nullopt;
    }
  };
  // The next case is drawn before this one is checked, so that its call waits in the worker.
  std::int64_t done = 0;
  for (auto current = draw(o.shard); current && !out_of_time(done);) {
    const auto& [k, p] = *current;
    const Op op = p.op;
    ++done;
    const auto next = o.cases && done >= *o.cases ? std::nullopt : draw(k + o.shards);
    const std::size_t before = result.failures.size();
    run_case(checker, o, p, result, [&] { return shrink_failure(checker, op, o, k); }, next ? &next->second : nullptr);
    failures_of[op] += static_cast<int>(result.failures.size() - before);
    result.seconds = since(start);
    if (progress) progress(result, result.seconds);
    // A case drawn for an op that this one's failure stopped is not run: its call is dropped.
    if (next && failures_of[next->second.op] >= per_op_limit) current = draw(next->first + o.shards);
    else current = next;
  }
  result.seconds = since(start);
  result.stopped_by = stop_requested(o);
  return result;
}

}  // namespace ssd
