// How closely two float64 evaluations of the same output agree (the two oracle forms, or an
// op against a composition of others). Not the kernel verdict: that uses per-element bounds.
#pragma once
#include <cstdint>
#include <string>

#include "ssd/reference/outputs.h"

namespace ssd {

struct Agreement {
  double max_abs_difference = 0.0;  // over elements both sides define
  double max_abs_reference = 0.0;   // largest |reference| over the same elements
  std::int64_t compared = 0;        // elements compared
  std::int64_t worst = -1;          // flat index of the largest difference
  bool same_shape = true;
  bool same_defined = true;         // both sides define the same elements
  bool finite = true;               // no NaN or Inf on either side where defined

  // max |a - b| / max |b| (normwise); 0 when both are all zero; infinite when not comparable.
  double relative() const;
  std::string describe() const;  // "rel 3.1e-16 (abs 2.0e-15 of 6.4e+00, 1200 elements)"
};

Agreement agreement(const Output& candidate, const Output& reference);

}  // namespace ssd
