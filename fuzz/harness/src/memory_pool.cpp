// The caching allocator behind the harness's buffers.
#include "ssd/harness/memory_pool.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <iterator>
#include <stdexcept>
#include <string>

namespace ssd {
namespace {

constexpr std::size_t kAlignment = 256;

// Multiples of 256 bytes up to 4 KiB, then 8 classes per power of two.
std::size_t size_class(std::size_t bytes) {
  std::size_t size = (std::max<std::size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  if (size <= 4096) return size;
  const std::size_t step = std::bit_floor(size) / 8;
  return (size + step - 1) / step * step;
}

std::string table_error(const ssd_kernel_table& t) { return t.last_error ? t.last_error() : "(no message)"; }

}  // namespace

MemoryPool::MemoryPool(const ssd_kernel_table& table, std::size_t max_cached) : table_(table), max_cached_(max_cached) {}

MemoryPool::~MemoryPool() {
  for (const Block& b : free_) free_block(b);
}

MemoryPool::Block MemoryPool::acquire(std::size_t bytes) {
  const std::size_t capacity = size_class(bytes);
  // Most recently freed first: its memory is the likeliest to be in cache.
  for (auto it = free_.rbegin(); it != free_.rend(); ++it)
    if (it->capacity == capacity) {
      Block b = *it;
      free_.erase(std::next(it).base());
      cached_ -= b.capacity;
      return b;
    }
  Block b{nullptr, capacity};
  if (!device()) {
    b.data = std::aligned_alloc(kAlignment, capacity);
    if (b.data == nullptr) throw std::runtime_error("host allocation of " + std::to_string(capacity) + " bytes failed");
    return b;
  }
  if (!table_.device_alloc || !table_.device_free || !table_.device_copy)
    throw std::runtime_error(std::string(table_.name) + " is a device table without memory functions");
  if (table_.device_alloc(&b.data, capacity) != SSD_STATUS_OK || b.data == nullptr)
    throw std::runtime_error("device allocation of " + std::to_string(capacity) + " bytes failed: " + table_error(table_));
  return b;
}

void MemoryPool::release(Block block) {
  if (block.data == nullptr) return;
  if (block.capacity > max_cached_) {
    free_block(block);
    return;
  }
  free_.push_back(block);
  cached_ += block.capacity;
  while (cached_ > max_cached_) {
    cached_ -= free_.front().capacity;
    free_block(free_.front());
    free_.pop_front();
  }
}

void MemoryPool::free_block(const Block& block) {
  if (!device()) std::free(block.data);
  else table_.device_free(block.data);
}

}  // namespace ssd
