// Guarded buffers in a kernel table's memory.
#include "ssd/harness/abi_buffer.h"

#include <cstring>
#include <span>
#include <stdexcept>

#include "ssd/harness/poison.h"

namespace ssd {
namespace {

std::string table_error(const ssd_kernel_table& t) { return t.last_error ? t.last_error() : "(no message)"; }

}  // namespace

AbiBuffer::AbiBuffer(MemoryPool& pool, DType dtype, Shape shape) : pool_(pool), dtype_(dtype), shape_(std::move(shape)) {
  bytes_ = static_cast<std::size_t>(element_count(shape_)) * dtype_bytes(dtype_);
  upload(nullptr);
}

AbiBuffer::AbiBuffer(MemoryPool& pool, const Tensor& contents)
    : AbiBuffer(pool, contents.dtype(), contents.shape(), encode(contents)) {}

AbiBuffer::AbiBuffer(MemoryPool& pool, DType dtype, Shape shape, std::vector<std::uint8_t> contents)
    : pool_(pool), dtype_(dtype), shape_(std::move(shape)), uploaded_(std::move(contents)) {
  bytes_ = static_cast<std::size_t>(element_count(shape_)) * dtype_bytes(dtype_);
  if (uploaded_.size() != bytes_)
    throw std::runtime_error("input of " + std::to_string(uploaded_.size()) + " bytes for " + std::to_string(bytes_));
  upload(uploaded_.data());
}

void AbiBuffer::upload(const std::uint8_t* contents) {
  block_ = pool_.acquire(kGuardBytes + bytes_ + kGuardBytes);
  // Host blocks are written in place; device blocks are staged and copied in one transfer.
  std::vector<std::uint8_t> staging(pool_.device() ? block_.capacity : 0);
  const std::span<std::uint8_t> image =
      pool_.device() ? std::span(staging) : std::span(static_cast<std::uint8_t*>(block_.data), block_.capacity);
  fill_guard(image.first(kGuardBytes));
  if (contents) std::memcpy(image.data() + kGuardBytes, contents, bytes_);
  else fill_poison(dtype_, image.subspan(kGuardBytes, bytes_));
  fill_guard(image.subspan(kGuardBytes + bytes_));
  if (pool_.device() && pool_.table().device_copy(block_.data, staging.data(), staging.size(), 0) != SSD_STATUS_OK)
    throw std::runtime_error("copy to device failed: " + table_error(pool_.table()));
}

AbiBuffer::~AbiBuffer() { pool_.release(block_); }

ssd_tensor AbiBuffer::view() const {
  ssd_tensor v{};
  v.data = static_cast<std::uint8_t*>(block_.data) + kGuardBytes;
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

std::span<const std::uint8_t> AbiBuffer::snapshot(std::vector<std::uint8_t>& storage) const {
  if (!pool_.device()) return {static_cast<const std::uint8_t*>(block_.data), block_.capacity};
  storage.resize(block_.capacity);
  if (pool_.table().device_copy(storage.data(), block_.data, storage.size(), 1) != SSD_STATUS_OK)
    throw std::runtime_error("copy to host failed: " + table_error(pool_.table()));
  return storage;
}

const std::uint8_t* AbiBuffer::contents(std::span<const std::uint8_t> snapshot) const {
  return snapshot.data() + kGuardBytes;
}

Tensor AbiBuffer::read() const {
  std::vector<std::uint8_t> storage;
  return decode(dtype_, shape_, contents(snapshot(storage)));
}

std::vector<std::string> AbiBuffer::guard_damage(std::span<const std::uint8_t> image, const std::string& name) const {
  std::vector<std::string> damage;
  // The leading band: the byte nearest the contents says how far before the start it wrote.
  if (const GuardCheck before = check_guard(image.first(kGuardBytes)); !before.intact())
    damage.push_back("wrote before the start of " + name + " (" + std::to_string(before.changed) + " of " +
                     std::to_string(kGuardBytes) + " guard bytes changed, the nearest at byte -" +
                     std::to_string(static_cast<std::ptrdiff_t>(kGuardBytes) - before.last) + ")");
  const std::span<const std::uint8_t> tail = image.subspan(kGuardBytes + bytes_);
  if (const GuardCheck after = check_guard(tail); !after.intact())
    damage.push_back("wrote past the end of " + name + " (" + std::to_string(after.changed) + " of " +
                     std::to_string(tail.size()) + " guard bytes changed, the first at byte +" +
                     std::to_string(after.first) + " past the end)");
  return damage;
}

}  // namespace ssd
