// Judging a kernel's outputs against the oracle under the per-element bounds: the verdict,
// the utilization r = |y - y*| / bound per element (max and histogram per output), the worst
// elements, exact-structure checks, and the repro line.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ssd/reference/tolerance.h"

namespace ssd {

// CRASHED: the kernel call killed its process (a signal, or exit/_exit inside the kernel);
// TIMEOUT: the call outlived its time limit. Both come from an isolated run (ssd/harness/case_checker.h).
// SUSPECT: every element within its bound, but an output's normwise error is far above an honest
// kernel's random-walk rounding error (ssd/reference/suspicion.h); only a case that would pass.
// VARIANT: within every bound, but a row's outputs differ bit for bit between the row in its batch
// and the row alone, or a call's first tokens between the whole call and the call cut to them
// (packing and prefix invariance of the decode step, ssd/harness/invariance.h).
enum class Verdict { passed, failed, mistrusted, skipped, invalid, crashed, timeout, suspect, variant };
std::string_view verdict_name(Verdict v);  // "PASSED", "FAILED", ..., "CRASHED", "TIMEOUT", "SUSPECT", "VARIANT"
// The verdicts that mean the kernel is wrong: FAILED, CRASHED, TIMEOUT, VARIANT. SUSPECT is not among them
// (no element is proven wrong, so shrinking and dumps leave it alone); campaigns count it apart and
// exit 1 on it all the same (is_alarm).
bool is_failure(Verdict v);
// A verdict that makes a campaign or check exit 1: a failure or SUSPECT.
bool is_alarm(Verdict v);

// Utilization histogram edges: [0, 1/64), [1/64, 1/32), ..., [1/2, 1), [1, 2), [2, inf) and exact
// mismatches counted apart. Bin i < 7 holds r in [2^(i-7), 2^(i-6)) (bin 0 from 0).
inline constexpr int kHistogramBins = 9;
int histogram_bin(double r);
std::string histogram_label(int bin);

struct ElementReport {
  std::int64_t flat = 0;
  std::string index;  // "[b,t,h,p]" coordinates
  double got = 0, expected = 0, bound = 0, r = 0;
  std::string why;    // "over bound", "exact value expected", "not finite"
};

struct OutputJudgement {
  std::string name;
  std::int64_t compared = 0;        // defined elements
  std::int64_t over_bound = 0;      // r > 1
  std::int64_t exact_mismatches = 0;
  std::int64_t not_finite = 0;      // NaN/Inf where the oracle is finite
  // Over the compared elements; infinity once an element is not finite or misses an exact value,
  // so a report line never shows a small r for an output that failed that way.
  double max_r = 0.0;
  std::array<std::int64_t, kHistogramBins> histogram{};
  std::vector<ElementReport> worst;  // largest r first (exact and non-finite failures first)
  // The statistical verdict's terms over the elements with a finite, nonzero bound and a sigma:
  // ||y - y*||_2 and sqrt(sum sigma_i^2) (ssd/reference/suspicion.h).
  std::int64_t stat_elements = 0;
  double error_norm = 0.0, scale = 0.0;
  double ratio() const;    // error_norm / scale; 0 without a scale
  bool suspect() const;    // enough elements and ratio above the threshold
  bool failed() const { return over_bound > 0 || exact_mismatches > 0 || not_finite > 0; }
};

struct CaseJudgement {
  Verdict verdict = Verdict::passed;
  std::string problem;  // the problem string (the repro)
  std::string message;  // why (MISTRUSTED, SKIPPED, INVALID, CRASHED, TIMEOUT; memory findings), else empty
  std::vector<OutputJudgement> outputs;
  double max_r() const;
  double max_ratio() const;  // the largest statistical ratio of any output
  std::string repro() const { return "repro: " + problem; }
};

// Compares `got` (each output a Tensor in its storage dtype, values as doubles) with the oracle.
// MISTRUSTED when the oracle output is degenerate (all defined elements zero) so a pass would
// prove nothing; a missing or mis-shaped output is FAILED.
CaseJudgement judge(const Problem& problem, const Outputs& oracle, const Bounds& bounds, const Outputs& got,
                    int worst_count = 5);

// One line "PASSED  max r 0.12 (out 0.12, final_states 0.03)  <problem>"; for FAILED also the worst
// elements of each failing output and the repro line; CRASHED and TIMEOUT print the verdict, the
// problem, what happened (signal, exit status or time) and the repro line.
std::string describe(const CaseJudgement& j);

}  // namespace ssd
