// A buffer in a kernel table's memory (host, or device through the table's memory functions)
// holding one tensor in its native encoding.
#pragma once
#include <cstdint>
#include <vector>

#include "ssd/kernel_abi.h"
#include "ssd/reference/abi_views.h"
#include "ssd/reference/tensor.h"

namespace ssd {

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

}  // namespace ssd
