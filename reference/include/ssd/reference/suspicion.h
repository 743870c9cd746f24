// The statistical verdict SUSPECT (docs/tolerance.md, "Statistical verdict"): its constants and
// the normwise statistic, kept apart from the rigorous per-element bounds.
//
// An honest kernel's rounding errors are many small, mostly independent terms: over all compared
// elements of an output, ||y - y*||_2 stays near the quadrature sum of the per-element scales
//   sigma_i = sqrt((u_out y*)^2 + (u_mid v)^2 + (f F)^2 + tau_out^2 + (u_acc phi v)^2 + (u_acc phi E v/S)^2),
//   v = max(|y*|, S / sqrt(n)),
// the bound's own terms without its safety factors, summed as a random walk rather than added, and
// charged on v, the size of the values the kernel actually rounds (the result, or where it cancels
// the random-walk size of n terms whose magnitudes sum to S), not on the shadow S itself.
// A kernel that rounds more than the contract grants (bf16 states, a bf16 accumulator, a bf16
// softplus) can keep every element inside the rigorous bound while its error norm grows past it.
// A correctly rounded output has |y_i - y*_i| <= u_out |y*_i| <= sigma_i, so its ratio is at most 1.
#pragma once
#include <cstdint>

namespace ssd {

// Calibrated against the honest emulations (tests/calibration/calibration_test.cpp);
// they live here and nowhere else.
struct SuspicionConstants {
  // An output whose ||y - y*||_2 / sqrt(sum sigma_i^2) exceeds this is SUSPECT. A correctly rounded
  // output cannot pass 1; the honest emulations reach 1.12 (a long fp32 cumsum of same-sign steps,
  // whose errors add up rather than walk: docs/tolerance.md), so 1.5 leaves a third to spare.
  double threshold = 1.5;
  // Fewer elements in the statistic: no statistical verdict (a few elements are no random walk).
  std::int64_t min_elements = 64;
};
inline constexpr SuspicionConstants kSuspicion{};

// sigma_i from its five terms (the formula above; the floor term holds f F and tau_out together).
double element_sigma(double output, double intermediate, double floor, double accumulation, double exponent);
// ||e||_2 / scale from the two sums of squares; 0 when the scale is 0.
double normwise_ratio(double error_square_sum, double scale_square_sum);
// Whether an output with these statistics is SUSPECT under `c`.
bool is_suspect(std::int64_t elements, double ratio, const SuspicionConstants& c = kSuspicion);

}  // namespace ssd
