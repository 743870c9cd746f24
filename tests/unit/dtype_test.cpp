// Storage dtypes: exact round-to-nearest-even into bf16/f16/f32, bit patterns, names and parsing.
#include <cmath>
#include <cstdint>
#include <limits>

#include "test_support.h"

namespace ssd_test {
namespace {

using ssd::bf16_bits;
using ssd::bf16_from_bits;
using ssd::f16_bits;
using ssd::f16_from_bits;
using ssd::round_to;

double p2(int k) { return std::ldexp(1.0, k); }

// bf16 keeps 8 significant bits: the ulp of [1,2) is 2^-7, so 1 + 2^-8 is a tie.
TEST(RoundTo, Bf16TiesToEven) {
  // 1 + 2^-8 lies halfway between 1 (significand ...0, even) and 1 + 2^-7 (odd): goes to 1.
  EXPECT_EQ(round_to(DType::bf16, 1.0 + p2(-8)), 1.0);
  // 1 + 3*2^-8 lies halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (= 1 + 2*2^-7, even): goes up.
  EXPECT_EQ(round_to(DType::bf16, 1.0 + 3 * p2(-8)), 1.0 + p2(-6));
  // Just above the tie rounds up; just below rounds down.
  EXPECT_EQ(round_to(DType::bf16, 1.0 + p2(-8) + p2(-20)), 1.0 + p2(-7));
  EXPECT_EQ(round_to(DType::bf16, 1.0 + p2(-8) - p2(-20)), 1.0);
  // Symmetric for negative values.
  EXPECT_EQ(round_to(DType::bf16, -(1.0 + 3 * p2(-8))), -(1.0 + p2(-6)));
  // Representable values are unchanged.
  EXPECT_EQ(round_to(DType::bf16, 3.0), 3.0);
  EXPECT_EQ(round_to(DType::bf16, 1.0 + p2(-7)), 1.0 + p2(-7));
  // 257 = 2^8 + 1 needs 9 bits: a tie between 256 (even) and 258: goes to 256; 259 -> 260.
  EXPECT_EQ(round_to(DType::bf16, 257.0), 256.0);
  EXPECT_EQ(round_to(DType::bf16, 259.0), 260.0);
}

// f16 keeps 11 significant bits: ulp of [1,2) is 2^-10.
TEST(RoundTo, F16TiesToEven) {
  EXPECT_EQ(round_to(DType::f16, 1.0 + p2(-11)), 1.0);                 // tie -> even (1)
  EXPECT_EQ(round_to(DType::f16, 1.0 + 3 * p2(-11)), 1.0 + p2(-9));    // tie -> even (1 + 2*2^-10)
  EXPECT_EQ(round_to(DType::f16, 2049.0), 2048.0);                     // 2^11 + 1: tie -> 2048
  EXPECT_EQ(round_to(DType::f16, 2051.0), 2052.0);                     // tie between 2050 and 2052
  EXPECT_EQ(round_to(DType::f16, 0.1), 0.0999755859375);               // 1638 * 2^-14
}

// f32 keeps 24 significant bits: ulp of [1,2) is 2^-23.
TEST(RoundTo, F32TiesToEven) {
  EXPECT_EQ(round_to(DType::f32, 1.0 + p2(-24)), 1.0);
  EXPECT_EQ(round_to(DType::f32, 1.0 + 3 * p2(-24)), 1.0 + p2(-22));
  EXPECT_EQ(round_to(DType::f32, 0.1), static_cast<double>(0.1f));
  EXPECT_EQ(round_to(DType::f32, 16777217.0), 16777216.0);  // 2^24 + 1: tie -> 2^24
}

TEST(RoundTo, F64AndI32AreIdentity) {
  EXPECT_EQ(round_to(DType::f64, 0.1), 0.1);
  EXPECT_EQ(round_to(DType::f64, 1.0 + p2(-52)), 1.0 + p2(-52));
  EXPECT_EQ(round_to(DType::i32, 7.0), 7.0);
  EXPECT_EQ(round_to(DType::i32, -3.0), -3.0);
}

// f16 subnormals have the fixed quantum 2^-24 (emin = -14, 10 stored bits).
TEST(RoundTo, F16Subnormals) {
  EXPECT_EQ(round_to(DType::f16, p2(-24)), p2(-24));              // smallest subnormal
  EXPECT_EQ(round_to(DType::f16, p2(-25)), 0.0);                  // tie between 0 (even) and 2^-24
  EXPECT_TRUE(std::signbit(round_to(DType::f16, -p2(-25))));      // ... keeps its sign: -0
  EXPECT_EQ(round_to(DType::f16, 3 * p2(-26)), p2(-24));          // 0.75 quanta -> 1 quantum
  EXPECT_EQ(round_to(DType::f16, p2(-25) + p2(-40)), p2(-24));    // just above the tie
  EXPECT_EQ(round_to(DType::f16, 3 * p2(-25)), p2(-23));          // 1.5 quanta: tie -> 2 quanta
  EXPECT_EQ(round_to(DType::f16, 5 * p2(-25)), p2(-23));          // 2.5 quanta: tie -> 2 quanta
  EXPECT_EQ(round_to(DType::f16, 1023 * p2(-24)), 1023 * p2(-24));  // largest subnormal
  EXPECT_EQ(round_to(DType::f16, 1023.5 * p2(-24)), p2(-14));     // tie -> 1024 quanta = smallest normal
  EXPECT_EQ(round_to(DType::f16, p2(-14)), p2(-14));
  EXPECT_EQ(round_to(DType::f16, p2(-30)), 0.0);                  // far below: 0
}

TEST(RoundTo, Bf16AndF32Subnormals) {
  // bf16: emin = -126, 7 stored bits: quantum 2^-133.
  EXPECT_EQ(round_to(DType::bf16, p2(-133)), p2(-133));
  EXPECT_EQ(round_to(DType::bf16, p2(-134)), 0.0);            // tie -> 0
  EXPECT_EQ(round_to(DType::bf16, 3 * p2(-135)), p2(-133));   // 0.75 quanta -> 1
  EXPECT_EQ(round_to(DType::bf16, 3 * p2(-134)), p2(-132));   // 1.5 quanta -> 2
  // f32: quantum 2^-149.
  EXPECT_EQ(round_to(DType::f32, p2(-149)), p2(-149));
  EXPECT_EQ(round_to(DType::f32, p2(-150)), 0.0);
  EXPECT_EQ(round_to(DType::f32, 3 * p2(-150)), p2(-148));
  EXPECT_EQ(round_to(DType::f32, p2(-149)), static_cast<double>(std::numeric_limits<float>::denorm_min()));
}

TEST(RoundTo, Overflow) {
  // f16 max = (2 - 2^-10) * 2^15 = 65504; the next step would be 65536, so the midpoint is 65520.
  EXPECT_EQ(round_to(DType::f16, 65504.0), 65504.0);
  EXPECT_EQ(round_to(DType::f16, 65519.0), 65504.0);
  EXPECT_EQ(round_to(DType::f16, 65520.0), kInf);   // tie: rounds to the even 2^16, which overflows
  EXPECT_EQ(round_to(DType::f16, -65520.0), -kInf);
  EXPECT_EQ(round_to(DType::f16, 1e6), kInf);
  // bf16 max = (2 - 2^-7) * 2^127; midpoint to 2^128 is (2 - 2^-8) * 2^127.
  const double bf16_max = (2.0 - p2(-7)) * p2(127);
  EXPECT_EQ(round_to(DType::bf16, bf16_max), bf16_max);
  EXPECT_EQ(round_to(DType::bf16, (2.0 - p2(-8)) * p2(127)), kInf);
  EXPECT_EQ(round_to(DType::bf16, (2.0 - p2(-8) - p2(-20)) * p2(127)), bf16_max);
  // f32 max = FLT_MAX = (2 - 2^-23) * 2^127; midpoint (2 - 2^-24) * 2^127.
  const double f32_max = static_cast<double>(std::numeric_limits<float>::max());
  EXPECT_EQ(round_to(DType::f32, f32_max), f32_max);
  EXPECT_EQ(round_to(DType::f32, (2.0 - p2(-24)) * p2(127)), kInf);
  EXPECT_EQ(round_to(DType::f32, -1e300), -kInf);
}

TEST(RoundTo, NonFiniteAndZeroPassThrough) {
  for (DType t : {DType::f32, DType::f16, DType::bf16}) {
    EXPECT_EQ(round_to(t, kInf), kInf);
    EXPECT_EQ(round_to(t, -kInf), -kInf);
    EXPECT_TRUE(std::isnan(round_to(t, std::numeric_limits<double>::quiet_NaN())));
    EXPECT_EQ(round_to(t, 0.0), 0.0);
    EXPECT_TRUE(std::signbit(round_to(t, -0.0)));
  }
}

// Rounding goes straight from double to the target: never through float first.
TEST(RoundTo, NoDoubleRounding) {
  // v = 1 + 2^-8 + 2^-30 is just above the bf16 tie 1 + 2^-8, so it rounds up to 1 + 2^-7.
  // Through float first: 2^-30 is below half an f32 ulp of 1 (2^-24), so float gives 1 + 2^-8,
  // an exact bf16 tie, which then goes to the even 1. The two paths differ; the direct one is right.
  const double v = 1.0 + p2(-8) + p2(-30);
  EXPECT_EQ(round_to(DType::bf16, v), 1.0 + p2(-7));
  EXPECT_EQ(round_to(DType::bf16, round_to(DType::f32, v)), 1.0);  // the double-rounding path
  // Same trap for f16: 1 + 2^-11 + 2^-40 -> 1 + 2^-10 directly, 1 via float.
  const double w = 1.0 + p2(-11) + p2(-40);
  EXPECT_EQ(round_to(DType::f16, w), 1.0 + p2(-10));
  EXPECT_EQ(round_to(DType::f16, round_to(DType::f32, w)), 1.0);
  // And for f32 itself: 1 + 2^-24 + 2^-40 (exact in double) is above the f32 tie.
  EXPECT_EQ(round_to(DType::f32, 1.0 + p2(-24) + p2(-40)), 1.0 + p2(-23));
}

TEST(Bits, KnownPatterns) {
  EXPECT_EQ(bf16_bits(1.0), 0x3F80);
  EXPECT_EQ(bf16_bits(-2.0), 0xC000);
  EXPECT_EQ(bf16_bits(1.0 + p2(-7)), 0x3F81);
  EXPECT_EQ(bf16_bits(0.0), 0x0000);
  EXPECT_EQ(bf16_bits(-0.0), 0x8000);
  EXPECT_EQ(bf16_bits(kInf), 0x7F80);
  EXPECT_EQ(bf16_bits(p2(-133)), 0x0001);  // smallest bf16 subnormal

  EXPECT_EQ(f16_bits(1.0), 0x3C00);
  EXPECT_EQ(f16_bits(-2.0), 0xC000);
  EXPECT_EQ(f16_bits(1.0 + p2(-10)), 0x3C01);
  EXPECT_EQ(f16_bits(65504.0), 0x7BFF);
  EXPECT_EQ(f16_bits(kInf), 0x7C00);
  EXPECT_EQ(f16_bits(-kInf), 0xFC00);
  EXPECT_EQ(f16_bits(0.0), 0x0000);
  EXPECT_EQ(f16_bits(-0.0), 0x8000);
  EXPECT_EQ(f16_bits(p2(-24)), 0x0001);          // smallest subnormal
  EXPECT_EQ(f16_bits(-p2(-24)), 0x8001);
  EXPECT_EQ(f16_bits(1023 * p2(-24)), 0x03FF);   // largest subnormal
  EXPECT_EQ(f16_bits(p2(-14)), 0x0400);          // smallest normal

  EXPECT_EQ(f16_from_bits(0x3C00), 1.0);
  EXPECT_EQ(f16_from_bits(0x0001), p2(-24));
  EXPECT_EQ(f16_from_bits(0x7BFF), 65504.0);
  EXPECT_EQ(f16_from_bits(0x7C00), kInf);
  EXPECT_TRUE(std::signbit(f16_from_bits(0x8000)));
  EXPECT_EQ(f16_from_bits(0x8000), 0.0);
  EXPECT_EQ(bf16_from_bits(0x3F80), 1.0);
  EXPECT_EQ(bf16_from_bits(0xC000), -2.0);
  EXPECT_EQ(bf16_from_bits(0x0001), p2(-133));
}

TEST(Bits, NanMapsToNan) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::uint16_t f16 = f16_bits(nan);
  EXPECT_EQ(f16 & 0x7C00, 0x7C00);  // exponent all ones
  EXPECT_NE(f16 & 0x03FF, 0);       // non-zero mantissa
  const std::uint16_t bf16 = bf16_bits(nan);
  EXPECT_EQ(bf16 & 0x7F80, 0x7F80);
  EXPECT_NE(bf16 & 0x007F, 0);
  EXPECT_TRUE(std::isnan(f16_from_bits(0x7E00)));
  EXPECT_TRUE(std::isnan(bf16_from_bits(0x7FC0)));
}

// Every non-NaN 16-bit pattern decodes to a value that is its own rounding and encodes back to itself.
TEST(Bits, F16RoundTripAllPatterns) {
  int checked = 0;
  for (std::uint32_t u = 0; u <= 0xFFFF; ++u) {
    const auto bits = static_cast<std::uint16_t>(u);
    if ((bits & 0x7C00) == 0x7C00 && (bits & 0x03FF) != 0) continue;  // NaN
    const double v = f16_from_bits(bits);
    ASSERT_EQ(f16_bits(v), bits) << "pattern " << u;
    const double r = round_to(DType::f16, v);
    ASSERT_EQ(f16_bits(r), bits) << "pattern " << u;  // bitwise, so -0 stays -0
    ++checked;
  }
  EXPECT_EQ(checked, 65536 - 2 * 1023);  // 2 signs x 1023 NaN mantissas
}

TEST(Bits, Bf16RoundTripAllPatterns) {
  int checked = 0;
  for (std::uint32_t u = 0; u <= 0xFFFF; ++u) {
    const auto bits = static_cast<std::uint16_t>(u);
    if ((bits & 0x7F80) == 0x7F80 && (bits & 0x007F) != 0) continue;  // NaN
    const double v = bf16_from_bits(bits);
    ASSERT_EQ(bf16_bits(v), bits) << "pattern " << u;
    ASSERT_EQ(bf16_bits(round_to(DType::bf16, v)), bits) << "pattern " << u;
    ++checked;
  }
  EXPECT_EQ(checked, 65536 - 2 * 127);
}

TEST(Bits, ConsecutiveF16PatternsAreConsecutiveValues) {
  // Positive finite patterns are ordered: the midpoint of two neighbours rounds to the even one.
  for (std::uint16_t bits = 0x0000; bits < 0x7BFF; ++bits) {
    const double lo = f16_from_bits(bits);
    const double hi = f16_from_bits(static_cast<std::uint16_t>(bits + 1));
    ASSERT_LT(lo, hi);
    const double mid = lo + (hi - lo) / 2;  // exact in double
    const double expected = (bits % 2 == 0) ? lo : hi;
    ASSERT_EQ(round_to(DType::f16, mid), expected) << "between patterns " << bits << " and " << bits + 1;
  }
}

TEST(DTypeInfo, NamesAndParse) {
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::i32})
    EXPECT_EQ(ssd::parse_dtype(ssd::dtype_name(t), "dtype"), t);
  EXPECT_EQ(ssd::dtype_name(DType::bf16), "bf16");
  EXPECT_EQ(ssd::parse_dtype("f16", "x_dtype"), DType::f16);
}

TEST(DTypeInfo, ParseRejectsUnknownNamesNamingTheArgument) {
  expect_argument_error([] { (void)ssd::parse_dtype("float32", "x_dtype"); }, {"x_dtype"});
  expect_argument_error([] { (void)ssd::parse_dtype("", "state_dtype"); }, {"state_dtype"});
  expect_argument_error([] { (void)ssd::parse_dtype("BF16", "B_dtype"); }, {"B_dtype"});
  expect_argument_error([] { (void)ssd::parse_dtype("f8", "C_dtype"); }, {"C_dtype"});
}

TEST(DTypeInfo, Properties) {
  EXPECT_TRUE(ssd::is_float(DType::f32));
  EXPECT_TRUE(ssd::is_float(DType::f16));
  EXPECT_TRUE(ssd::is_float(DType::bf16));
  EXPECT_TRUE(ssd::is_float(DType::f64));
  EXPECT_FALSE(ssd::is_float(DType::i32));
  EXPECT_EQ(ssd::unit_roundoff(DType::bf16), p2(-8));
  EXPECT_EQ(ssd::unit_roundoff(DType::f16), p2(-11));
  EXPECT_EQ(ssd::unit_roundoff(DType::f32), p2(-24));
  EXPECT_EQ(ssd::unit_roundoff(DType::f64), p2(-53));
  EXPECT_EQ(ssd::unit_roundoff(DType::i32), 0.0);
  EXPECT_EQ(ssd::smallest_normal(DType::f16), p2(-14));
  EXPECT_EQ(ssd::smallest_normal(DType::bf16), p2(-126));
  EXPECT_EQ(ssd::smallest_normal(DType::f32), p2(-126));
}

TEST(TensorValues, ConstructorAndSetRoundToTheDtype) {
  const Tensor t(DType::f16, {3}, {65520.0, 1.0 + 3 * p2(-11), p2(-25)});
  EXPECT_EQ(t[0], kInf);
  EXPECT_EQ(t[1], 1.0 + p2(-9));
  EXPECT_EQ(t[2], 0.0);
  Tensor u(DType::bf16, {2, 2});
  EXPECT_EQ(u.numel(), 4);
  EXPECT_EQ(u.at({1, 1}), 0.0);
  u.set(u.offset({1, 0}), 1.0 + p2(-8) + p2(-30));
  EXPECT_EQ(u.at({1, 0}), 1.0 + p2(-7));
  EXPECT_EQ(u.offset({1, 0}), 2);
  const Tensor w(DType::f64, {1}, {0.1});
  EXPECT_EQ(w[0], 0.1);
}

}  // namespace
}  // namespace ssd_test
