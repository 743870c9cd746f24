// Tokens [from, from + count) along axis 1 of a [Bt,T,...] tensor: how the invariance relations cut
// a call along its tokens (internal to the harness).
#pragma once
#include <cstdint>
#include <vector>

#include "ssd/reference/tensor.h"

namespace ssd {

inline Tensor token_range(const Tensor& t, std::int64_t from, std::int64_t count) {
  Shape shape = t.shape();
  const std::int64_t rows = shape[0], T = shape[1], inner = t.numel() / (rows * T);
  shape[1] = count;
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(rows * count * inner));
  for (std::int64_t b = 0; b < rows; ++b) {
    const auto first = t.values().begin() + (b * T + from) * inner;
    values.insert(values.end(), first, first + count * inner);
  }
  return Tensor(t.dtype(), shape, std::move(values));
}

}  // namespace ssd
