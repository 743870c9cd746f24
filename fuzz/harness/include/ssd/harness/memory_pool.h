// A caching allocator for one kernel table's memory (host, or device through the table's memory
// functions): blocks freed by one case are handed to the next case of a similar size, because
// allocating and freeing device memory per case (with its implicit synchronization) dominated the
// cost of small cases on a GPU.
#pragma once
#include <cstddef>
#include <list>

#include "ssd/kernel_abi.h"

namespace ssd {

class MemoryPool {
 public:
  // `max_cached` bytes of free blocks are kept for reuse (least recently freed go first);
  // 0 frees every block at once (no caching).
  explicit MemoryPool(const ssd_kernel_table& table, std::size_t max_cached = std::size_t{1} << 30);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  struct Block {
    void* data = nullptr;
    std::size_t capacity = 0;  // bytes, at least what was asked for
  };
  // A block of at least `bytes` (sizes are rounded up to a size class, at most 1/8 larger, so a
  // block fits the many nearby sizes the generators draw), 256-byte aligned like cudaMalloc's.
  // Throws std::runtime_error when the table cannot allocate.
  Block acquire(std::size_t bytes);
  void release(Block block);

  const ssd_kernel_table& table() const { return table_; }
  bool device() const { return table_.memory_kind != SSD_MEMORY_HOST; }
  std::size_t cached_bytes() const { return cached_; }

 private:
  void free_block(const Block& block);
  const ssd_kernel_table& table_;
  std::size_t max_cached_;
  std::size_t cached_ = 0;
  std::list<Block> free_;  // oldest first
};

}  // namespace ssd
