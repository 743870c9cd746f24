// compute_bounds: the op's own bound builder (OpSpec::bounds) after the contract check.
#include "ssd/reference/errors.h"
#include "ssd/reference/tolerance.h"

#include "common.h"

namespace ssd {

Bounds compute_bounds(const Problem& problem, const InputSet& inputs, const Outputs& oracle) {
  if (auto why = invalid_reason(problem)) throw ArgumentError("problem", *why);
  return op_spec(problem.op).bounds(problem, inputs, oracle);
}

Bounds compute_bounds_with_terms(const Problem& problem, const InputSet& inputs, const Outputs& oracle,
                                 std::vector<BoundTermShares>& terms) {
  tolerance::TermCollector collect(terms);
  return compute_bounds(problem, inputs, oracle);
}

}  // namespace ssd
