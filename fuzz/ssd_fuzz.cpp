// ssd-fuzz: a differential fuzz campaign against any kernel library behind the kernel ABI, or a
// replay of given problems. Prints the seed, a progress line, every failure with a repro command
// (and a case file that `ssd-golden check` replays), a per-op summary and one closing line; writes
// JSON and JUnit reports on request. Exit status: 0 clean, 1 failures, 2 a usage error (one line on
// stderr naming the option) or a campaign that cannot run, 3 nothing tested. SIGTERM or SIGINT
// end a campaign as if its time were up, with its summary and reports ("stopped by SIGTERM").
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <tuple>

#include "ssd/fuzz/campaign.h"
#include "ssd/fuzz/report.h"
#include "ssd/reference/errors.h"
#include "ssd/reference/option_values.h"

namespace {

constexpr int kExitUsage = 2;

// Largest values the options take: --time about 116 days, --cases and --shard n so that case
// indices (shard + cases * n) stay far inside int64, --max-case-gib so its bytes fit int64.
constexpr double kMaxSeconds = 1e7;
constexpr std::uint64_t kMaxCases = std::uint64_t{1} << 40, kMaxShards = std::uint64_t{1} << 20;
constexpr double kMaxCaseGib = 0x1p32;

// The first SIGTERM or SIGINT, for the campaign to stop at; a second one kills (SA_RESETHAND).
std::atomic<int> stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "set from a signal handler");

void on_stop_signal(int signal) { stop_signal.store(signal); }

void stop_on_signals() {
  struct sigaction action = {};
  action.sa_handler = on_stop_signal;
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

void usage_error(const std::string& message) {
  std::string line = message;
  for (char& ch : line)
    if (ch == '\n') ch = ' ';  // one line, always
  std::fprintf(stderr, "ssd-fuzz: %s\n", line.c_str());
}

// Comma-separated items of every occurrence of a list option; an empty item is an error.
std::vector<std::string> split_list(const char* option, const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    std::stringstream s(item);
    std::string part;
    std::size_t count = 0;
    while (std::getline(s, part, ',')) {
      ++count;
      if (part.empty()) throw ssd::ArgumentError(option, "empty item in '" + item + "'");
      if (std::find(out.begin(), out.end(), part) != out.end()) throw ssd::ArgumentError(option, "'" + part + "' given twice");
      out.push_back(part);
    }
    if (count == 0 || item.back() == ',') throw ssd::ArgumentError(option, "empty item in '" + item + "'");
  }
  return out;
}

// "i/n" with 0 <= i < n <= kMaxShards, digits only on both sides.
std::pair<std::int64_t, std::int64_t> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) throw ssd::ArgumentError("--shard", "'" + text + "' is not i/n");
  const std::string_view view(text);
  std::uint64_t i = 0, n = 0;
  try {
    i = ssd::parse_option_unsigned("--shard", view.substr(0, slash), 0, kMaxShards - 1);
    n = ssd::parse_option_unsigned("--shard", view.substr(slash + 1), 1, kMaxShards);
  } catch (const ssd::ArgumentError&) {
    throw ssd::ArgumentError("--shard", "'" + text + "' is not i/n with integers 0 <= i < n <= " + std::to_string(kMaxShards));
  }
  if (i >= n) throw ssd::ArgumentError("--shard", "'" + text + "' is not i/n with 0 <= i < n");
  return {static_cast<std::int64_t>(i), static_cast<std::int64_t>(n)};
}

// The largest case the campaign may build when it draws huge cases (--huge > 0).
std::int64_t huge_case_bytes(const std::vector<ssd::Op>& ops) {
  std::int64_t bytes = 0;
  for (ssd::Op op : ops.empty() ? std::vector<ssd::Op>(ssd::kAllOps.begin(), ssd::kAllOps.end()) : ops)
    if (auto p = ssd::huge_problem(op, 0))
      if (auto size = ssd::case_size(*p)) bytes = std::max(bytes, size->bytes);
  return bytes;
}

// The problem strings of a file, one per line; blank lines and '#' comments skipped.
std::vector<ssd::Problem> read_problems(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ssd::ArgumentError("--problems", "cannot read " + path);
  std::vector<ssd::Problem> problems;
  std::size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    try {
      problems.push_back(ssd::parse_problem(line));
    } catch (const ssd::ArgumentError& e) {
      throw ssd::ArgumentError("--problems", path + " line " + std::to_string(number) + ": " + e.what());
    }
  }
  if (problems.empty()) throw ssd::ArgumentError("--problems", path + " lists no problem");
  return problems;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Fuzzes a kernel library against the float64 oracle under per-element bounds."};
  // Every value is read as text and parsed strictly below, so each error names its option.
  std::string kernels, shard = "0/1", dump = "ssd-fuzz-failures", time_text, cases_text, seed_text,
                       max_failures_text, large_text, huge_text, far_text, far_slots_text, max_gib_text, problems_file, report, junit, f32_dots;
  std::vector<std::string> problem_lines;
  std::vector<std::string> ops, dtypes;
  bool quiet = false;
  app.add_option("--kernels", kernels,
                 "a kernel library: a path (.so), or a name such as cuda, emulation, emulation-blocked, "
                 "emulation-tf32, mutant-<flaw> (docs/kernel-abi.md)")->required();
  app.add_option("--ops", ops, "ops to fuzz, comma separated (default: all the library implements)");
  app.add_option("--dtypes", dtypes, "primary dtypes f32, f16, bf16, comma separated (default: all)");
  auto* time_option = app.add_option("--time", time_text,
                                     "seconds to run, in (0, 1e7] (default 60; a replay of --problem or --problems runs "
                                     "every given problem unless --time or --cases is given)");
  auto* cases_option = app.add_option("--cases", cases_text, "cases to run in this shard, instead of --time (1 .. 2^40)");
  time_option->excludes(cases_option);
  app.add_option("--seed", seed_text, "campaign seed, 0 .. 2^64-1 (default: from the clock; printed)");
  app.add_option("--shard", shard, "i/n, 0 <= i < n <= 2^20: run the cases k with k % n == i (disjoint across shards)");
  app.add_option("--max-failures", max_failures_text,
                 "failures per op before that op stops, 1 .. 2^31-1 (default 1; the other ops go on)");
  app.add_option("--large", large_text, "fraction of cases with large shapes, in [0, 1] (default 0.05)");
  app.add_option("--huge", huge_text,
                 "fraction of cases past 2^31 elements, in [0, 1] (GPU hosts with 64 GB or more; default 0)");
  app.add_option("--far", far_text,
                 "fraction of cases whose strided input views reach past 2^31 elements (+far: small cases in buffers "
                 "of 4 to 8 GiB each, only their views' spans touched), in [0, 1] (default 0)");
  app.add_option("--far-slots", far_slots_text,
                 "fraction of cases with decode-step state slots at ids whose element offset passes 2^32 (+farslots: "
                 "small recurrent cases in a state buffer of 8 to 16 GiB, a few MiB of it touched), in [0, 1] (default 0)");
  app.add_option("--max-case-gib", max_gib_text,
                 "largest case, GiB of inputs and outputs as float64 (default 16; --huge raises it to fit its cases)");
  app.add_option("--dump", dump, "directory for failing cases (default ssd-fuzz-failures; empty: none written)");
  app.add_option("--problem", problem_lines, "replay this problem string instead of generating cases (repeatable)");
  app.add_option("--problems", problems_file, "replay the problem strings of this file (one per line, # comments)");
  app.add_option("--report", report, "write a JSON report to this file");
  app.add_option("--junit", junit, "write a JUnit XML report to this file (one testcase per op and dtype)");
  app.add_option("--f32-dots", f32_dots,
                 "ieee or tf32: how the kernels take f32 operands into dot products (default: what the library declares)");
  app.add_flag("-q,--quiet", quiet, "no progress line");
  std::string isolation = "process", case_timeout_text, invariance = "on";
  app.add_option("--isolation", isolation,
                 "process: kernel calls run in a worker process that a crash or hang cannot take down (default); "
                 "none: in this process");
  app.add_option("--invariance", invariance,
                 "on: a decode case of more than one row also calls one row alone, and a multi-token one its first k "
                 "tokens; a packed mamba2 batch of two or more sequences is also called cut after a sequence, and one "
                 "sequence at its place in its chunk: each must match its part of the whole bit for bit, else VARIANT "
                 "(default); off: values only");
  app.add_option("--case-timeout", case_timeout_text,
                 "seconds a kernel call may run before it is TIMEOUT, in (0, 1e7] (default: 5 s plus 1 s per million "
                 "elements)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    usage_error(e.what());
    return kExitUsage;
  }

  ssd::CampaignOptions o;
  std::uint64_t seed = 0;
  double seconds = 60;
  try {
    if (kernels.empty()) throw ssd::ArgumentError("--kernels", "empty");
    for (const auto& name : split_list("--ops", ops)) {
      try {
        o.ops.push_back(ssd::parse_op(name));
      } catch (const ssd::ArgumentError& e) {
        throw ssd::ArgumentError("--ops", e.what() + std::string_view(e.what()).find(':') + 2);
      }
    }
    for (const auto& name : split_list("--dtypes", dtypes)) {
      if (name != "f32" && name != "f16" && name != "bf16")
        throw ssd::ArgumentError("--dtypes", "'" + name + "' is not a primary dtype (f32, f16 or bf16)");
      o.dtypes.push_back(ssd::parse_dtype(name, "--dtypes"));
    }
    std::tie(o.shard, o.shards) = parse_shard(shard);
    if (time_option->count()) seconds = ssd::parse_option_number("--time", time_text, 0, kMaxSeconds, true);
    if (cases_option->count())
      o.cases = static_cast<std::int64_t>(ssd::parse_option_unsigned("--cases", cases_text, 1, kMaxCases));
    else
      o.seconds = seconds;
    if (app.count("--seed"))
      seed = ssd::parse_option_unsigned("--seed", seed_text, 0, std::numeric_limits<std::uint64_t>::max());
    else
      seed = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
    if (app.count("--max-failures"))
      o.max_failures = static_cast<int>(ssd::parse_option_unsigned("--max-failures", max_failures_text, 1,
                                                                    std::numeric_limits<int>::max()));
    for (const auto& line : problem_lines) {
      try {
        o.problems.push_back(ssd::parse_problem(line));
      } catch (const ssd::ArgumentError& e) {
        throw ssd::ArgumentError("--problem", e.what());
      }
    }
    if (!problems_file.empty())
      for (ssd::Problem& p : read_problems(problems_file)) o.problems.push_back(std::move(p));
    // A replay is of the problems asked for: the default time would cut it wherever the host is slow.
    if (!o.problems.empty() && !time_option->count()) o.seconds.reset();
    if (app.count("--f32-dots")) {
      if (f32_dots != "ieee" && f32_dots != "tf32") throw ssd::ArgumentError("--f32-dots", "'" + f32_dots + "' is not ieee or tf32");
      o.f32_dots = f32_dots == "tf32" ? ssd::DotPrecision::tf32 : ssd::DotPrecision::ieee;
    }
    if (app.count("--large")) o.large_fraction = ssd::parse_option_number("--large", large_text, 0, 1);
    if (app.count("--huge")) o.huge_fraction = ssd::parse_option_number("--huge", huge_text, 0, 1);
    if (app.count("--far")) o.far_fraction = ssd::parse_option_number("--far", far_text, 0, 1);
    if (app.count("--far-slots")) o.far_slots_fraction = ssd::parse_option_number("--far-slots", far_slots_text, 0, 1);
    const bool limit_given = app.count("--max-case-gib") > 0;
    if (limit_given)
      ssd::set_max_case_bytes(static_cast<std::int64_t>(
          ssd::parse_option_number("--max-case-gib", max_gib_text, 0, kMaxCaseGib, true) * 0x1p30));
    if (o.huge_fraction > 0) {
      const std::int64_t needed = huge_case_bytes(o.ops);
      if (needed > ssd::max_case_bytes()) {
        if (limit_given)
          throw ssd::ArgumentError("--max-case-gib", "the huge cases of --huge hold " +
                                                         std::to_string((needed + (std::int64_t{1} << 30) - 1) >> 30) +
                                                         " GiB as float64; give at least that, or leave it out");
        ssd::set_max_case_bytes(needed);
      }
    }
    if (!dump.empty()) {
      std::error_code ec;
      if (std::filesystem::exists(dump, ec) && !std::filesystem::is_directory(dump, ec))
        throw ssd::ArgumentError("--dump", "'" + dump + "' exists and is not a directory");
    }
    o.check.isolation = ssd::parse_isolation(isolation);
    if (invariance != "on" && invariance != "off")
      throw ssd::ArgumentError("--invariance", "'" + invariance + "' is neither on nor off");
    o.check.invariance = invariance == "on";
    if (app.count("--case-timeout"))
      o.check.case_timeout = ssd::parse_option_number("--case-timeout", case_timeout_text, 0, kMaxSeconds, true);
  } catch (const ssd::ArgumentError& e) {
    usage_error(e.what());
    return kExitUsage;
  }
  o.seed = seed;
  o.dump_dir = dump;

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
    o.stop_signal = &stop_signal;
    stop_on_signals();
    const ssd::CampaignResult r = ssd::run_campaign(library, o, progress);
    if (tty) std::fprintf(stderr, "\n");

    std::printf("\n| op | cases | PASSED | FAILED | SUSPECT | MISTRUSTED | SKIPPED | INVALID | not finite | max r | max ratio | cases/s |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const auto& [op, t] : r.tallies)
      std::printf("| %s | %lld | %lld | %lld | %lld | %lld | %lld | %lld | %lld | %.3g | %.3g | %.1f |\n", std::string(ssd::op_name(op)).c_str(),
                  static_cast<long long>(t.cases), static_cast<long long>(t.passed), static_cast<long long>(t.failed),
                  static_cast<long long>(t.suspect), static_cast<long long>(t.mistrusted), static_cast<long long>(t.skipped),
                  static_cast<long long>(t.invalid), static_cast<long long>(t.not_finite), t.max_r, t.max_ratio,
                  t.seconds > 0 ? static_cast<double>(t.cases) / t.seconds : 0.0);
    for (ssd::Op op : r.unimplemented) std::printf("| %s | not implemented by the library |\n", std::string(ssd::op_name(op)).c_str());
    for (const ssd::Failure& f : r.failures) std::printf("repro: %s\n", ssd::repro_command(context, f.judgement.problem).c_str());
    if (!report.empty()) ssd::write_report_file(report, ssd::json_report(r, context), "report");
    if (!junit.empty()) ssd::write_report_file(junit, ssd::junit_report(r, context), "junit");
    const ssd::CampaignSummary summary = ssd::summarize(r);
    std::printf("%s after %.1f s (seed %llu)\n", summary.line.c_str(), r.seconds, static_cast<unsigned long long>(seed));
    return summary.exit_status;
  } catch (const std::exception& e) {
    usage_error(e.what());
    return kExitUsage;
  }
}
