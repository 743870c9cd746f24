// Judging kernel outputs against the oracle under the per-element bounds.
#include "ssd/reference/verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "ssd/reference/suspicion.h"

namespace ssd {
namespace {

// Worst elements first: exact and non-finite failures, then by r.
void keep_worst(std::vector<ElementReport>& worst, ElementReport e, int count) {
  auto rank = [](const ElementReport& x) { return x.why == "over bound" || x.why.empty() ? x.r : 1e300; };
  worst.push_back(std::move(e));
  std::sort(worst.begin(), worst.end(), [&](const auto& a, const auto& b) { return rank(a) > rank(b); });
  if (static_cast<int>(worst.size()) > count) worst.pop_back();
}

OutputJudgement judge_output(const Output& want, const OutputBound& bound, const Tensor& got, int worst_count) {
  OutputJudgement j;
  j.name = want.name;
  const bool has_sigma = bound.sigma.numel() == want.value.numel();
  double error_squares = 0.0, scale_squares = 0.0;
  for (std::int64_t i = 0; i < want.value.numel(); ++i) {
    if (!want.is_defined(i)) continue;
    ++j.compared;
    const double y = got[i], y_star = want.value[i], b = bound.bound[i];
    ElementReport e{i, "", y, y_star, b, 0.0, ""};
    if (std::isfinite(y_star) && std::isinf(b)) {
      // The contract's fp32 arithmetic overflows here (see make_bound): nothing to demand.
    } else if (std::isfinite(y_star) && std::isinf(y) && std::isinf(round_to(got.dtype(), y > 0 ? y_star + b : y_star - b))) {
      // A value within the bound, on the side of this infinity, lies beyond the storage dtype's
      // range: rounding it overflows to that infinity, as it must. (With a bound wider than |y*|
      // the infinity may have the other sign than y*: f16 out of an honest kernel at -7e4 for an
      // oracle +3e4 under a bound of 1e8.)
      ++j.histogram[0];
    } else if (std::isfinite(y_star) && !std::isfinite(y)) {
      ++j.not_finite;
      e.why = "not finite";
      e.r = std::numeric_limits<double>::infinity();
      j.max_r = e.r;  // shown as r inf: a NaN must never read as max r 0
    } else if (!std::isfinite(y_star)) {
      // The oracle overflowed float64 (A > 0, or a negative dt' growing the state): an fp32
      // evaluation of the same formula overflows at the same intermediate, earlier, and whether
      // that inf then meets a 0 (NaN), an inf of the other sign (NaN) or only finite factors (an
      // inf whose sign follows the order of operations) is the kernel's order, not the contract.
      // A finite value is wrong; which non-finite value is not decided.
      if (std::isfinite(y)) {
        ++j.exact_mismatches;
        e.why = "non-finite value expected";
        e.r = std::numeric_limits<double>::infinity();
      }
    } else if (bound.is_exact(i)) {
      if (y != y_star) {
        ++j.exact_mismatches;
        e.why = "exact value expected";
        e.r = std::numeric_limits<double>::infinity();
      }
    } else {
      e.r = std::fabs(y - y_star) / b;
      j.max_r = std::max(j.max_r, e.r);
      if (has_sigma) {
        ++j.stat_elements;
        error_squares += (y - y_star) * (y - y_star);
        scale_squares += bound.sigma[i] * bound.sigma[i];
      }
      ++j.histogram[static_cast<std::size_t>(histogram_bin(e.r))];
      if (e.r > 1.0) {
        ++j.over_bound;
        e.why = "over bound";
      }
    }
    // A failed element that has no finite r (not finite, exact value missed) makes the output's
    // max r infinite: "max r 0.3" on a line about a NaN would hide the failure.
    if (std::isinf(e.r)) j.max_r = e.r;
    if (!e.why.empty() || (worst_count > 0 && e.r > 0 && (j.worst.size() < static_cast<std::size_t>(worst_count) ||
                                                          e.r > j.worst.back().r)))
      keep_worst(j.worst, std::move(e), worst_count);
  }
  j.error_norm = std::sqrt(error_squares);
  j.scale = std::sqrt(scale_squares);
  // Coordinates only for the elements kept: this loop runs over every element of every case.
  for (ElementReport& e : j.worst) e.index = index_string(want.value.shape(), e.flat);
  return j;
}

bool degenerate(const Output& want) {
  for (std::int64_t i = 0; i < want.value.numel(); ++i)
    if (want.is_defined(i) && want.value[i] != 0.0) return false;
  return true;
}

}  // namespace

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::passed: return "PASSED";
    case Verdict::failed: return "FAILED";
    case Verdict::mistrusted: return "MISTRUSTED";
    case Verdict::skipped: return "SKIPPED";
    case Verdict::invalid: return "INVALID";
    case Verdict::crashed: return "CRASHED";
    case Verdict::timeout: return "TIMEOUT";
    case Verdict::suspect: return "SUSPECT";
    case Verdict::variant: return "VARIANT";
  }
  return "?";
}

bool is_failure(Verdict v) {
  return v == Verdict::failed || v == Verdict::crashed || v == Verdict::timeout || v == Verdict::variant;
}

bool is_alarm(Verdict v) { return is_failure(v) || v == Verdict::suspect; }

double OutputJudgement::ratio() const { return scale > 0 ? error_norm / scale : 0.0; }

bool OutputJudgement::suspect() const { return is_suspect(stat_elements, ratio()); }

int histogram_bin(double r) {
  if (!(r < 1.0)) return r < 2.0 ? kHistogramBins - 2 : kHistogramBins - 1;
  constexpr int kTop = kHistogramBins - 3;  // bin of [1/2, 1)
  if (r < std::ldexp(1.0, -kTop)) return 0;
  return std::ilogb(r) + kTop + 1;  // r in [2^(b-7), 2^(b-6)) has ilogb b - 7
}

std::string histogram_label(int bin) {
  if (bin == kHistogramBins - 1) return ">=2";
  if (bin == kHistogramBins - 2) return "[1,2)";
  if (bin == 0) return "<1/64";
  const int hi = kHistogramBins - 3 - bin;  // r < 2^-hi
  return hi == 0 ? std::string("<1") : "<1/" + std::to_string(1 << hi);
}

double CaseJudgement::max_r() const {
  double r = 0.0;
  for (const auto& o : outputs) r = std::max(r, o.max_r);
  return r;
}

double CaseJudgement::max_ratio() const {
  double r = 0.0;
  for (const auto& o : outputs) r = std::max(r, o.ratio());
  return r;
}

CaseJudgement judge(const Problem& problem, const Outputs& oracle, const Bounds& bounds, const Outputs& got,
                    int worst_count) {
  CaseJudgement j;
  j.problem = to_string(problem);
  bool all_degenerate = true;
  for (const Output& want : oracle.all()) {
    if (!got.has(want.name)) {
      j.verdict = Verdict::failed;
      j.message = "output '" + want.name + "' missing";
      return j;
    }
    const Tensor& value = got.get(want.name).value;
    if (value.shape() != want.value.shape()) {
      j.verdict = Verdict::failed;
      j.message = "output '" + want.name + "' has shape " + shape_string(value.shape()) + ", expected " +
                  shape_string(want.value.shape());
      return j;
    }
    j.outputs.push_back(judge_output(want, bounds.get(want.name), value, worst_count));
    if (j.outputs.back().failed()) j.verdict = Verdict::failed;
    all_degenerate = all_degenerate && degenerate(want);
  }
  if (j.verdict == Verdict::passed && all_degenerate) {
    j.verdict = Verdict::mistrusted;
    j.message = "every oracle output is zero: a pass would prove nothing";
  }
  // The statistical verdict only speaks where the rigorous one would pass: FAILED stays FAILED.
  if (j.verdict == Verdict::passed)
    for (const OutputJudgement& o : j.outputs)
      if (o.suspect()) {
        char why[200];
        std::snprintf(why, sizeof why,
                      "output '%s': ||y - y*|| = %.3g is %.3g x its random-walk scale %.3g over %lld elements "
                      "(SUSPECT above %.3g)",
                      o.name.c_str(), o.error_norm, o.ratio(), o.scale, static_cast<long long>(o.stat_elements),
                      kSuspicion.threshold);
        j.verdict = Verdict::suspect;
        j.message.append(j.message.empty() ? "" : "\n  ").append(why);
      }
  return j;
}

std::string describe(const CaseJudgement& j) {
  if (j.verdict == Verdict::crashed || j.verdict == Verdict::timeout) {
    // No outputs to show: the call never returned.
    std::string s = std::string(verdict_name(j.verdict)) + "    " + j.problem;
    if (!j.message.empty()) s.append("\n  ").append(j.message);
    return s.append("\n  ").append(j.repro());
  }
  char head[64];
  std::snprintf(head, sizeof head, "%-10s max r %.3g", std::string(verdict_name(j.verdict)).c_str(), j.max_r());
  std::string s = head;
  s.append(" (");
  for (std::size_t i = 0; i < j.outputs.size(); ++i) {
    char part[96];
    std::snprintf(part, sizeof part, "%s%s %.3g", i ? ", " : "", j.outputs[i].name.c_str(), j.outputs[i].max_r);
    s.append(part);
  }
  s.append(")  ").append(j.problem);
  if (!j.message.empty()) s.append("\n  ").append(j.message);
  if (j.verdict == Verdict::suspect || j.verdict == Verdict::variant) s.append("\n  ").append(j.repro());
  if (j.verdict == Verdict::failed) {
    for (const auto& o : j.outputs) {
      if (!o.failed()) continue;
      char line[160];
      std::snprintf(line, sizeof line, "\n  %s: %lld of %lld elements over bound, %lld exact mismatches, %lld not finite",
                    o.name.c_str(), static_cast<long long>(o.over_bound), static_cast<long long>(o.compared),
                    static_cast<long long>(o.exact_mismatches), static_cast<long long>(o.not_finite));
      s.append(line);
      for (const auto& e : o.worst) {
        char row[256];
        std::snprintf(row, sizeof row, "\n    %s%s got %.9g expected %.9g bound %.3g r %.3g%s%s", o.name.c_str(),
                      e.index.c_str(), e.got, e.expected, e.bound, e.r, e.why.empty() ? "" : "  ", e.why.c_str());
        s.append(row);
      }
    }
    s.append("\n  ").append(j.repro());
  }
  return s;
}

}  // namespace ssd
