// Copies of parts of a tensor (internal to ssd_reference): the pieces a packed batch is cut into.
#pragma once
#include <algorithm>
#include <cstdint>

#include "ssd/reference/tensor.h"

namespace ssd {

// Tokens [start, start + length) of a token-major [1,S,...] tensor, as a [1,length,...] tensor.
inline Tensor token_slice(const Tensor& t, std::int64_t start, std::int64_t length) {
  Shape shape = t.shape();
  const std::int64_t inner = t.numel() / shape[1];
  shape[1] = length;
  Tensor slice(t.dtype(), shape);
  std::copy_n(t.data() + start * inner, length * inner, slice.data());
  return slice;
}

// Row `row` of a [R,...] tensor as a [1,...] tensor.
inline Tensor row_slice(const Tensor& t, std::int64_t row) {
  Shape shape = t.shape();
  const std::int64_t inner = t.numel() / shape[0];
  shape[0] = 1;
  Tensor slice(t.dtype(), shape);
  std::copy_n(t.data() + row * inner, inner, slice.data());
  return slice;
}

}  // namespace ssd
