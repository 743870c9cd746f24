// The ground truth of a case and the one judgement against it: the oracle's outputs (chunked form),
// their per-element bounds, and the verdict on a kernel's outputs. Every front end (ssd-fuzz, the
// golden tools, the GPU tests, the C API) goes through these, so the sequence exists once.
#pragma once
#include "ssd/reference/bounds.h"
#include "ssd/reference/op_spec.h"
#include "ssd/reference/verdict.h"

namespace ssd {

struct Truth {
  Outputs oracle;
  Bounds bounds;
};

// Oracle and bounds of a valid problem on its inputs (ArgumentError naming 'problem' when invalid).
Truth compute_truth(const Problem& problem, const InputSet& inputs);

// The verdict on `got` (each output in its storage dtype, values as doubles) for the problem's inputs.
CaseJudgement judge_against_oracle(const Problem& problem, const InputSet& inputs, const Outputs& got,
                                   int worst_count = 5);

}  // namespace ssd
