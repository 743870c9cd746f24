// Oracle, bounds and judgement of one case.
#include "ssd/reference/truth.h"

#include "ssd/reference/tolerance.h"

namespace ssd {

Truth compute_truth(const Problem& problem, const InputSet& inputs) {
  Truth t;
  t.oracle = op_spec(problem.op).chunked(problem, inputs);
  t.bounds = compute_bounds(problem, inputs, t.oracle);
  return t;
}

CaseJudgement judge_against_oracle(const Problem& problem, const InputSet& inputs, const Outputs& got, int worst_count) {
  const Truth truth = compute_truth(problem, inputs);
  return judge(problem, truth.oracle, truth.bounds, got, worst_count);
}

}  // namespace ssd
