// The statistical verdict SUSPECT (docs/tolerance.md, "Statistical verdict"): its constants and
// the normwise statistic, kept apart from the rigorous per-element bounds.
//
// An honest kernel's rounding errors are many small, mostly independent terms: over all compared
// elements of an output, ||y - y*||_2 stays near the quadrature sum of the per-element scales
//   sigma_i = sqrt((u_out y*)^2 + (u_mid S)^2 + (f F)^2 + (u_acc phi S)^2 + (u_acc phi E)^2),
// the bound's own terms without its safety factors, summed as a random walk rather than added.
// A kernel that rounds more than the contract grants (bf16 states, TF32 dots, a bf16 accumulator)
// can keep every element inside the rigorous bound while its error norm grows far past that scale.
#pragma once
#include <cstdint>

namespace ssd {

// Calibrated against the honest emulations (tests/calibration/suspicion_calibration_test.cpp);
// they live here and nowhere else.
struct SuspicionConstants {
  // An output whose ||y - y*||_2 / sqrt(sum sigma_i^2) exceeds this is SUSPECT.
  double threshold = 1.0;
  // Fewer elements in the statistic: no statistical verdict (a few elements are no random walk).
  std::int64_t min_elements = 64;
};
inline constexpr SuspicionConstants kSuspicion{};

// sigma_i from the bound's terms (the quantities of make_bound, see the formula above).
double element_sigma(double u_out_y, double u_mid_S, double floor_F, double acc_S, double exp_E);
// ||e||_2 / scale from the two sums of squares; 0 when the scale is 0.
double normwise_ratio(double error_square_sum, double scale_square_sum);
// Whether an output with these statistics is SUSPECT under `c`.
bool is_suspect(std::int64_t elements, double ratio, const SuspicionConstants& c = kSuspicion);

}  // namespace ssd
