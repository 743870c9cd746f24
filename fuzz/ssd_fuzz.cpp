// ssd-fuzz: a differential fuzz campaign against any kernel library behind the kernel ABI.
// Prints the seed, a progress line, every failure as a minimal repro line (and a case file that
// `ssd-golden check` replays), and a per-op summary; exits 1 when anything FAILED.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>

#include "ssd/fuzz/campaign.h"
#include "ssd/reference/errors.h"

namespace {

std::vector<std::string> split_list(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    std::stringstream s(item);
    for (std::string part; std::getline(s, part, ',');)
      if (!part.empty()) out.push_back(part);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Fuzzes a kernel library against the float64 oracle under per-element bounds."};
  std::string kernels, shard = "0/1", dump = "ssd-fuzz-failures";
  std::vector<std::string> ops, dtypes;
  double seconds = 60;
  std::int64_t cases = 0;
  std::uint64_t seed = 0;
  int max_failures = 0;
  double large = 0.05, huge = 0;
  bool quiet = false;
  app.add_option("--kernels", kernels,
                 "emulation, emulation-blocked, mutant:<flaw>, or a path to a kernel library (.so)")->required();
  app.add_option("--ops", ops, "ops to fuzz, comma separated (default: all the library implements)");
  app.add_option("--dtypes", dtypes, "primary dtypes, comma separated (default: all)");
  app.add_option("--time", seconds, "seconds to run (default 60; ignored with --cases)")->check(CLI::PositiveNumber);
  app.add_option("--cases", cases, "cases to run in this shard, instead of --time")->check(CLI::PositiveNumber);
  auto* seed_option = app.add_option("--seed", seed, "campaign seed (default: from the clock; printed)");
  app.add_option("--shard", shard, "i/n: run the cases k with k % n == i (disjoint across shards)");
  app.add_option("--max-failures", max_failures, "stop after this many failures (default: never)");
  app.add_option("--large", large, "fraction of cases with large shapes (default 0.05)")->check(CLI::Range(0.0, 1.0));
  app.add_option("--huge", huge, "fraction of cases past 2^31 elements (GPU hosts with 64 GB or more; default 0)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--dump", dump, "directory for failing cases (default ssd-fuzz-failures)");
  app.add_flag("-q,--quiet", quiet, "no progress line");
  std::string isolation = "process";
  double case_timeout = 0;
  app.add_option("--isolation", isolation,
                 "process: kernel calls run in a worker process that a crash or hang cannot take down (default); "
                 "none: in this process");
  app.add_option("--case-timeout", case_timeout,
                 "seconds a kernel call may run before it is TIMEOUT (default: 5 s plus 1 s per million elements)")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  ssd::CampaignOptions o;
  try {
    for (const auto& name : split_list(ops)) o.ops.push_back(ssd::parse_op(name));
    for (const auto& name : split_list(dtypes)) o.dtypes.push_back(ssd::parse_dtype(name, "dtypes"));
    const auto slash = shard.find('/');
    if (slash == std::string::npos) throw ssd::ArgumentError("shard", "'" + shard + "' is not i/n");
    o.shard = std::stoll(shard.substr(0, slash));
    o.shards = std::stoll(shard.substr(slash + 1));
    o.check.isolation = ssd::parse_isolation(isolation);
    if (case_timeout > 0) o.check.case_timeout = case_timeout;
  } catch (const ssd::ArgumentError& e) {
    std::fprintf(stderr, "ssd-fuzz: %s\n", e.what());
    return 2;
  } catch (const std::exception&) {
    std::fprintf(stderr, "ssd-fuzz: argument 'shard': '%s' is not i/n\n", shard.c_str());
    return 2;
  }
  if (seed_option->count() == 0)
    seed = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  o.seed = seed;
  if (cases > 0) o.cases = cases;
  else o.seconds = seconds;
  o.max_failures = max_failures;
  o.large_fraction = large;
  o.huge_fraction = huge;
  o.dump_dir = dump;

  try {
    const ssd::KernelLibrary library = ssd::KernelLibrary::open(kernels);
    std::printf("ssd-fuzz: kernels %s (%s), seed %llu, shard %s, %s\n", library.table().name, kernels.c_str(),
                static_cast<unsigned long long>(seed), shard.c_str(),
                o.cases ? (std::to_string(*o.cases) + " cases").c_str() : (std::to_string(seconds) + " s").c_str());
    std::fflush(stdout);
    const bool tty = isatty(fileno(stderr)) && !quiet;
    std::size_t reported = 0;
    auto progress = [&](const ssd::CampaignResult& r, double elapsed) {
      for (; reported < r.failures.size(); ++reported) {
        const ssd::Failure& f = r.failures[reported];
        if (tty) std::fprintf(stderr, "\r%100s\r", "");
        std::printf("%s\n", ssd::describe(f.judgement).c_str());
        if (!f.dump.empty()) std::printf("  case file: %s\n", f.dump.c_str());
        std::fflush(stdout);
      }
      if (!tty) return;
      std::int64_t n = 0, failed = 0;
      for (const auto& [op, t] : r.tallies) {
        n += t.cases;
        failed += t.failed;
      }
      const double total = o.seconds ? *o.seconds : 0;
      std::fprintf(stderr, "\r%lld cases, %lld failed, %.0f s%s", static_cast<long long>(n), static_cast<long long>(failed),
                   elapsed, total > 0 ? (" of " + std::to_string(static_cast<int>(total))).c_str() : "");
    };
    const ssd::CampaignResult r = ssd::run_campaign(library, o, progress);
    if (tty) std::fprintf(stderr, "\n");

    std::printf("\n| op | cases | PASSED | FAILED | MISTRUSTED | SKIPPED | INVALID | max r | cases/s |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    std::int64_t failed = 0;
    for (const auto& [op, t] : r.tallies) {
      failed += t.failed;
      std::printf("| %s | %lld | %lld | %lld | %lld | %lld | %lld | %.3f | %.1f |\n", std::string(ssd::op_name(op)).c_str(),
                  static_cast<long long>(t.cases), static_cast<long long>(t.passed), static_cast<long long>(t.failed),
                  static_cast<long long>(t.mistrusted), static_cast<long long>(t.skipped),
                  static_cast<long long>(t.invalid), t.max_r, t.seconds > 0 ? static_cast<double>(t.cases) / t.seconds : 0.0);
    }
    std::printf("%s after %.1f s (seed %llu)\n", failed ? "FAILURES FOUND" : "no failures", r.seconds,
                static_cast<unsigned long long>(seed));
    for (const ssd::Failure& f : r.failures) std::printf("repro: %s\n", f.judgement.problem.c_str());
    return failed ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ssd-fuzz: %s\n", e.what());
    return 2;
  }
}
