// Normwise agreement of two float64 evaluations.
#include "ssd/reference/agreement.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace ssd {

double Agreement::relative() const {
  if (!same_shape || !same_defined || !finite) return std::numeric_limits<double>::infinity();
  if (max_abs_difference == 0.0) return 0.0;
  if (max_abs_reference == 0.0) return std::numeric_limits<double>::infinity();
  return max_abs_difference / max_abs_reference;
}

std::string Agreement::describe() const {
  if (!same_shape) return "shapes differ";
  if (!same_defined) return "defined elements differ";
  if (!finite) return "non-finite values";
  char text[160];
  std::snprintf(text, sizeof text, "rel %.1e (abs %.1e of %.1e, %lld elements)", relative(), max_abs_difference,
                max_abs_reference, static_cast<long long>(compared));
  return text;
}

Agreement agreement(const Output& candidate, const Output& reference) {
  Agreement a;
  if (candidate.value.shape() != reference.value.shape()) {
    a.same_shape = false;
    return a;
  }
  for (std::int64_t i = 0; i < reference.value.numel(); ++i) {
    const bool defined = reference.is_defined(i);
    if (defined != candidate.is_defined(i)) a.same_defined = false;
    if (!defined) continue;
    const double got = candidate.value[i], want = reference.value[i];
    if (!std::isfinite(got) || !std::isfinite(want)) {
      a.finite = false;
      continue;
    }
    ++a.compared;
    const double diff = std::fabs(got - want);
    if (diff > a.max_abs_difference) {
      a.max_abs_difference = diff;
      a.worst = i;
    }
    a.max_abs_reference = std::max(a.max_abs_reference, std::fabs(want));
  }
  return a;
}

}  // namespace ssd
