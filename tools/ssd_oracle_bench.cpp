// ssd-oracle-bench: times the chunked float64 oracle on every full-size workload of each op
// (spec/workloads.md via the OpSpecs) and prints a table; the budget is 60 s per workload.
#include <omp.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "ssd/reference/op_spec.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double peak_rss_gib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / (1024.0 * 1024.0);  // ru_maxrss is in KiB
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Times the chunked float64 oracle on the full-size workloads."};
  std::vector<std::string> ops;
  double budget = 60.0;
  app.add_option("--ops", ops, "ops to time (default: all)");
  app.add_option("--budget", budget, "seconds allowed per workload (oracle only)")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  std::vector<ssd::Op> selected;
  try {
    for (const auto& name : ops) selected.push_back(ssd::parse_op(name));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ssd-oracle-bench: %s\n", e.what());
    return 2;
  }
  if (selected.empty()) selected.assign(ssd::kAllOps.begin(), ssd::kAllOps.end());

  std::printf("chunked float64 oracle, %d OpenMP threads, budget %.0f s per workload\n", omp_get_max_threads(), budget);
  std::printf("| op | workload | inputs s | oracle s | within budget |\n|---|---|---:|---:|---|\n");
  std::fflush(stdout);
  bool all_within = true;
  double slowest = 0.0;
  for (ssd::Op op : selected) {
    const ssd::OpSpec& spec = ssd::op_spec(op);
    for (const ssd::Problem& problem : spec.workloads()) {
      auto start = std::chrono::steady_clock::now();
      const ssd::InputSet inputs = ssd::make_inputs(problem);
      const double fill = seconds_since(start);
      start = std::chrono::steady_clock::now();
      const ssd::Outputs outputs = spec.chunked(problem, inputs);
      const double oracle = seconds_since(start);
      const bool within = oracle <= budget;
      all_within = all_within && within;
      slowest = std::max(slowest, oracle);
      std::printf("| %s | `%s` | %.2f | %.2f | %s |\n", std::string(spec.benchmark_name).c_str(),
                  ssd::to_string(problem).c_str(), fill, oracle, within ? "yes" : "NO");
      std::fflush(stdout);
    }
  }
  std::printf("slowest workload %.2f s; peak memory %.1f GiB; %s\n", slowest, peak_rss_gib(),
              all_within ? "every workload within budget" : "SOME WORKLOADS OVER BUDGET");
  return all_within ? 0 : 1;
}
