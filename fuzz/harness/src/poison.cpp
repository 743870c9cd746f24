// Poison and guard-band patterns.
#include "ssd/harness/poison.h"

#include <algorithm>
#include <cstring>

#include "ssd/reference/abi_views.h"

namespace ssd {
namespace {

std::uint8_t guard_byte(std::size_t offset) {
  return static_cast<std::uint8_t>(kGuardPattern >> (8 * (offset % 4)));
}

// The pattern laid out once, so bands are filled and compared with memcpy and memcmp: this runs
// for every buffer of every case.
constexpr std::size_t kPatternBytes = 4096;
const std::uint8_t* pattern() {
  static const auto* bytes = [] {
    auto* p = new std::uint8_t[kPatternBytes];
    for (std::size_t i = 0; i < kPatternBytes; ++i) p[i] = guard_byte(i);
    return p;
  }();
  return bytes;
}

template <class Bits>
void fill_with(std::span<std::uint8_t> bytes, Bits bits) {
  for (std::size_t at = 0; at + sizeof bits <= bytes.size(); at += sizeof bits) std::memcpy(bytes.data() + at, &bits, sizeof bits);
}

}  // namespace

std::uint32_t poison_bits(DType dtype) {
  switch (dtype) {
    case DType::f32: return 0x7FC0DEADu;
    case DType::bf16: return 0x7FDEu;
    case DType::f16: return 0x7EADu;
    case DType::i32: return 0x5EADBEEFu;
    case DType::f64: break;
  }
  return 0;  // f64 never reaches a kernel (abi_dtype rejects it)
}

void fill_poison(DType dtype, std::span<std::uint8_t> bytes) {
  if (dtype_bytes(dtype) == 2) fill_with(bytes, static_cast<std::uint16_t>(poison_bits(dtype)));
  else fill_with(bytes, poison_bits(dtype));
}

bool is_poison(DType dtype, const std::uint8_t* element) {
  return holds_poison(element, dtype_bytes(dtype), poison_bits(dtype));
}

void fill_guard(std::span<std::uint8_t> band) {
  for (std::size_t at = 0; at < band.size(); at += kPatternBytes)
    std::memcpy(band.data() + at, pattern(), std::min(kPatternBytes, band.size() - at));
}

GuardCheck check_guard(std::span<const std::uint8_t> band) {
  GuardCheck c;
  bool intact = true;
  for (std::size_t at = 0; at < band.size() && intact; at += kPatternBytes)
    intact = std::memcmp(band.data() + at, pattern(), std::min(kPatternBytes, band.size() - at)) == 0;
  if (intact) return c;
  for (std::size_t i = 0; i < band.size(); ++i)
    if (band[i] != guard_byte(i)) {
      if (c.first < 0) c.first = static_cast<std::ptrdiff_t>(i);
      c.last = static_cast<std::ptrdiff_t>(i);
      ++c.changed;
    }
  return c;
}

}  // namespace ssd
