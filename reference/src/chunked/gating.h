// The output tail shared by Mamba2Fwd and SSDChunkScanFwd (internal): skip term D*x and the z gate.
#pragma once
#include <cmath>
#include <cstdint>

#include "ssd/reference/tensor.h"

namespace ssd {

// D[h] or D[h,p]; 0 when absent.
inline double skip_coefficient(const Tensor* D, bool d_has_hdim, std::int64_t h, std::int64_t p, std::int64_t P) {
  if (D == nullptr) return 0.0;
  return d_has_hdim ? (*D)[h * P + p] : (*D)[h];
}

// y * silu(z) = y * z * sigmoid(z).
inline double gate(double y, double z) { return y * z / (1.0 + std::exp(-z)); }

}  // namespace ssd
