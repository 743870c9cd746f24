// Converting between the oracle's Tensors and kernel-ABI data: dtype codes, native little-endian
// bytes (f32, f16 and bf16 bit patterns, i32), and host-memory views (what a host kernel library
// such as the fp32 emulation receives).
#pragma once
#include <cstdint>
#include <vector>

#include "ssd/kernel_abi.h"
#include "ssd/reference/tensor.h"

namespace ssd {

ssd_dtype abi_dtype(DType t);     // throws ArgumentError for f64
DType from_abi_dtype(int32_t t);  // throws ArgumentError for an unknown code
std::size_t dtype_bytes(DType t);

// Native little-endian bytes of a tensor's values, and back.
std::vector<std::uint8_t> encode(const Tensor& t);
Tensor decode(DType dtype, const Shape& shape, const void* bytes);

// A tensor from a host buffer described by an ssd_tensor of any strides (gathered with int64
// offsets: padded pitches, stride 0, negative strides, offsets past 2^31 elements).
Tensor tensor_from_view(const ssd_tensor& view, const char* op, const char* name);
// Writes a tensor's values into a host view of the same shape and dtype, contiguous row-major
// (ArgumentError naming the output otherwise).
void write_view(const ssd_tensor& view, const Tensor& values, const char* op, const char* name);

}  // namespace ssd
