// ssd-tightness: how tight the per-element bounds are on given problems (docs/tolerance.md,
// "Headroom at full size"). For each problem: the oracle and its bounds once, then each kernel
// library in this process; per output the largest r and the SUSPECT ratio of every library, the
// looseness of the bound (median and 90th percentile of bound / |y*|, the share of elements whose
// |y*| is within the bound) and what each term of the bound formula contributes (mean share of
// the bound, and the number of elements where it is the largest term).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "ssd/harness/kernel_library.h"
#include "ssd/harness/runner.h"
#include "ssd/reference/op_spec.h"
#include "ssd/reference/tolerance.h"
#include "ssd/reference/verdict.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double quantile(std::vector<double>& v, double q) {
  if (v.empty()) return 0.0;
  const auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Headroom of the per-element bounds: max r, SUSPECT ratio, looseness and term shares per output."};
  std::vector<std::string> problems, kernels{"emulation", "emulation-blocked"};
  std::string file;
  bool workloads = false, smoke = false;
  app.add_option("problems", problems, "problem strings");
  app.add_option("--file", file, "a file of problem strings, one a line ('#' starts a comment)");
  app.add_flag("--workloads", workloads, "every op's full-size workloads (spec/workloads.md)");
  app.add_flag("--smoke", smoke, "every op's smoke problems");
  app.add_option("--kernels", kernels, "kernel libraries (names or paths)");
  CLI11_PARSE(app, argc, argv);
  if (!file.empty()) {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
      line = line.substr(0, line.find('#'));
      const auto a = line.find_first_not_of(" \t"), b = line.find_last_not_of(" \t\r");
      if (a != std::string::npos) problems.push_back(line.substr(a, b - a + 1));
    }
  }
  if (smoke)
    for (ssd::Op op : ssd::kAllOps)
      for (const ssd::Problem& p : ssd::op_spec(op).smoke()) problems.push_back(ssd::to_string(p));
  if (workloads)
    for (ssd::Op op : ssd::kAllOps)
      for (const ssd::Problem& p : ssd::op_spec(op).workloads()) problems.push_back(ssd::to_string(p));

  std::vector<ssd::KernelLibrary> libraries;
  try {
    for (const auto& k : kernels) libraries.push_back(ssd::KernelLibrary::open(k));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ssd-tightness: %s\n", e.what());
    return 2;
  }
  int status = 0;
  for (const std::string& text : problems) {
    try {
      const ssd::Problem p = ssd::parse_problem(text);
      auto start = std::chrono::steady_clock::now();
      const ssd::InputSet inputs = ssd::make_inputs(p);
      const ssd::Outputs oracle = ssd::op_spec(p.op).chunked(p, inputs);
      const double t_oracle = seconds_since(start);
      start = std::chrono::steady_clock::now();
      std::vector<ssd::BoundTermShares> terms;
      const ssd::Bounds bounds = ssd::compute_bounds_with_terms(p, inputs, oracle, terms);
      const double t_bounds = seconds_since(start);
      std::printf("problem %s\n  seconds: inputs+oracle %.2f, bounds %.2f", text.c_str(), t_oracle, t_bounds);
      std::vector<ssd::CaseJudgement> judged;
      for (const auto& lib : libraries) {
        start = std::chrono::steady_clock::now();
        const ssd::KernelRun run = ssd::run_kernel(lib, p, inputs);
        const double t_kernel = seconds_since(start);
        start = std::chrono::steady_clock::now();
        if (run.status != ssd::KernelRun::Status::ok) {
          std::printf("\n  %s: kernel error %s", kernels[&lib - libraries.data()].c_str(), run.message.c_str());
          status = 1;
          judged.emplace_back();
          continue;
        }
        judged.push_back(ssd::judge(p, oracle, bounds, run.outputs));
        std::printf(", %s kernel %.2f judge %.2f", kernels[&lib - libraries.data()].c_str(), t_kernel, seconds_since(start));
      }
      std::printf("\n");
      for (std::size_t l = 0; l < libraries.size(); ++l)
        std::printf("  verdict %s: %s max r %.4g ratio %.4g\n", kernels[l].c_str(),
                    std::string(ssd::verdict_name(judged[l].verdict)).c_str(), judged[l].max_r(), judged[l].max_ratio());
      for (const ssd::OutputBound& b : bounds.all()) {
        const ssd::Output& o = oracle.get(b.name);
        std::vector<double> looseness;
        std::int64_t compared = 0, within = 0;
        for (std::int64_t i = 0; i < o.value.numel(); ++i) {
          if (!o.is_defined(i) || b.is_exact(i) || !std::isfinite(b.bound[i]) || !(b.bound[i] > 0)) continue;
          const double y = std::fabs(o.value[i]);
          ++compared;
          if (y <= b.bound[i]) ++within;
          if (y > 0) looseness.push_back(b.bound[i] / y);
        }
        std::printf("  output %s: elements %lld, bound/|y*| median %.4g p90 %.4g, |y*|<=bound %.4g%%", b.name.c_str(),
                    static_cast<long long>(compared), quantile(looseness, 0.5), quantile(looseness, 0.9),
                    compared ? 100.0 * static_cast<double>(within) / static_cast<double>(compared) : 0.0);
        for (std::size_t l = 0; l < libraries.size(); ++l)
          for (const ssd::OutputJudgement& j : judged[l].outputs)
            if (j.name == b.name)
              std::printf(", %s r %.4g ratio %.4g", kernels[l].c_str(), j.max_r, j.ratio());
        std::printf("\n");
        for (const ssd::BoundTermShares& s : terms) {
          if (s.output != b.name || s.elements == 0) continue;
          std::printf("    terms (mean share / elements where largest):");
          for (std::size_t t = 0; t < ssd::kBoundTermNames.size(); ++t)
            if (s.share_sum[t] > 0)
              std::printf(" %s %.3f/%.3f", ssd::kBoundTermNames[t], s.share_sum[t] / static_cast<double>(s.elements),
                          static_cast<double>(s.dominant[t]) / static_cast<double>(s.elements));
          std::printf("\n");
        }
      }
      std::fflush(stdout);
    } catch (const std::exception& e) {
      std::printf("problem %s\n  error: %s\n", text.c_str(), e.what());
      status = 1;
    }
  }
  return status;
}
