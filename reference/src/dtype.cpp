// Exact conversions between double and the contract's storage formats.
#include "ssd/reference/dtype.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "ssd/reference/errors.h"

namespace ssd {
namespace {

// A binary floating-point format with `precision` significand bits (hidden bit included) and
// normal exponents in [emin, emax] (value = m * 2^e with 1 <= m < 2).
struct Format {
  int precision;
  int emin;
  int emax;
};

constexpr Format kF32{24, -126, 127};
constexpr Format kF16{11, -14, 15};
constexpr Format kBf16{8, -126, 127};

double round_to_format(double v, Format f) {
  if (!std::isfinite(v) || v == 0.0) return v;
  int e = std::ilogb(v);                        // exponent of v as 1.xxx * 2^e
  if (e < f.emin) e = f.emin;                   // subnormal range: fixed quantum
  const int quantum_exp = e - (f.precision - 1);  // spacing of representable numbers near v
  const double scaled = std::ldexp(v, -quantum_exp);  // exact: a power-of-two scaling
  const double rounded = std::nearbyint(scaled);      // default rounding mode: ties to even
  const double result = std::ldexp(rounded, quantum_exp);
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, 1 - f.precision), f.emax);
  if (std::fabs(result) > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), v);
  return result;
}

// Fast path of round_to_format for a result in the normal range: round the double's significand
// to `precision` bits in place (ties to even; a carry into the exponent is the correct result).
// Falls back to the general routine near the subnormal and overflow ranges.
double round_to_format_fast(double v, Format f) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  const int biased_exponent = static_cast<int>((bits >> 52) & 0x7FF);
  const int e = biased_exponent - 1023;
  if (e < f.emin || e >= f.emax) return round_to_format(v, f);  // subnormal, overflow, inf, nan, 0
  const int drop = 52 - (f.precision - 1);                       // significand bits to discard
  const std::uint64_t half = std::uint64_t{1} << (drop - 1);
  const std::uint64_t keep_lsb = (bits >> drop) & 1;
  bits += half - 1 + keep_lsb;  // round half to even
  bits &= ~((std::uint64_t{1} << drop) - 1);
  double r;
  std::memcpy(&r, &bits, sizeof r);
  return r;
}

}  // namespace

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f64: return "f64";
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i32: return "i32";
  }
  return "?";
}

DType parse_dtype(std::string_view text, std::string_view argument) {
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::i32})
    if (text == dtype_name(t)) return t;
  throw ArgumentError(argument, "unknown dtype '" + std::string(text) +
                                    "' (expected one of f32, f16, bf16, i32, f64)");
}

bool is_float(DType t) { return t != DType::i32; }

double unit_roundoff(DType t) {
  switch (t) {
    case DType::f64: return std::ldexp(1.0, -53);
    case DType::f32: return std::ldexp(1.0, -24);
    case DType::f16: return std::ldexp(1.0, -11);
    case DType::bf16: return std::ldexp(1.0, -8);
    case DType::i32: return 0.0;
  }
  return 0.0;
}

double smallest_normal(DType t) {
  switch (t) {
    case DType::f64: return std::numeric_limits<double>::min();
    case DType::f32:
    case DType::bf16: return std::ldexp(1.0, -126);
    case DType::f16: return std::ldexp(1.0, -14);
    case DType::i32: return 0.0;
  }
  return 0.0;
}

double round_to(DType t, double value) {
  switch (t) {
    case DType::f64: return value;
    case DType::f32: return static_cast<double>(static_cast<float>(value));  // IEEE conversion: ties to even
    case DType::f16: return round_to_format_fast(value, kF16);
    case DType::bf16: return round_to_format_fast(value, kBf16);
    case DType::i32: return value;
  }
  return value;
}

std::uint16_t bf16_bits(double value) {
  // A bf16 value is exactly representable as a float; its bits are the float's upper half.
  const float f = static_cast<float>(value);
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if (std::isnan(f)) return 0x7FC0;
  return static_cast<std::uint16_t>(u >> 16);
}

double bf16_from_bits(std::uint16_t bits) {
  const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

std::uint16_t f16_bits(double value) {
  if (std::isnan(value)) return 0x7E00;
  const std::uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  const double a = std::fabs(value);
  if (std::isinf(a)) return sign | 0x7C00;
  if (a == 0.0) return sign;
  int e = std::ilogb(a);
  if (e < -14) {  // subnormal: a = m * 2^-24 with integral m < 1024
    return sign | static_cast<std::uint16_t>(std::ldexp(a, 24));
  }
  const auto mantissa = static_cast<std::uint16_t>(std::ldexp(a, 10 - e) - 1024.0);
  return sign | static_cast<std::uint16_t>((e + 15) << 10) | mantissa;
}

double f16_from_bits(std::uint16_t bits) {
  const double sign = (bits & 0x8000) ? -1.0 : 1.0;
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  if (exponent == 0x1F)
    return mantissa ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

}  // namespace ssd
