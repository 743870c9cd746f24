// The bit patterns the runner fills memory with before a kernel call, so that what the kernel did
// not do shows: outputs start as poison (a NaN payload no arithmetic produces, a sentinel for
// integers), and every buffer sits between guard bands.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "ssd/reference/dtype.h"

namespace ssd {

// Poison of one element of `dtype`, little-endian: f32 0x7FC0DEAD, bf16 0x7FDE, f16 0x7EAD (quiet
// NaNs whose payload a NaN computed by a kernel does not carry: those are 0x7FC00000, 0x7FC0,
// 0x7E00 or their negatives), i32 0x5EADBEEF.
std::uint32_t poison_bits(DType dtype);
// Fills `bytes` (a whole number of elements) with the poison of `dtype`.
void fill_poison(DType dtype, std::span<std::uint8_t> bytes);
bool is_poison(DType dtype, const std::uint8_t* element);
// The same test for a loop over many elements: `width` bytes (2 or 4) against poison_bits.
inline bool holds_poison(const std::uint8_t* element, std::size_t width, std::uint32_t bits) {
  if (width == 2) {
    std::uint16_t v;
    std::memcpy(&v, element, 2);
    return v == bits;
  }
  std::uint32_t v;
  std::memcpy(&v, element, 4);
  return v == bits;
}

// Bytes around every buffer, before and after it; filled with kGuardPattern (0x7FBADBAD repeated,
// a signalling NaN as f32, so a stray write of any computed value changes it).
inline constexpr std::size_t kGuardBytes = 256;
inline constexpr std::uint32_t kGuardPattern = 0x7FBADBADu;
void fill_guard(std::span<std::uint8_t> band);
// Offsets (from the band's start) of the first and last byte that differ from the pattern, or
// {-1, -1} when the band is intact; `changed` counts the bytes that differ.
struct GuardCheck {
  std::ptrdiff_t first = -1, last = -1;
  std::size_t changed = 0;
  bool intact() const { return changed == 0; }
};
GuardCheck check_guard(std::span<const std::uint8_t> band);

}  // namespace ssd
