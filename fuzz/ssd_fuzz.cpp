// ssd-fuzz: a differential fuzz campaign against any kernel library behind the kernel ABI, or a
// replay of given problems. Prints the seed, a progress line, every failure with a repro command
// (and a case file that `ssd-golden check` replays), a per-op summary and one closing line; writes
// JSON and JUnit reports on request. Exit status: 0 clean, 1 failures, 2 usage, 3 nothing tested.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>

#include <fstream>

#include "ssd/fuzz/campaign.h"
#include "ssd/fuzz/report.h"
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
  std::string kernels, shard = "0/1", dump = "ssd-fuzz-failures", problems_file, report, junit;
  std::vector<std::string> problem_lines;
  std::vector<std::string> ops, dtypes;
  double seconds = 60;
  std::int64_t cases = 0;
  std::uint64_t seed = 0;
  int max_failures = 1;
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
  app.add_option("--max-failures", max_failures, "failures per op before that op stops (default 1; the other ops go on)");
  app.add_option("--large", large, "fraction of cases with large shapes (default 0.05)")->check(CLI::Range(0.0, 1.0));
  app.add_option("--huge", huge, "fraction of cases past 2^31 elements (GPU hosts with 64 GB or more; default 0)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--dump", dump, "directory for failing cases (default ssd-fuzz-failures)");
  app.add_option("--problem", problem_lines, "replay this problem string instead of generating cases (repeatable)");
  app.add_option("--problems", problems_file, "replay the problem strings of this file (one per line, # comments)");
  app.add_option("--report", report, "write a JSON report to this file");
  std::string f32_dots = "ieee";
  app.add_option("--f32-dots", f32_dots, "how the kernels take f32 operands into dot products: ieee (default) or tf32")
      ->check(CLI::IsMember({"ieee", "tf32"}));
  app.add_option("--junit", junit, "write a JUnit XML report to this file (one testcase per op and dtype)");
  app.add_flag("-q,--quiet", quiet, "no progress line");
  CLI11_PARSE(app, argc, argv);

  ssd::CampaignOptions o;
  try {
    for (const auto& name : split_list(ops)) o.ops.push_back(ssd::parse_op(name));
    for (const auto& line : problem_lines) o.problems.push_back(ssd::parse_problem(line));
    if (!problems_file.empty()) {
      std::ifstream in(problems_file);
      if (!in) throw ssd::ArgumentError("problems", "cannot read " + problems_file);
      std::size_t number = 0;
      for (std::string line; std::getline(in, line);) {
        ++number;
        const auto first = line.find_first_not_of(" \t\r");
        if (first == std::string::npos || line[first] == '#') continue;
        try {
          o.problems.push_back(ssd::parse_problem(line));
        } catch (const ssd::ArgumentError& e) {
          throw ssd::ArgumentError("problems", problems_file + " line " + std::to_string(number) + ": " + e.what());
        }
      }
      if (o.problems.empty()) throw ssd::ArgumentError("problems", problems_file + " lists no problem");
    }
    for (const auto& name : split_list(dtypes)) o.dtypes.push_back(ssd::parse_dtype(name, "dtypes"));
    const auto slash = shard.find('/');
    if (slash == std::string::npos) throw ssd::ArgumentError("shard", "'" + shard + "' is not i/n");
    o.shard = std::stoll(shard.substr(0, slash));
    o.shards = std::stoll(shard.substr(slash + 1));
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
  o.f32_dots = f32_dots == "tf32" ? ssd::DotPrecision::tf32 : ssd::DotPrecision::ieee;

  try {
    const ssd::KernelLibrary library = ssd::KernelLibrary::open(kernels);
    const ssd::ReportContext context{kernels, library.table().name, seed, shard, "ssd-fuzz --kernels " + kernels};
    const std::string what = !o.problems.empty() ? std::to_string(o.problems.size()) + " given problem(s)"
                             : o.cases             ? std::to_string(*o.cases) + " cases"
                                                   : std::to_string(seconds) + " s";
    std::printf("ssd-fuzz: kernels %s (%s), seed %llu, shard %s, %s\n", library.table().name, kernels.c_str(),
                static_cast<unsigned long long>(seed), shard.c_str(), what.c_str());
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

    std::printf("\n| op | cases | PASSED | FAILED | MISTRUSTED | SKIPPED | INVALID | not finite | max r | cases/s |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const auto& [op, t] : r.tallies)
      std::printf("| %s | %lld | %lld | %lld | %lld | %lld | %lld | %lld | %.3g | %.1f |\n", std::string(ssd::op_name(op)).c_str(),
                  static_cast<long long>(t.cases), static_cast<long long>(t.passed), static_cast<long long>(t.failed),
                  static_cast<long long>(t.mistrusted), static_cast<long long>(t.skipped),
                  static_cast<long long>(t.invalid), static_cast<long long>(t.not_finite), t.max_r,
                  t.seconds > 0 ? static_cast<double>(t.cases) / t.seconds : 0.0);
    for (ssd::Op op : r.unimplemented) std::printf("| %s | not implemented by the library |\n", std::string(ssd::op_name(op)).c_str());
    for (const ssd::Failure& f : r.failures) std::printf("repro: %s\n", ssd::repro_command(context, f.judgement.problem).c_str());
    if (!report.empty()) ssd::write_report_file(report, ssd::json_report(r, context), "report");
    if (!junit.empty()) ssd::write_report_file(junit, ssd::junit_report(r, context), "junit");
    const ssd::CampaignSummary summary = ssd::summarize(r);
    std::printf("%s after %.1f s (seed %llu)\n", summary.line.c_str(), r.seconds, static_cast<unsigned long long>(seed));
    return summary.exit_status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ssd-fuzz: %s\n", e.what());
    return 2;
  }
}
