// Strict parsing of command-line option values for the suite's tools: the whole text must be one
// decimal number inside the option's range, or ArgumentError names the option and the range.
#pragma once
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>

#include "ssd/reference/errors.h"

namespace ssd {

namespace option_detail {

// Short decimal of a range end (never the 309 digits of DBL_MAX).
inline std::string short_number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", v);
  return buffer;
}

inline std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

}  // namespace option_detail

// An unsigned decimal integer (digits only: no sign, no blanks, no hex) in [lo, hi].
inline std::uint64_t parse_option_unsigned(std::string_view option, std::string_view text, std::uint64_t lo,
                                           std::uint64_t hi) {
  const std::string range = std::to_string(lo) + " .. " + std::to_string(hi);
  std::uint64_t v = 0;
  const bool digits_only = !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (!digits_only || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
    throw ArgumentError(option, option_detail::quoted(text) + " is not an integer in " + range);
  return v;
}

// A finite decimal number (from_chars syntax: 0.5, 5e-1; no "nan", "inf", sign '+' or blanks) in
// the interval from lo to hi; lo itself is excluded when lo_open.
inline double parse_option_number(std::string_view option, std::string_view text, double lo, double hi,
                                  bool lo_open = false) {
  const std::string range = (lo_open ? "(" : "[") + option_detail::short_number(lo) + ", " +
                            option_detail::short_number(hi) + "]";
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
    throw ArgumentError(option, option_detail::quoted(text) + " is not a finite number (expected one in " + range + ")");
  if (v < lo || v > hi || (lo_open && v == lo))
    throw ArgumentError(option, option_detail::quoted(text) + " is outside " + range);
  return v;
}

}  // namespace ssd
