// Storage dtypes of the contract and exact round-to-nearest-even conversion between them.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace ssd {

enum class DType { f64, f32, f16, bf16, i32 };

std::string_view dtype_name(DType t);
// Parses "f32", "f16", "bf16", "i32", "f64"; throws ArgumentError naming `argument` otherwise.
DType parse_dtype(std::string_view text, std::string_view argument);
bool is_float(DType t);
// Unit roundoff (half an ulp of 1): bf16 2^-8, f16 2^-11, f32 2^-24, f64 2^-53; 0 for i32.
double unit_roundoff(DType t);
// Smallest positive normal number of the format (the flush-to-zero threshold).
double smallest_normal(DType t);

// Rounds a double to the nearest value representable in `t` (ties to even, with subnormals and
// overflow to infinity), returned as a double. Rounding goes straight from double to the target
// format: never through an intermediate format, so there is no double rounding. For i32 the value
// must be integral and in range (checked by callers that build tensors).
double round_to(DType t, double value);

// Bit patterns of the 16-bit formats (for files and kernel buffers). `value` must already be
// representable (round_to first); NaN maps to a quiet NaN.
std::uint16_t bf16_bits(double value);
std::uint16_t f16_bits(double value);
double bf16_from_bits(std::uint16_t bits);
double f16_from_bits(std::uint16_t bits);

}  // namespace ssd
