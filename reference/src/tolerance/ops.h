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
// Mamba2Fwd's exponent charge per step of the dA cumsum: |A| (|dt'| + scale x dt_softplus_error),
// where `scale` = softplus_charge_scale(p, packed) turns the exponent term's k_exp u_acc phi(n) into
// at least u_acc on the softplus part: that error is bounded per step and adds up linearly, so it
// takes no accumulation factor (docs/tolerance.md, "Softplus allowance").
double softplus_charge_scale(const Problem& p, bool packed);
double dt_step_charge(const Problem& p, double a, double raw, double bias, double dt, double scale);
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
  Tensor diagonal;      // the diagonal (within-chunk) terms of without_skip alone
};
// abs_args: every linear input replaced by its absolute value (z ignored). charge: per chunk
// position, the error magnitude of the cumsum the decays are computed from (|dA| when dA is an
// input; more when the op computes it, see mamba2). exponent_states: the exponent charge already
// carried by the entering states (nullptr when they are plain inputs).
ScanShadow chunk_scan_shadow(const Problem& p, const ChunkScanArgs& abs_args, const Tensor& charge,
                             const Tensor* exponent_states);
// Adds the bounds of "out" (and "out_x" with z) from y's shadow.
// `intermediate` and `carried` (before the gate; optional) as in BoundTerms.
void add_gated_bounds(const Problem& p, const Outputs& oracle, const Tensor* z, const ScanShadow& s, double u_mid,
                      std::int64_t n, Bounds& bounds, double floor_unit, const Tensor* intermediate = nullptr,
                      const Tensor* carried = nullptr);
// Per-path intermediate charge of a chunk scan: u_diagonal on the diagonal terms, u_carried on the
// carried-in ones (without_skip - diagonal); D x rounds nothing.
Tensor scan_path_charge(const ScanShadow& s, double u_diagonal, double u_carried);

}  // namespace ssd::tolerance
