// Per-op bound builders and the shadow pieces shared between them (internal to ssd_reference).
#pragma once
#include <vector>

#include "common.h"
#include "ssd/reference/oracle.h"

namespace ssd::tolerance {

Bounds mamba2_bounds(const Problem& p, const InputSet& in, const Outputs& oracle);
// What a sequence of a packed batch computed on the batch's chunk grid rather than its own adds:
// one chunk more on every reduction, and exponents read from cumsums that start up to a chunk
// earlier (for the first chunk, in the tokens before the sequence: their charge per head).
struct GridSlack {
  std::vector<double> leading_charge;  // [H]
};
// Mamba2Fwd on rows of its own (no packed batch); `slack` for a sequence cut out of one.
Bounds mamba2_row_bounds(const Problem& p, const InputSet& in, const Outputs& oracle, const GridSlack* slack);
// A packed batch (+varlen), one sequence at a time (mamba2_varlen.cpp).
Bounds mamba2_varlen_bounds(const Problem& p, const InputSet& in, const Outputs& oracle);
Bounds chunk_cumsum_bounds(const Problem& p, const InputSet& in, const Outputs& oracle);
Bounds chunk_coupling_bounds(const Problem& p, const InputSet& in, const Outputs& oracle);
Bounds chunk_state_bounds(const Problem& p, const InputSet& in, const Outputs& oracle);
Bounds state_passing_bounds(const Problem& p, const InputSet& in, const Outputs& oracle);
Bounds chunk_scan_bounds(const Problem& p, const InputSet& in, const Outputs& oracle);
Bounds recurrent_bounds(const Problem& p, const InputSet& in, const Outputs& oracle);
Bounds discretize_segsum_bounds(const Problem& p, const InputSet& in, const Outputs& oracle);

// Shadow of chunk_scan's y (before the gate), shared with Mamba2Fwd.
struct ScanShadow {
  Tensor without_skip;  // carried-in and diagonal terms
  Tensor with_skip;     // plus |D x|
  Tensor exponent;      // E of the terms without D
  Tensor floor;         // F: what the subnormal floor of the intermediate roundings multiplies
};
// abs_args: every linear input replaced by its absolute value (z ignored). charge: per chunk
// position, the error magnitude of the cumsum the decays are computed from (|dA| when dA is an
// input; more when the op computes it, see mamba2). exponent_states: the exponent charge already
// carried by the entering states (nullptr when they are plain inputs).
ScanShadow chunk_scan_shadow(const Problem& p, const ChunkScanArgs& abs_args, const Tensor& charge,
                             const Tensor* exponent_states);
// Adds the bounds of "out" (and "out_x" with z) from y's shadow.
void add_gated_bounds(const Problem& p, const Outputs& oracle, const Tensor* z, const ScanShadow& s, double u_mid,
                      std::int64_t n, Bounds& bounds, double floor_unit);

}  // namespace ssd::tolerance
