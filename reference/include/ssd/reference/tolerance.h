// Per-element error bounds (docs/tolerance.md): for every oracle output element y*, a bound B
// such that an honest kernel's stored value y satisfies |y - y*| <= B, built from magnitude
// shadows of the computation that produced y*:
//
//   B = rounding (u_out |y*| + u_mid S) + k u_acc phi(n) S + k_exp u_acc phi(n) E + C + tau_out
//
// S is the sum of |terms| (the computation on absolute values), E the same terms weighted by the
// magnitude of the exponents (decays) they carry, u_mid the sum of the unit roundoffs of the
// intermediate rounding points the contract grants on the path (per path where the op knows which
// point rounds what), C the errors carried in from values the op computes and bounds itself
// (softplus's on dt'), phi(n) = sqrt(n) + c_phi.
// Elements whose value the contract fixes exactly (masked zeros, L's unit diagonal, untouched
// state rows) carry bound 0 and are flagged exact.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ssd/reference/bounds.h"
#include "ssd/reference/op_spec.h"

namespace ssd {

// Bounds of every output of the problem, from its inputs and the oracle's outputs on them.
Bounds compute_bounds(const Problem& problem, const InputSet& inputs, const Outputs& oracle);

// What each term of the bound formula contributes, per output (docs/tolerance.md, "Which term
// dominates"): over the elements with a finite, nonzero bound, the sum of term / bound and the
// number of elements where the term is the largest. Terms: the final rounding (rounding u_out |y*|),
// the intermediate roundings (rounding u_mid S, or the per-path charge where an op gives one), the
// subnormal floor (rounding f F), the accumulation (k u_acc phi(n) S), the exponent charge
// (k_exp u_acc phi(n) E), the errors carried in from values the op computed itself (their own
// bounds, propagated: chunk_cumsum's dt' into dA_cumsum, the softplus allowance in the exponents)
// and tau_out.
inline constexpr std::array<const char*, 7> kBoundTermNames{"final rounding", "intermediate", "subnormal floor",
                                                            "accumulation",   "exponent",     "carried",
                                                            "tau_out"};
struct BoundTermShares {
  std::string output;
  std::int64_t elements = 0;
  std::array<double, kBoundTermNames.size()> share_sum{};
  std::array<std::int64_t, kBoundTermNames.size()> dominant{};
};
// compute_bounds, reporting the terms of every output bound it builds (a packed batch's sequences
// added together under the output's name).
Bounds compute_bounds_with_terms(const Problem& problem, const InputSet& inputs, const Outputs& oracle,
                                 std::vector<BoundTermShares>& terms);

}  // namespace ssd
