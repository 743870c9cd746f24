// The tolerance rule separates honest kernels from wrong ones: over 1000 random problems per op
// (every dtype, flag and corner a campaign draws), both honest fp32 emulations (kernel order and
// blocked/tree order) pass with max utilization r <= 0.5, and so does the TF32 emulation on problems
// that declare dots=tf32, and none is SUSPECT. The r histogram and the largest statistical ratio
// (ssd/reference/suspicion.h) of every op and output are printed at the end.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdio>
#include <map>
#include <mutex>

#include "ssd/fuzz/generators.h"
#include "ssd/harness/runner.h"
#include "ssd/reference/suspicion.h"

namespace {

constexpr double kHonestUtilization = 0.5;

struct Tally {
  std::int64_t cases = 0, mistrusted = 0;
  double max_r = 0;
  std::string worst_case;
  double max_ratio = 0;  // largest ||y - y*|| / scale among outputs with enough elements for the statistic
  std::string worst_ratio_case;
  std::array<std::int64_t, ssd::kHistogramBins> histogram{};
};
std::map<std::string, Tally>& tallies() {
  static std::map<std::string, Tally> t;
  return t;
}
// Max r per variant, op and primary dtype (over all outputs).
std::map<std::string, std::pair<std::int64_t, double>>& by_dtype() {
  static std::map<std::string, std::pair<std::int64_t, double>> t;
  return t;
}

void honest_variant_passes(ssd::Op op, const char* variant, ssd::DotPrecision dots = ssd::DotPrecision::ieee) {
  static std::map<std::string, ssd::KernelLibrary> libraries;
  if (!libraries.count(variant)) libraries.emplace(variant, ssd::KernelLibrary::open(variant));
  // What campaigns draw (negative dt limits included), so every corner is calibrated.
  ssd::Problem problem = *ssd::gen_problem(op, ssd::campaign_gen_options(false));
  problem.dots = dots;  // the precision the variant declares
  const ssd::CaseJudgement j = ssd::check_case(libraries.at(variant), problem);
  for (const auto& o : j.outputs) {
    Tally& t = tallies()[std::string(variant) + " " + std::string(ssd::op_name(op)) + " " + o.name];
    ++t.cases;
    if (j.verdict == ssd::Verdict::mistrusted) ++t.mistrusted;
    if (o.max_r >= t.max_r) {
      t.max_r = o.max_r;
      t.worst_case = j.problem;
    }
    if (o.stat_elements >= ssd::kSuspicion.min_elements && o.ratio() >= t.max_ratio) {
      t.max_ratio = o.ratio();
      t.worst_ratio_case = j.problem;
    }
    for (int b = 0; b < ssd::kHistogramBins; ++b) t.histogram[static_cast<std::size_t>(b)] += o.histogram[static_cast<std::size_t>(b)];
  }
  auto& [count, max_r] = by_dtype()[std::string(variant) + " " + std::string(ssd::op_name(op)) + " " +
                                    std::string(ssd::dtype_name(problem.dtype))];
  ++count;
  max_r = std::max(max_r, j.max_r());
  RC_LOG() << ssd::describe(j) << '\n';
  RC_ASSERT(j.verdict == ssd::Verdict::passed || j.verdict == ssd::Verdict::mistrusted);
  RC_ASSERT(j.max_r() <= kHonestUtilization);
}

#define HONEST(Name, op)                                                                             \
  RC_GTEST_PROP(HonestEmulation, Name, ()) { honest_variant_passes(ssd::Op::op, "emulation"); } \
  RC_GTEST_PROP(HonestEmulationBlocked, Name, ()) { honest_variant_passes(ssd::Op::op, "emulation-blocked"); }
HONEST(Mamba2, mamba2)
HONEST(ChunkCumsum, chunk_cumsum)
HONEST(ChunkCoupling, chunk_coupling)
HONEST(ChunkState, chunk_state)
HONEST(StatePassing, state_passing)
HONEST(ChunkScan, chunk_scan)
HONEST(Recurrent, recurrent)
HONEST(DiscretizeSegsum, discretize_segsum)

// The honest kernel of a library that declares TF32 dot products, on the ops that have them.
#define HONEST_TF32(Name, op)                                              \
  RC_GTEST_PROP(HonestEmulationTf32, Name, ()) {                          \
    honest_variant_passes(ssd::Op::op, "emulation-tf32", ssd::DotPrecision::tf32); \
  }
HONEST_TF32(Mamba2, mamba2)
HONEST_TF32(ChunkCoupling, chunk_coupling)
HONEST_TF32(ChunkState, chunk_state)
HONEST_TF32(ChunkScan, chunk_scan)

// Runs last (gtest keeps definition order): the evidence behind docs/tolerance.md.
TEST(Utilization, Histograms) {
  std::printf("%-48s %6s %8s %9s", "variant op output", "cases", "max r", "max ratio");
  for (int b = 0; b < ssd::kHistogramBins; ++b) std::printf(" %9s", ssd::histogram_label(b).c_str());
  std::printf("\n");
  for (const auto& [key, t] : tallies()) {
    std::printf("%-48s %6lld %8.3f %9.3f", key.c_str(), static_cast<long long>(t.cases), t.max_r, t.max_ratio);
    for (auto count : t.histogram) std::printf(" %9lld", static_cast<long long>(count));
    std::printf("\n");
  }
  std::printf("\nlargest ratio per output and its case:\n");
  for (const auto& [key, t] : tallies()) std::printf("%-48s %.3f  %s\n", key.c_str(), t.max_ratio, t.worst_ratio_case.c_str());
  std::printf("\n%-48s %6s %8s\n", "variant op dtype", "cases", "max r");
  for (const auto& [key, v] : by_dtype()) std::printf("%-48s %6lld %8.3f\n", key.c_str(), static_cast<long long>(v.first), v.second);
}

}  // namespace
