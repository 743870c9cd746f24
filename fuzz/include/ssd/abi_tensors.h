// Converting between the oracle's Tensors and kernel-ABI buffers in a table's memory: native
// dtype encodings (f32, f16 and bf16 bit patterns, i32), host or device placement.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "ssd/kernel_abi.h"
#include "ssd/tensor.h"

namespace ssd {

ssd_dtype abi_dtype(DType t);   // throws ArgumentError for f64
DType from_abi_dtype(int32_t t);  // throws ArgumentError for an unknown code
std::size_t dtype_bytes(DType t);

// Native little-endian bytes of a tensor's values, and back.
std::vector<std::uint8_t> encode(const Tensor& t);
Tensor decode(DType dtype, const Shape& shape, const void* bytes);

// A buffer in the table's memory holding one tensor; freed with the buffer.
class AbiBuffer {
 public:
  AbiBuffer(const ssd_kernel_table& table, DType dtype, Shape shape);  // zero-filled
  AbiBuffer(const ssd_kernel_table& table, const Tensor& contents);
  ~AbiBuffer();
  AbiBuffer(const AbiBuffer&) = delete;
  AbiBuffer& operator=(const AbiBuffer&) = delete;

  ssd_tensor view() const;  // contiguous row-major descriptor
  Tensor read() const;      // copies back to the host

 private:
  void upload(const std::vector<std::uint8_t>& bytes);
  const ssd_kernel_table& table_;
  DType dtype_;
  Shape shape_;
  std::size_t bytes_ = 0;
  void* data_ = nullptr;
  std::vector<std::uint8_t> host_;  // storage for host tables
};

// A tensor view of a host buffer described by an ssd_tensor (for host-memory tables such as the
// emulation): decodes it into a Tensor, checking that strides are contiguous.
Tensor tensor_from_view(const ssd_tensor& view, const char* op, const char* name);
// Writes a tensor's values into a host view of the same shape and dtype.
void write_view(const ssd_tensor& view, const Tensor& values, const char* op, const char* name);

}  // namespace ssd
