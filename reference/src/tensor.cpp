// Tensor storage and indexing.
#include "ssd/reference/tensor.h"

#include <cassert>
#include <cmath>

#include "ssd/reference/errors.h"

namespace ssd {

std::string shape_string(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s.push_back(',');
    s.append(std::to_string(shape[i]));
  }
  s.push_back(']');
  return s;
}

std::int64_t element_count(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  for (auto d : shape_)
    if (d < 0) throw ArgumentError("shape", "negative extent in " + shape_string(shape_));
  values_.assign(static_cast<std::size_t>(element_count(shape_)), 0.0);
}

Tensor::Tensor(DType dtype, Shape shape, std::vector<double> values) : Tensor(dtype, std::move(shape)) {
  if (static_cast<std::int64_t>(values.size()) != numel())
    throw ArgumentError("values", std::to_string(values.size()) + " values for shape " +
                                      shape_string(shape_));
  values_ = std::move(values);
  for (auto& v : values_) v = round_to(dtype_, v);
}

std::int64_t Tensor::dim(int axis) const {
  const int r = rank();
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r)
    throw ArgumentError("axis", std::to_string(axis) + " out of range for rank " + std::to_string(r));
  return shape_[static_cast<std::size_t>(axis)];
}

void Tensor::set(std::int64_t flat, double value) {
  values_[static_cast<std::size_t>(flat)] = round_to(dtype_, value);
}

std::int64_t Tensor::offset(std::initializer_list<std::int64_t> index) const {
  assert(static_cast<int>(index.size()) == rank());
  std::int64_t off = 0;
  std::size_t axis = 0;
  for (auto i : index) {
    assert(i >= 0 && i < shape_[axis]);
    off = off * shape_[axis++] + i;
  }
  return off;
}

Tensor Tensor::reshaped(Shape shape) const {
  if (element_count(shape) != numel())
    throw ArgumentError("shape", "cannot reshape " + shape_string(shape_) + " to " + shape_string(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::row(std::int64_t i) const {
  if (rank() == 0 || i < 0 || i >= shape_[0])
    throw ArgumentError("row", std::to_string(i) + " is not a row of a tensor of shape " + shape_string(shape_));
  return rows(i, 1);
}

Tensor Tensor::rows(std::int64_t first, std::int64_t count) const {
  if (rank() == 0 || first < 0 || count < 0 || first > shape_[0] - count)
    throw ArgumentError("rows", std::to_string(first) + " .. " + std::to_string(first + count - 1) +
                                    " are not rows of a tensor of shape " + shape_string(shape_));
  Shape shape = shape_;
  shape[0] = count;
  const std::int64_t per_row = shape_[0] > 0 ? numel() / shape_[0] : 0;
  const auto begin = values_.begin() + first * per_row;
  return Tensor(dtype_, std::move(shape), std::vector<double>(begin, begin + count * per_row));
}

std::string index_string(const Shape& shape, std::int64_t flat) {
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t axis = shape.size(); axis-- > 0;) {
    index[axis] = shape[axis] > 0 ? flat % shape[axis] : 0;
    flat = shape[axis] > 0 ? flat / shape[axis] : 0;
  }
  std::string text = "[";
  for (std::size_t i = 0; i < index.size(); ++i) text += (i ? "," : "") + std::to_string(index[i]);
  return text + "]";
}

}  // namespace ssd
