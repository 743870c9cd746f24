// The normwise statistic of the SUSPECT verdict.
#include "ssd/reference/suspicion.h"

#include <cmath>

namespace ssd {

double element_sigma(double output, double intermediate, double floor, double accumulation, double exponent) {
  return std::sqrt(output * output + intermediate * intermediate + floor * floor + accumulation * accumulation +
                   exponent * exponent);
}

double normwise_ratio(double error_square_sum, double scale_square_sum) {
  return scale_square_sum > 0 ? std::sqrt(error_square_sum / scale_square_sum) : 0.0;
}

bool is_suspect(std::int64_t elements, double ratio, const SuspicionConstants& c) {
  return elements >= c.min_elements && ratio > c.threshold;
}

}  // namespace ssd
