// Buffers in a kernel table's memory.
#include "ssd/harness/abi_buffer.h"

#include <cstring>

#include "ssd/reference/errors.h"

namespace ssd {

AbiBuffer::AbiBuffer(const ssd_kernel_table& table, DType dtype, Shape shape)
    : table_(table), dtype_(dtype), shape_(std::move(shape)) {
  bytes_ = static_cast<std::size_t>(element_count(shape_)) * dtype_bytes(dtype_);
  upload(std::vector<std::uint8_t>(bytes_, 0));
}

AbiBuffer::AbiBuffer(const ssd_kernel_table& table, const Tensor& contents)
    : table_(table), dtype_(contents.dtype()), shape_(contents.shape()) {
  bytes_ = static_cast<std::size_t>(contents.numel()) * dtype_bytes(dtype_);
  upload(encode(contents));
}

void AbiBuffer::upload(const std::vector<std::uint8_t>& bytes) {
  if (table_.memory_kind == SSD_MEMORY_HOST) {
    host_ = bytes;
    data_ = host_.data();
    return;
  }
  if (!table_.device_alloc || !table_.device_copy)
    throw ArgumentError("kernels", std::string(table_.name) + " is a device table without memory functions");
  if (table_.device_alloc(&data_, bytes_ ? bytes_ : 1) != SSD_STATUS_OK)
    throw std::runtime_error(std::string("device allocation of ") + std::to_string(bytes_) + " bytes failed: " +
                             (table_.last_error ? table_.last_error() : ""));
  if (bytes_ && table_.device_copy(data_, bytes.data(), bytes_, 0) != SSD_STATUS_OK)
    throw std::runtime_error(std::string("copy to device failed: ") + (table_.last_error ? table_.last_error() : ""));
}

AbiBuffer::~AbiBuffer() {
  if (table_.memory_kind != SSD_MEMORY_HOST && data_ && table_.device_free) table_.device_free(data_);
}

ssd_tensor AbiBuffer::view() const {
  ssd_tensor v{};
  v.data = data_;
  v.dtype = abi_dtype(dtype_);
  v.rank = static_cast<int32_t>(shape_.size());
  std::int64_t stride = 1;
  for (int axis = v.rank - 1; axis >= 0; --axis) {
    v.shape[axis] = shape_[static_cast<std::size_t>(axis)];
    v.strides[axis] = stride;
    stride *= shape_[static_cast<std::size_t>(axis)];
  }
  return v;
}

Tensor AbiBuffer::read() const {
  if (table_.memory_kind == SSD_MEMORY_HOST) return decode(dtype_, shape_, host_.data());
  std::vector<std::uint8_t> bytes(bytes_);
  if (bytes_ && table_.device_copy(bytes.data(), data_, bytes_, 1) != SSD_STATUS_OK)
    throw std::runtime_error(std::string("copy to host failed: ") + (table_.last_error ? table_.last_error() : ""));
  return decode(dtype_, shape_, bytes.data());
}

}  // namespace ssd
