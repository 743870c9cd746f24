// Fuzz campaigns: deterministic case generation, checking, shrinking and dumping.
#include "ssd/fuzz/campaign.h"

#include <chrono>

#include "ssd/golden/case_file.h"
#include "ssd/reference/errors.h"

namespace ssd {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

GenOptions options_for(const CampaignOptions& o, std::int64_t k) {
  GenOptions g;
  g.dtypes = o.dtypes;
  // Mostly small shapes (many cases per second), with a tail of large ones.
  const double u = static_cast<double>(mix(o.seed ^ mix(static_cast<std::uint64_t>(k) + 17)) >> 11) * 0x1p-53;
  if (u < o.large_fraction) g.limits = GenLimits{2, 1024, 8, 64, 64, 256, 4096, 4};
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

Problem campaign_problem(Op op, const CampaignOptions& options, std::int64_t k) {
  if (is_huge_case(options, k))
    if (auto p = huge_problem(op, mix(options.seed ^ static_cast<std::uint64_t>(k)) & 0xFFFFFF)) return *p;
  return generate(op, options, k).value();
}

Problem shrink_failure(const KernelLibrary& library, Op op, const CampaignOptions& options, std::int64_t k) {
  CaseChecker checker(library, options.check);
  return shrink_failure(checker, op, options, k);
}

Problem shrink_failure(CaseChecker& checker, Op op, const CampaignOptions& options, std::int64_t k) {
  if (is_huge_case(options, k) && huge_problem(op, 0)) return campaign_problem(op, options, k);  // not from the generator
  rc::Shrinkable<Problem> current = generate(op, options, k);
  const auto start = Clock::now();
  bool progressed = true;
  while (progressed && since(start) < options.shrink_seconds) {
    progressed = false;
    auto shrinks = current.shrinks();
    while (auto candidate = shrinks.next()) {
      if (since(start) >= options.shrink_seconds) break;
      bool still_fails = false;
      try {
        still_fails = fails(checker, candidate->value());
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
  return current.value();
}

CampaignResult run_campaign(const KernelLibrary& library, const CampaignOptions& o, const Progress& progress) {
  if (o.shards < 1 || o.shard < 0 || o.shard >= o.shards)
    throw ArgumentError("shard", std::to_string(o.shard) + "/" + std::to_string(o.shards) + " is not i/n with 0 <= i < n");
  std::vector<Op> ops = o.ops;
  if (ops.empty())
    for (Op op : kAllOps)
      if (library.implements(op)) ops.push_back(op);
  if (ops.empty()) throw ArgumentError("ops", "the library implements none of the requested ops");

  CaseChecker checker(library, o.check);
  CampaignResult result;
  std::map<Op, bool> op_failed;
  const auto start = Clock::now();
  std::int64_t done = 0;
  for (std::int64_t k = o.shard;; k += o.shards) {
    if (o.cases && done >= *o.cases) break;
    if (o.seconds && since(start) >= *o.seconds) break;
    if (o.max_failures > 0 && static_cast<int>(result.failures.size()) >= o.max_failures) break;
    // Ops take turns; an op that has failed once stops (its minimal repro is what matters).
    const Op op = ops[static_cast<std::size_t>((k / o.shards) % static_cast<std::int64_t>(ops.size()))];
    ++done;
    if (op_failed[op]) {
      if (op_failed.size() == ops.size()) break;  // every op has its failure
      continue;
    }
    OpTally& t = result.tallies[op];
    const auto case_start = Clock::now();
    const Problem p = campaign_problem(op, o, k);
    const CaseJudgement j = checker.check(p);
    t.seconds += since(case_start);
    ++t.cases;
    switch (j.verdict) {
      case Verdict::passed: ++t.passed; break;
      case Verdict::mistrusted: ++t.mistrusted; break;
      case Verdict::skipped: ++t.skipped; break;
      case Verdict::invalid: ++t.invalid; break;
      case Verdict::crashed:
      case Verdict::timeout:
      case Verdict::failed: {
        ++t.failed;
        op_failed[op] = true;
        Failure f;
        f.original = p;
        f.minimal = shrink_failure(checker, op, o, k);
        f.judgement = checker.check(f.minimal);
        if (!o.dump_dir.empty()) {
          try {
            f.dump = dump_case(checker, f.minimal, o.dump_dir);
          } catch (const std::exception&) {
            f.dump.clear();  // the repro line still reproduces it
          }
        }
        result.failures.push_back(std::move(f));
        break;
      }
    }
    t.max_r = std::max(t.max_r, j.max_r());
    result.seconds = since(start);
    if (progress) progress(result, result.seconds);
  }
  result.seconds = since(start);
  return result;
}

}  // namespace ssd
