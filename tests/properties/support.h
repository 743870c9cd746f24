// Helpers of the property tests: token slicing, group expansion, and agreement assertions.
#pragma once
#include <rapidcheck.h>

#include <string>

#include "ssd/reference/agreement.h"
#include "ssd/reference/outputs.h"
#include "ssd/reference/tensor.h"

namespace ssd_test {

// Normwise agreement demanded between two float64 evaluations of the same math.
inline constexpr double kFloat64Agreement = 1e-12;

// Tokens [begin, end) of a [Bt,S,...] tensor (axis 1).
ssd::Tensor slice_tokens(const ssd::Tensor& t, std::int64_t begin, std::int64_t end);
// Writes `part` into tokens [begin, begin + part.S) of `whole` (both [Bt,S,...]), mask included.
void place_tokens(ssd::Output& whole, const ssd::Output& part, std::int64_t begin);
// [Bt,S,G,N] -> [Bt,S,H,N] with head h reading group h / (H/G).
ssd::Tensor repeat_groups(const ssd::Tensor& t, std::int64_t heads);

// Fails the property (naming the output and the figures) unless the outputs agree to `tolerance`.
void require_agreement(const ssd::Output& candidate, const ssd::Output& reference, double tolerance,
                       const std::string& what);
void require_all_agree(const ssd::Outputs& candidate, const ssd::Outputs& reference, double tolerance,
                       const std::string& what);

}  // namespace ssd_test
