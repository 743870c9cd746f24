// Per-element error bounds (docs/tolerance.md): for every oracle output element y*, a bound B
// such that an honest kernel's stored value y satisfies |y - y*| <= B, built from magnitude
// shadows of the computation that produced y*:
//
//   B = rounding (u_out |y*| + u_mid S) + k u_acc phi(n) S + k_exp u_acc phi(n) E + tau_out
//
// S is the sum of |terms| (the computation on absolute values), E the same terms weighted by the
// magnitude of the exponents (decays) they carry, u_mid the sum of the unit roundoffs of the
// intermediate rounding points the contract grants on the path, phi(n) = sqrt(n) + c_phi.
// Elements whose value the contract fixes exactly (masked zeros, L's unit diagonal, untouched
// state rows) carry bound 0 and are flagged exact.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ssd/reference/bounds.h"
#include "ssd/reference/op_spec.h"

namespace ssd {

// Bounds of every output of the problem, from its inputs and the oracle's outputs on them.
Bounds compute_bounds(const Problem& problem, const InputSet& inputs, const Outputs& oracle);

}  // namespace ssd
