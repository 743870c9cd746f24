// +farslots: the far slot ids of a decode step's compact slots, and the stretches around them.
#include "ssd/reference/far_slots.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "ssd/reference/decode_plan.h"

namespace ssd {
namespace {

constexpr std::int64_t kLowLimit = std::int64_t{1} << 30;

std::int64_t first_far_id(std::int64_t stride) { return (kFarSlotOffset + stride - 1) / stride; }

}  // namespace

std::int64_t FarSlots::id(std::int64_t compact) const {
  return compact < 0 ? compact : ids.at(static_cast<std::size_t>(compact));
}

std::optional<std::string> far_slots_reason(const Problem& p) {
  if (!p.farslots) return std::nullopt;
  if (!p.sbi) return "+farslots needs +sbi (it moves the slots that state_batch_indices names)";
  // The low slots with their poisoned neighbours (ids 0 .. 2·slots) and the places truncated
  // offsets land (below 2m·stride) stay within the first 2^30 elements: below the first far id,
  // whose offset passes 2^32, and where a byte offset mod 2^32 lands alike for 2- and 4-byte
  // states. In double: sizes up to 2^62 would overflow the product.
  const double stride = static_cast<double>(p.h) * static_cast<double>(p.p) * static_cast<double>(p.n);
  if (stride < 4)
    return "+farslots needs h·p·n >= 4 (a slot id times h·p·n must pass 2^32 elements with ids below 2^31; here " +
           std::to_string(p.h * p.p * p.n) + ")";
  if ((2 * static_cast<double>(p.slots) + 2) * stride > static_cast<double>(kLowLimit))
    return "+farslots needs (2·slots + 2)·h·p·n <= 2^30 (the low slots and where truncated offsets land fill the "
           "state's first 2^30 elements)" +
           (stride <= static_cast<double>(kLowLimit) / 4
                ? ": slots at most " + std::to_string(kLowLimit / (p.h * p.p * p.n) / 2 - 1) + " for h·p·n = " +
                      std::to_string(p.h * p.p * p.n)
                : std::string());
  return std::nullopt;
}

FarSlots far_slots(const Problem& p, const Tensor& reads, const Tensor* writes, std::size_t width) {
  if (auto why = far_slots_reason(p)) throw std::logic_error("far_slots: " + *why);
  if (!p.farslots) throw std::logic_error("far_slots: the problem has no +farslots");
  FarSlots f;
  f.stride = p.h * p.p * p.n;
  f.first_far = first_far_id(f.stride);
  // The slots the tables name, in order of first appearance.
  std::vector<std::int64_t> named;
  std::vector<bool> seen(static_cast<std::size_t>(p.slots), false);
  for (const Tensor* t : {&reads, writes}) {
    if (t == nullptr) continue;
    for (std::int64_t i = 0; i < t->numel(); ++i) {
      const auto slot = static_cast<std::int64_t>((*t)[i]);
      if (is_padding_slot(slot, p.pad) || slot >= p.slots || seen[static_cast<std::size_t>(slot)]) continue;
      seen[static_cast<std::size_t>(slot)] = true;
      named.push_back(slot);
    }
  }
  f.ids.assign(static_cast<std::size_t>(p.slots), -1);
  std::int64_t far = 0;
  for (std::size_t rank = 0; rank < named.size(); rank += 2) f.ids[static_cast<std::size_t>(named[rank])] = f.first_far + 2 * far++;
  std::int64_t low = 0;
  for (std::int64_t& id : f.ids)
    if (id < 0) id = 2 * far + 1 + 2 * low++;
  f.slots = f.first_far + 2 * far;
  f.regions.push_back({0, (2 * p.slots + 1) * f.stride});
  if (far > 0) f.regions.push_back({(f.first_far - 1) * f.stride, f.slots * f.stride});
  // Truncated offsets: in elements (mod 2^32), and in bytes (mod 2^32, then back to elements).
  const auto wrap = static_cast<std::int64_t>(std::numeric_limits<std::uint32_t>::max()) + 1;
  const auto byte_wrap = wrap / static_cast<std::int64_t>(width);
  for (std::int64_t k = 0; k < far; ++k) {
    const std::int64_t offset = (f.first_far + 2 * k) * f.stride;
    for (std::int64_t landing : {offset % wrap, offset % byte_wrap}) {
      const ElementRange r{landing, landing + f.stride};
      if (std::find(f.landings.begin(), f.landings.end(), r) == f.landings.end()) f.landings.push_back(r);
    }
  }
  // Each landing lies in the low region and on none of the low slots (ids 2m+1 and up start at
  // (2m+1)·stride, above the landings of far slot k at less than (2k+2)·stride).
  for (const ElementRange& r : f.landings)
    if (r.end > (2 * far + 1) * f.stride) throw std::logic_error("far_slots: a truncated offset lands on a low slot");
  return f;
}

}  // namespace ssd
