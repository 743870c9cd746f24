// Argument checks shared by the oracle entry points (internal to ssd_reference).
#pragma once
#include <initializer_list>
#include <string>

#include "ssd/reference/errors.h"
#include "ssd/reference/tensor.h"

namespace ssd::check {

// A required input: throws "<op>: argument '<name>': required input is missing".
const Tensor& required(const char* op, const char* name, const Tensor* t);

// Exact shape; the message shows the expected shape with the names of its dims, e.g.
// "shape [2,10,4], expected [Bt,S,H] = [2,10,5]".
void shape(const char* op, const char* name, const Tensor& t, const Shape& expected, const char* dims);

// A floating-point storage dtype (f32, f16, bf16; f64 also accepted for oracle-internal use).
void float_dtype(const char* op, const char* name, const Tensor& t);
// One of the listed dtypes.
void dtype_in(const char* op, const char* name, const Tensor& t, std::initializer_list<DType> allowed);

// Rank check before dims are read from a tensor.
void rank(const char* op, const char* name, const Tensor& t, int expected_rank, const char* dims);

// A positive size (S, H, chunk_size, ...), named.
void positive(const char* op, const char* name, std::int64_t value);

// H % G == 0.
void groups_divide_heads(const char* op, const char* group_argument, std::int64_t heads, std::int64_t groups);

}  // namespace ssd::check
