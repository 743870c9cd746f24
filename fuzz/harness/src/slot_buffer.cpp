// The +farslots state buffer: compact slots at far ids, poison around them, checked after the call.
#include "ssd/harness/slot_buffer.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "ssd/harness/poison.h"
#include "ssd/reference/abi_views.h"

namespace ssd {
namespace {

std::string table_error(const ssd_kernel_table& t) { return t.last_error ? t.last_error() : "(no message)"; }

}  // namespace

SlotBuffer::SlotBuffer(MemoryPool& pool, const RawTensor& compact, FarSlots far)
    : pool_(pool), compact_(compact), far_(std::move(far)), width_(dtype_bytes(compact.dtype)) {
  if (compact_.shape.size() != 4 || compact_.shape[0] != static_cast<std::int64_t>(far_.ids.size()) ||
      compact_.shape[1] * compact_.shape[2] * compact_.shape[3] != far_.stride)
    throw std::runtime_error("SlotBuffer: state " + shape_string(compact_.shape) + " does not fit its far slots");
  const std::size_t slot_bytes = static_cast<std::size_t>(far_.stride) * width_;
  // Each region's image: poison, then the slots that lie in it.
  for (const ElementRange& r : far_.regions) {
    std::vector<std::uint8_t> image(static_cast<std::size_t>(r.end - r.begin) * width_);
    fill_poison(compact_.dtype, image);
    for (std::size_t j = 0; j < far_.ids.size(); ++j) {
      const std::int64_t at = far_.ids[j] * far_.stride;
      if (at >= r.begin && at + far_.stride <= r.end)
        std::memcpy(image.data() + static_cast<std::size_t>(at - r.begin) * width_, compact_.bytes.data() + j * slot_bytes,
                    slot_bytes);
    }
    images_.push_back(std::move(image));
  }
  const std::int64_t extent = far_.slots * far_.stride;
  block_ = pool_.acquire(kGuardBytes + static_cast<std::size_t>(extent) * width_ + kGuardBytes);
  std::vector<std::uint8_t> band(kGuardBytes);
  fill_guard(band);
  const auto guard_elements = static_cast<std::int64_t>(kGuardBytes / width_);
  write(-guard_elements, band.data(), band.size());
  write(extent, band.data(), band.size());
  for (std::size_t i = 0; i < images_.size(); ++i) write(far_.regions[i].begin, images_[i].data(), images_[i].size());
}

SlotBuffer::~SlotBuffer() { pool_.release(block_); }

void SlotBuffer::write(std::int64_t element, const std::uint8_t* from, std::size_t count) const {
  std::uint8_t* to = static_cast<std::uint8_t*>(block_.data) + kGuardBytes + element * static_cast<std::int64_t>(width_);
  if (!pool_.device()) {
    std::memcpy(to, from, count);
  } else if (pool_.table().device_copy(to, from, count, 0) != SSD_STATUS_OK) {
    throw std::runtime_error("copy to device failed: " + table_error(pool_.table()));
  }
}

void SlotBuffer::read(std::int64_t element, std::uint8_t* into, std::size_t count) const {
  const std::uint8_t* from =
      static_cast<const std::uint8_t*>(block_.data) + kGuardBytes + element * static_cast<std::int64_t>(width_);
  if (!pool_.device()) {
    std::memcpy(into, from, count);
  } else if (pool_.table().device_copy(into, from, count, 1) != SSD_STATUS_OK) {
    throw std::runtime_error("copy to host failed: " + table_error(pool_.table()));
  }
}

ssd_tensor SlotBuffer::view() const {
  ssd_tensor t{};
  t.data = static_cast<std::uint8_t*>(block_.data) + kGuardBytes;
  t.dtype = abi_dtype(compact_.dtype);
  t.rank = 4;
  const std::int64_t shape[4] = {far_.slots, compact_.shape[1], compact_.shape[2], compact_.shape[3]};
  std::int64_t stride = 1;
  for (int axis = 3; axis >= 0; --axis) {
    t.shape[axis] = shape[axis];
    t.strides[axis] = stride;
    stride *= shape[axis];
  }
  return t;
}

RawTensor SlotBuffer::read() const {
  RawTensor out = compact_;
  const std::size_t slot_bytes = static_cast<std::size_t>(far_.stride) * width_;
  for (std::size_t j = 0; j < far_.ids.size(); ++j) read(far_.ids[j] * far_.stride, out.bytes.data() + j * slot_bytes, slot_bytes);
  return out;
}

std::vector<std::string> SlotBuffer::damage() const {
  std::vector<std::string> found;
  std::vector<std::uint8_t> band(kGuardBytes);
  const auto guard_elements = static_cast<std::int64_t>(kGuardBytes / width_);
  read(-guard_elements, band.data(), band.size());
  if (const GuardCheck c = check_guard(band); !c.intact())
    found.push_back("wrote before the start of state (" + std::to_string(c.changed) + " of " + std::to_string(kGuardBytes) +
                    " guard bytes changed)");
  read(far_.slots * far_.stride, band.data(), band.size());
  if (const GuardCheck c = check_guard(band); !c.intact())
    found.push_back("wrote past the end of state (" + std::to_string(c.changed) + " of " + std::to_string(kGuardBytes) +
                    " guard bytes changed, the first at byte +" + std::to_string(c.first) + ")");
  std::vector<std::int64_t> ids = far_.ids;
  std::sort(ids.begin(), ids.end());
  auto on_slot = [&](std::int64_t at) { return std::binary_search(ids.begin(), ids.end(), at / far_.stride); };
  auto landing = [&](std::int64_t at) {
    return std::any_of(far_.landings.begin(), far_.landings.end(), [&](const ElementRange& r) { return at >= r.begin && at < r.end; });
  };
  std::int64_t first_landing = -1, landings = 0, first_gap = -1, gaps = 0;
  for (std::size_t i = 0; i < images_.size(); ++i) {
    const ElementRange& r = far_.regions[i];
    std::vector<std::uint8_t> now(images_[i].size());
    read(r.begin, now.data(), now.size());
    if (std::memcmp(now.data(), images_[i].data(), now.size()) == 0) continue;
    for (std::int64_t at = r.begin; at < r.end; ++at) {
      const std::size_t byte = static_cast<std::size_t>(at - r.begin) * width_;
      if (on_slot(at) || std::memcmp(now.data() + byte, images_[i].data() + byte, width_) == 0) continue;
      if (landing(at)) {
        if (first_landing < 0) first_landing = at;
        ++landings;
      } else {
        if (first_gap < 0) first_gap = at;
        ++gaps;
      }
    }
  }
  if (landings > 0)
    found.push_back("stored where a far slot's offset truncated to 32 bits lands (" + std::to_string(landings) +
                    " poisoned elements of state changed, the first at element " + std::to_string(first_landing) +
                    ": slot id · " + std::to_string(far_.stride) + " mod 2^32)");
  if (gaps > 0)
    found.push_back("wrote into a gap between the slots of state (" + std::to_string(gaps) +
                    " poisoned elements changed, the first at element " + std::to_string(first_gap) + " of " +
                    std::to_string(far_.slots * far_.stride) + ")");
  return found;
}

}  // namespace ssd
