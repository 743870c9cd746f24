// Fuzz campaigns: deterministic case generation, checking, shrinking and dumping.
#include "ssd/campaign.h"

#include <chrono>

#include "ssd/case_file.h"
#include "ssd/errors.h"

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
  // Mostly small shapes (many cases per second), with a tail of large ones.
  const double u = static_cast<double>(mix(o.seed ^ mix(static_cast<std::uint64_t>(k) + 17)) >> 11) * 0x1p-53;
  GenOptions g = campaign_gen_options(u < o.large_fraction);
  g.dtypes = o.dtypes;
  return g;
}

rc::Shrinkable<Problem> generate(Op op, const CampaignOptions& o, std::int64_t k) {
  const std::uint64_t base = mix(o.seed ^ mix(static_cast<std::uint64_t>(k)));
  const rc::Random::Key key{base, mix(base + 1), mix(base + 2), static_cast<std::uint64_t>(op)};
  return gen_problem(op, options_for(o, k))(rc::Random(key), rc::kNominalSize);
}

bool fails(const KernelLibrary& library, const Problem& p) {
  return check_case(library, p).verdict == Verdict::failed;
}

// Writes the failing case (inputs, oracle, bounds and the kernel's outputs) as a results file.
std::filesystem::path dump_case(const KernelLibrary& library, const Problem& p, const std::filesystem::path& dir) {
  CaseFile c = make_golden_case(p);
  const KernelRun run = run_kernel(library, p, c.inputs);
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
  // x [1, 524289, 64, 64] has 2^31 + 4096 elements (the last chunk ragged); CB of the coupling
  // [1, 4097, 8, 256, 256] has just over 2^31.
  const std::string s = std::to_string(seed);
  switch (op) {
    case Op::mamba2: return parse_problem("mamba2:bf16 b1 s524289 h64 p64 g1 n16 q256 +softplus +D seed=" + s);
    case Op::chunk_state: return parse_problem("chunk_state:bf16 b1 s524289 h64 p64 g1 n16 q256 seed=" + s);
    case Op::chunk_scan: return parse_problem("chunk_scan:bf16 b1 s524289 h64 p64 g1 n16 q256 seed=" + s);
    case Op::chunk_coupling: return parse_problem("chunk_coupling:bf16 b1 s1048577 g8 n16 q256 seed=" + s);
    default: return std::nullopt;
  }
}

Problem campaign_problem(Op op, const CampaignOptions& options, std::int64_t k) {
  if (is_huge_case(options, k))
    if (auto p = huge_problem(op, mix(options.seed ^ static_cast<std::uint64_t>(k)) & 0xFFFFFF)) return *p;
  return generate(op, options, k).value();
}

Problem shrink_failure(const KernelLibrary& library, Op op, const CampaignOptions& options, std::int64_t k) {
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
        still_fails = fails(library, candidate->value());
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
    const CaseJudgement j = check_case(library, p);
    t.seconds += since(case_start);
    ++t.cases;
    switch (j.verdict) {
      case Verdict::passed: ++t.passed; break;
      case Verdict::mistrusted: ++t.mistrusted; break;
      case Verdict::skipped: ++t.skipped; break;
      case Verdict::invalid: ++t.invalid; break;
      case Verdict::failed: {
        ++t.failed;
        op_failed[op] = true;
        Failure f;
        f.original = p;
        f.minimal = shrink_failure(library, op, o, k);
        f.judgement = check_case(library, f.minimal);
        if (!o.dump_dir.empty()) {
          try {
            f.dump = dump_case(library, f.minimal, o.dump_dir);
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
