// A dense row-major tensor whose values are held as doubles, each exactly representable in the
// tensor's dtype: the "already-rounded inputs" the oracle computes on.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "ssd/reference/dtype.h"

namespace ssd {

using Shape = std::vector<std::int64_t>;
std::string shape_string(const Shape& shape);  // "[2,10,4,8]"
// The coordinates of a flat row-major index, e.g. "[1,0,3,2]": how every report names an element.
std::string index_string(const Shape& shape, std::int64_t flat);
std::int64_t element_count(const Shape& shape);

class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, Shape shape);  // all zeros
  Tensor(DType dtype, Shape shape, std::vector<double> values);  // values are rounded to dtype

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  std::int64_t dim(int axis) const;  // negative axes count from the end
  std::int64_t numel() const { return static_cast<std::int64_t>(values_.size()); }
  bool empty() const { return values_.empty(); }

  // Raw access. Writers through data() must store representable values (f64 tensors accept any).
  double* data() { return values_.data(); }
  const double* data() const { return values_.data(); }
  const std::vector<double>& values() const { return values_; }

  double operator[](std::int64_t flat) const { return values_[static_cast<std::size_t>(flat)]; }
  // Stores `value` rounded to the tensor's dtype.
  void set(std::int64_t flat, double value);

  // Row-major flat offset of a full index (checked only in debug builds).
  std::int64_t offset(std::initializer_list<std::int64_t> index) const;
  double at(std::initializer_list<std::int64_t> index) const { return values_[offset(index)]; }

  // Same values, new shape with the same element count (throws otherwise).
  Tensor reshaped(Shape shape) const;
  // Index `i` of axis 0 as a tensor of one such row, shape [1, ...] (throws outside 0..dim(0)-1).
  Tensor row(std::int64_t i) const;
  // Indices first .. first + count - 1 of axis 0, shape [count, ...] (throws past dim(0)).
  Tensor rows(std::int64_t first, std::int64_t count) const;

 private:
  DType dtype_ = DType::f64;
  Shape shape_;
  std::vector<double> values_;
};

}  // namespace ssd
