// compute_bounds: the per-op bound builders behind one entry point.
#include "ops.h"
#include "ssd/errors.h"

namespace ssd {

Bounds compute_bounds(const Problem& problem, const InputSet& inputs, const Outputs& oracle) {
  if (auto why = invalid_reason(problem)) throw ArgumentError("problem", *why);
  switch (problem.op) {
    case Op::mamba2: return tolerance::mamba2_bounds(problem, inputs, oracle);
    case Op::chunk_cumsum: return tolerance::chunk_cumsum_bounds(problem, inputs, oracle);
    case Op::chunk_coupling: return tolerance::chunk_coupling_bounds(problem, inputs, oracle);
    case Op::chunk_state: return tolerance::chunk_state_bounds(problem, inputs, oracle);
    case Op::state_passing: return tolerance::state_passing_bounds(problem, inputs, oracle);
    case Op::chunk_scan: return tolerance::chunk_scan_bounds(problem, inputs, oracle);
    case Op::recurrent: return tolerance::recurrent_bounds(problem, inputs, oracle);
    case Op::discretize_segsum: return tolerance::discretize_segsum_bounds(problem, inputs, oracle);
  }
  throw ArgumentError("problem", "unknown op");
}

}  // namespace ssd
