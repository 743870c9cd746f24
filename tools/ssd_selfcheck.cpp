// ssd-selfcheck: runs both oracle forms (chunked and sequential) over every op's smoke problems
// and prints, per op and dtype, how closely they agree. Exit status 1 when any case disagrees.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "ssd/reference/agreement.h"
#include "ssd/reference/op_spec.h"

namespace {

struct Row {
  int cases = 0, disagreeing = 0;
  double worst = 0.0;
  std::string worst_output;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Checks the chunked oracle against the sequential oracle on every op's smoke problems."};
  std::vector<std::string> ops;
  double threshold = 1e-12;
  bool verbose = false;
  app.add_option("--ops", ops, "ops to check (default: all), e.g. mamba2 chunk_scan");
  app.add_option("--threshold", threshold, "largest normwise relative difference accepted")->check(CLI::PositiveNumber);
  app.add_flag("-v,--verbose", verbose, "print every case");
  CLI11_PARSE(app, argc, argv);

  std::vector<ssd::Op> selected;
  try {
    for (const auto& name : ops) selected.push_back(ssd::parse_op(name));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ssd-selfcheck: %s\n", e.what());
    return 2;
  }
  if (selected.empty()) selected.assign(ssd::kAllOps.begin(), ssd::kAllOps.end());

  std::printf("chunked vs sequential oracle, smoke problems, threshold %.0e (normwise relative)\n", threshold);
  std::printf("%-18s %-5s %5s  %-14s %12s  %s\n", "op", "dtype", "cases", "worst output", "max rel diff", "verdict");
  const auto start = std::chrono::steady_clock::now();
  bool all_agree = true;
  for (ssd::Op op : selected) {
    const ssd::OpSpec& spec = ssd::op_spec(op);
    std::map<std::string, Row> rows;  // by primary dtype, in name order
    for (const ssd::Problem& problem : spec.smoke()) {
      const std::string line = ssd::to_string(problem);
      Row& row = rows[std::string(ssd::dtype_name(problem.dtype))];
      ++row.cases;
      try {
        const ssd::InputSet inputs = ssd::make_inputs(problem);
        const ssd::Outputs chunked = spec.chunked(problem, inputs);
        const ssd::Outputs sequential = spec.sequential(problem, inputs);
        bool agree = true;
        for (const ssd::Output& out : chunked.all()) {
          const ssd::Agreement a = ssd::agreement(out, sequential.get(out.name));
          if (a.relative() >= row.worst) {
            row.worst = a.relative();
            row.worst_output = out.name;
          }
          if (!(a.relative() <= threshold)) agree = false;
          if (verbose || !(a.relative() <= threshold))
            std::printf("  %s  %-12s %s\n", line.c_str(), out.name.c_str(), a.describe().c_str());
        }
        if (!agree) {
          ++row.disagreeing;
          std::printf("  repro: %s\n", line.c_str());
        }
      } catch (const std::exception& e) {
        ++row.disagreeing;
        std::printf("  %s  error: %s\n  repro: %s\n", line.c_str(), e.what(), line.c_str());
      }
    }
    for (const auto& [dtype, row] : rows) {
      all_agree = all_agree && row.disagreeing == 0;
      std::printf("%-18s %-5s %5d  %-14s %12.1e  %s\n", std::string(spec.name).c_str(), dtype.c_str(), row.cases,
                  row.worst_output.c_str(), row.worst, row.disagreeing ? "DISAGREE" : "agree");
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s (%.1f s)\n", all_agree ? "all ops agree" : "DISAGREEMENT: see repro lines above", seconds);
  return all_agree ? 0 : 1;
}
