// A buffer in a kernel table's memory (host, or device through the table's memory functions)
// holding one tensor in its native encoding, between two guard bands: the kernel is handed the
// interior, so a write past either end lands in a band the runner checks after the call.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ssd/harness/memory_pool.h"
#include "ssd/kernel_abi.h"
#include "ssd/reference/abi_views.h"
#include "ssd/reference/tensor.h"

namespace ssd {

class AbiBuffer {
 public:
  AbiBuffer(MemoryPool& pool, DType dtype, Shape shape);  // an output: every element poisoned
  AbiBuffer(MemoryPool& pool, const Tensor& contents);    // an input (or a state updated in place)
  AbiBuffer(MemoryPool& pool, DType dtype, Shape shape, std::vector<std::uint8_t> contents);  // the same, encoded
  ~AbiBuffer();
  AbiBuffer(const AbiBuffer&) = delete;
  AbiBuffer& operator=(const AbiBuffer&) = delete;

  ssd_tensor view() const;  // contiguous row-major descriptor of the interior
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::size_t bytes() const { return bytes_; }

  // The whole block as it is now: leading band, contents, trailing band (at least kGuardBytes:
  // the block's slack past the contents is guarded too). Host memory is viewed in place; device
  // memory is copied into `storage`.
  std::span<const std::uint8_t> snapshot(std::vector<std::uint8_t>& storage) const;
  // The contents within a snapshot.
  const std::uint8_t* contents(std::span<const std::uint8_t> snapshot) const;
  Tensor read() const;  // the contents decoded
  // What a call did around the contents, from a snapshot: "wrote past the end of NAME (...)" and
  // "wrote before the start of NAME (...)", one line per damaged band.
  std::vector<std::string> guard_damage(std::span<const std::uint8_t> snapshot, const std::string& name) const;
  // The bytes uploaded into an input, for telling whether the call changed it.
  const std::vector<std::uint8_t>& uploaded() const { return uploaded_; }

 private:
  void upload(const std::uint8_t* contents);  // nullptr: poison
  MemoryPool& pool_;
  DType dtype_;
  Shape shape_;
  std::size_t bytes_ = 0;
  MemoryPool::Block block_;
  std::vector<std::uint8_t> uploaded_;  // inputs only
};

}  // namespace ssd
