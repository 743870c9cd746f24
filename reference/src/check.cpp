// Argument checks shared by the oracle entry points.
#include "check.h"

namespace ssd::check {

const Tensor& required(const char* op, const char* name, const Tensor* t) {
  if (t == nullptr) throw ArgumentError(op, name, "required input is missing");
  return *t;
}

void shape(const char* op, const char* name, const Tensor& t, const Shape& expected, const char* dims) {
  if (t.shape() != expected)
    throw ArgumentError(op, name, "shape " + shape_string(t.shape()) + ", expected " + dims + " = " +
                                      shape_string(expected));
}

void float_dtype(const char* op, const char* name, const Tensor& t) {
  if (!is_float(t.dtype()))
    throw ArgumentError(op, name, "dtype " + std::string(dtype_name(t.dtype())) +
                                      ", expected a floating-point dtype (f32, f16, bf16)");
}

void dtype_in(const char* op, const char* name, const Tensor& t, std::initializer_list<DType> allowed) {
  for (DType d : allowed)
    if (t.dtype() == d) return;
  std::string list;
  for (DType d : allowed) {
    if (!list.empty()) list.append(", ");
    list.append(dtype_name(d));
  }
  throw ArgumentError(op, name, "dtype " + std::string(dtype_name(t.dtype())) + ", expected one of " + list);
}

void rank(const char* op, const char* name, const Tensor& t, int expected_rank, const char* dims) {
  if (t.rank() != expected_rank)
    throw ArgumentError(op, name, "rank " + std::to_string(t.rank()) + " (shape " + shape_string(t.shape()) +
                                      "), expected rank " + std::to_string(expected_rank) + " " + dims);
}

void positive(const char* op, const char* name, std::int64_t value) {
  if (value <= 0) throw ArgumentError(op, name, "must be positive, got " + std::to_string(value));
}

void groups_divide_heads(const char* op, const char* group_argument, std::int64_t heads, std::int64_t groups) {
  if (groups <= 0 || heads % groups != 0)
    throw ArgumentError(op, group_argument, "ngroups G = " + std::to_string(groups) +
                                                " must divide nheads H = " + std::to_string(heads));
}

}  // namespace ssd::check
