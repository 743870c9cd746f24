// The decode step's state buffer under +farslots (ssd/reference/far_slots.h): [slots,H,P,N] in
// the state's dtype, spanning 2^32 elements and more, of which only two stretches are ever written
// or read here: the compact slots' values at their far ids with poisoned slots between them, and
// the places where a far slot's offset truncated to 32 bits lands. The rest (16 GiB at f32) is
// never touched, so host memory for it is never committed. The whole sits between guard bands.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ssd/harness/call_record.h"
#include "ssd/harness/memory_pool.h"
#include "ssd/kernel_abi.h"
#include "ssd/reference/far_slots.h"

namespace ssd {

class SlotBuffer {
 public:
  // `compact` is the problem's state [slots,H,P,N]; slot j goes to far.ids[j].
  SlotBuffer(MemoryPool& pool, const RawTensor& compact, FarSlots far);
  ~SlotBuffer();
  SlotBuffer(const SlotBuffer&) = delete;
  SlotBuffer& operator=(const SlotBuffer&) = delete;

  ssd_tensor view() const;  // the far state [far.slots,H,P,N], contiguous
  RawTensor read() const;   // the compact state after the call, gathered from the far ids
  // Damaged guard bands, and changed poison: at a truncated offset's landing, or between slots.
  std::vector<std::string> damage() const;
  const FarSlots& far() const { return far_; }

 private:
  void write(std::int64_t element, const std::uint8_t* from, std::size_t count) const;  // into the table's memory
  void read(std::int64_t element, std::uint8_t* into, std::size_t count) const;
  MemoryPool& pool_;
  RawTensor compact_;
  FarSlots far_;
  std::size_t width_;
  std::vector<std::vector<std::uint8_t>> images_;  // per region of far_: as uploaded
  MemoryPool::Block block_;
};

}  // namespace ssd
