// The normwise statistic of the SUSPECT verdict.
#include "ssd/reference/suspicion.h"

#include <cmath>

namespace ssd {

double element_sigma(double u_out_y, double u_mid_S, double floor_F, double acc_S, double exp_E) {
  return std::sqrt(u_out_y * u_out_y + u_mid_S * u_mid_S + floor_F * floor_F + acc_S * acc_S + exp_E * exp_E);
}

double normwise_ratio(double error_square_sum, double scale_square_sum) {
  return scale_square_sum > 0 ? std::sqrt(error_square_sum / scale_square_sum) : 0.0;
}

bool is_suspect(std::int64_t elements, double ratio, const SuspicionConstants& c) {
  return elements >= c.min_elements && ratio > c.threshold;
}

}  // namespace ssd
