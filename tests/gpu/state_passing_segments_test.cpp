// state_passing_fast.cu's segments kernel (gpu/src/state_passing_segments.h), replayed on the host:
// the split of a chain into windows and segments on hand-worked lengths, and the kernel's
// arithmetic (each segment scanned from zero, the fold, the walk from the entering state) against
// the one-element kernel's sequential walk M = scale * M + value. With scales 0 and 1 and integer
// values every fp32 operation is exact, so the two must agree bit for bit: any chunk taken twice,
// skipped, or folded in the wrong order shows. So they must where a segment's product of scales
// leaves fp32's range but the state carried chunk by chunk does not (powers of two: exact).
#include "state_passing_segments.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {

namespace segments = ssd_gpu::state_passing_segments;

// 16 chunks: segments of 2 (16 / 8); 20: of 3 (20 / 8 = 2.5); 128 and more: of 16, windows of 128.
TEST(StatePassingSegments, LengthsAndChunks) {
  EXPECT_EQ(segments::segment_length(1), 1);
  EXPECT_EQ(segments::segment_length(8), 1);
  EXPECT_EQ(segments::segment_length(9), 2);
  EXPECT_EQ(segments::segment_length(16), 2);
  EXPECT_EQ(segments::segment_length(20), 3);
  EXPECT_EQ(segments::segment_length(128), 16);
  EXPECT_EQ(segments::segment_length(129), 16);
  EXPECT_EQ(segments::segment_length(int64_t{1} << 40), 16);
  // 20 chunks of 3: segments 0..5 take 3 each (0..17), segment 6 takes 18, 19, segment 7 none.
  EXPECT_EQ(segments::segment_chunks(20, 3, 0, 5).first, 15);
  EXPECT_EQ(segments::segment_chunks(20, 3, 0, 5).count, 3);
  EXPECT_EQ(segments::segment_chunks(20, 3, 0, 6).first, 18);
  EXPECT_EQ(segments::segment_chunks(20, 3, 0, 6).count, 2);
  EXPECT_EQ(segments::segment_chunks(20, 3, 0, 7).count, 0);
  // 130 chunks: window 0 holds 0..127; window 1 (c0 = 128) segment 0 holds 128, 129, the rest none.
  EXPECT_EQ(segments::segment_chunks(130, 16, 0, 7).first, 112);
  EXPECT_EQ(segments::segment_chunks(130, 16, 0, 7).count, 16);
  EXPECT_EQ(segments::segment_chunks(130, 16, 128, 0).count, 2);
  EXPECT_EQ(segments::segment_chunks(130, 16, 128, 1).count, 0);
}

// One segment by hand: scales 1, 0.5, 1 and values 2, 4, 6 from zero: 2, then 0.5 * 2 + 4 = 5, then
// 5 + 6 = 11; the product 0.5, every scale safe. Folding it from 8: 0.5 * 8 + 11 = 15 = the walk
// 8 -> 10 -> 9 -> 15, by either fold (0.5 is the extended product 0.5 x 2^0).
TEST(StatePassingSegments, OneSegmentByHand) {
  const float scale[3] = {1.0f, 0.5f, 1.0f};
  float value[segments::kSegmentChunks] = {2.0f, 4.0f, 6.0f};
  const segments::SegmentSum sum = segments::scan_from_zero(scale, value, 3);
  EXPECT_EQ(sum.end, 11.0f);
  EXPECT_EQ(sum.product, 0.5f);
  for (const float x : scale) EXPECT_TRUE(segments::safe_scale(x)) << x;
  float product[segments::kSegments], end[segments::kSegments];
  segments::Extended extended[segments::kSegments];
  for (int s = 0; s < segments::kSegments; ++s) product[s] = 1.0f, extended[s] = {1.0f, 0}, end[s] = 0.0f;  // empty
  product[0] = sum.product, extended[0] = {0.5f, 0}, end[0] = sum.end;
  const segments::Folded f = segments::fold_plain(8.0f, product, end, 1, 0);
  EXPECT_EQ(f.own_entering, 8.0f);
  EXPECT_EQ(f.after, 15.0f);
  const segments::Folded g = segments::fold_extended(8.0f, extended, end, 1, 0);
  EXPECT_EQ(g.own_entering, 8.0f);
  EXPECT_EQ(g.after, 15.0f);
}

// The safe range by hand: 0 (either sign) and |scale| in [2^-7, 2^7] = [0.0078125, 128], both ends
// included; the next floats outside either end, subnormals, inf and NaN are not safe.
TEST(StatePassingSegments, SafeScaleRange) {
  EXPECT_TRUE(segments::safe_scale(0.0f));
  EXPECT_TRUE(segments::safe_scale(-0.0f));
  EXPECT_TRUE(segments::safe_scale(0.0078125f));
  EXPECT_TRUE(segments::safe_scale(-128.0f));
  EXPECT_TRUE(segments::safe_scale(0.5f));
  EXPECT_FALSE(segments::safe_scale(std::nextafter(0.0078125f, 0.0f)));
  EXPECT_FALSE(segments::safe_scale(std::nextafter(128.0f, 1000.0f)));
  EXPECT_FALSE(segments::safe_scale(-std::nextafter(128.0f, 1000.0f)));
  EXPECT_FALSE(segments::safe_scale(std::numeric_limits<float>::denorm_min()));
  EXPECT_FALSE(segments::safe_scale(std::numeric_limits<float>::infinity()));
  EXPECT_FALSE(segments::safe_scale(std::numeric_limits<float>::quiet_NaN()));
}

// The kernel's walk of one element's chain, thread by thread as the kernel splits it: the states
// entering every chunk and the final state. As in the kernel, a window whose scales are all safe
// takes the plain fold, any other the extended one; `windows_extended` counts the latter.
struct Chain {
  std::vector<float> entering;
  float final_state;
};
Chain segmented(const std::vector<float>& scale, const std::vector<float>& value, float initial,
                int* windows_extended = nullptr) {
  const int64_t NC = static_cast<int64_t>(scale.size());
  const int length = segments::segment_length(NC);
  Chain out{std::vector<float>(scale.size(), -1.0f), 0.0f};
  float M = initial;
  for (int64_t c0 = 0; c0 < NC; c0 += int64_t{segments::kSegments} * length) {
    float product[segments::kSegments], end[segments::kSegments];
    segments::Extended extended[segments::kSegments];
    bool safe = true;
    float v[segments::kSegments][segments::kSegmentChunks] = {};
    for (int s = 0; s < segments::kSegments; ++s) {  // every thread's loads and scan from zero
      const segments::SegmentChunks own = segments::segment_chunks(NC, length, c0, s);
      for (int k = 0; k < own.count; ++k) v[s][k] = value[own.first + k];
      const float* sc = own.count > 0 ? &scale[own.first] : nullptr;
      const segments::SegmentSum sum = segments::scan_from_zero(sc, v[s], own.count);
      product[s] = sum.product, end[s] = sum.end;
      extended[s] = segments::extended_product(sc, own.count);
      for (int k = 0; k < own.count; ++k) safe = safe && segments::safe_scale(sc[k]);  // the kernel's vote
    }
    if (!safe && windows_extended != nullptr) ++*windows_extended;
    float after = M;
    for (int s = 0; s < segments::kSegments; ++s) {  // every thread's fold and walk
      const segments::Folded f = safe ? segments::fold_plain(M, product, end, 1, s)
                                      : segments::fold_extended(M, extended, end, 1, s);
      if (s > 0) {
        EXPECT_EQ(f.after, after) << "threads of one element fold to different states";
      }
      after = f.after;
      const segments::SegmentChunks own = segments::segment_chunks(NC, length, c0, s);
      float entering = f.own_entering;
      for (int k = 0; k < own.count; ++k) {
        EXPECT_EQ(out.entering[own.first + k], -1.0f) << "chunk " << own.first + k << " stored twice";
        out.entering[own.first + k] = entering;
        entering = scale[own.first + k] * entering + v[s][k];
      }
    }
    M = after;
  }
  out.final_state = M;
  return out;
}

Chain sequential(const std::vector<float>& scale, const std::vector<float>& value, float initial) {
  Chain out{std::vector<float>(scale.size()), 0.0f};
  float M = initial;
  for (size_t c = 0; c < scale.size(); ++c) {
    out.entering[c] = M;
    M = scale[c] * M + value[c];
  }
  out.final_state = M;
  return out;
}

// Chains of 1..300 chunks (one and several windows, partial and empty segments), scales 0 (a new
// sequence) or 1, integer values: exact in fp32, so bit for bit.
TEST(StatePassingSegments, MatchesTheSequentialWalkExactly) {
  std::mt19937 rng(20261205);
  std::uniform_int_distribution<int> small(-50, 50), coin(0, 9);
  for (int NC = 1; NC <= 300; ++NC) {
    std::vector<float> scale(NC), value(NC);
    for (int c = 0; c < NC; ++c) {
      scale[c] = coin(rng) == 0 ? 0.0f : 1.0f;
      value[c] = static_cast<float>(small(rng));
    }
    const float initial = static_cast<float>(small(rng));
    const Chain want = sequential(scale, value, initial), got = segmented(scale, value, initial);
    for (int c = 0; c < NC; ++c) ASSERT_EQ(got.entering[c], want.entering[c]) << "NC " << NC << ", chunk " << c;
    ASSERT_EQ(got.final_state, want.final_state) << "NC " << NC;
  }
}

// A segment whose scales multiply to more than fp32 holds (2^70 x 3 = 2^210: infinite) entered with
// a zero state: the walk carries 0 (0 * 2^70 = 0), a product would give inf * 0 = NaN. Found by the
// fuzz campaign (Mamba2Fwd, q1, negative dt'), where it put a NaN in the output.
TEST(StatePassingSegments, ProductOverflowWithAZeroState) {
  const int NC = 24;  // segments of 3
  std::vector<float> scale(NC, 1.0f), value(NC, 0.0f);
  for (int c = 0; c < 3; ++c) scale[c] = std::ldexp(1.0f, 70);
  for (int c = 3; c < NC; ++c) value[c] = static_cast<float>(c);
  const Chain want = sequential(scale, value, 0.0f), got = segmented(scale, value, 0.0f);
  for (int c = 0; c < NC; ++c) ASSERT_EQ(got.entering[c], want.entering[c]) << "chunk " << c;
  EXPECT_EQ(got.final_state, want.final_state);
  EXPECT_EQ(got.entering[3], 0.0f);  // by hand: the state is zero through the first segment
}

// A segment whose scales multiply to less than fp32 holds (2^-60 x 3 = 2^-180: flushed to 0) carrying
// a large state: 2^100 -> 2^40 -> 2^-20 -> 2^-80, all normal; a product would carry 0. The next
// segment's scale 2^80 brings it back to 1.
TEST(StatePassingSegments, ProductUnderflowWithALargeState) {
  const int NC = 24;
  std::vector<float> scale(NC, 1.0f), value(NC, 0.0f);
  for (int c = 0; c < 3; ++c) scale[c] = std::ldexp(1.0f, -60);
  scale[3] = std::ldexp(1.0f, 80);
  for (int c = 4; c < NC; ++c) value[c] = 1.0f;
  const float initial = std::ldexp(1.0f, 100);
  const Chain want = sequential(scale, value, initial), got = segmented(scale, value, initial);
  for (int c = 0; c < NC; ++c) ASSERT_EQ(got.entering[c], want.entering[c]) << "chunk " << c;
  EXPECT_EQ(got.final_state, want.final_state);
  EXPECT_EQ(got.entering[3], std::ldexp(1.0f, -80));
  EXPECT_EQ(got.entering[4], 1.0f);
}

// The extended product by hand: three scales of 2^-60 make 2^-180 and three of 2^70 make 2^210,
// both outside fp32, carried exactly; 2^-180 carries 2^100 to 2^-80. Two subnormal scales of
// 2^-130 and one of 2^60 make 2^-200, which carries 2^100 to 2^-100 and -2^-90 to -0; 2^210 carries
// the subnormal 2^-140 to 2^70 and 2^-70 past FLT_MAX (inf).
TEST(StatePassingSegments, ProductInAnExtendedRange) {
  const float small[3] = {std::ldexp(1.0f, -60), std::ldexp(1.0f, -60), std::ldexp(1.0f, -60)};
  EXPECT_FALSE(segments::safe_scale(small[0]));
  const segments::Extended p = segments::extended_product(small, 3);
  EXPECT_EQ(std::ldexp(static_cast<double>(p.mantissa), p.exponent), std::ldexp(1.0, -180));
  EXPECT_EQ(segments::carry(p, std::ldexp(1.0f, 100)), std::ldexp(1.0f, -80));
  const float large[3] = {std::ldexp(1.0f, 70), std::ldexp(1.0f, 70), std::ldexp(1.0f, 70)};
  EXPECT_FALSE(segments::safe_scale(large[0]));
  const segments::Extended q = segments::extended_product(large, 3);
  EXPECT_EQ(std::ldexp(static_cast<double>(q.mantissa), q.exponent), std::ldexp(1.0, 210));
  const float subnormal[3] = {std::ldexp(1.0f, -130), std::ldexp(1.0f, -130), std::ldexp(1.0f, 60)};
  const segments::Extended r = segments::extended_product(subnormal, 3);
  EXPECT_EQ(std::ldexp(static_cast<double>(r.mantissa), r.exponent), std::ldexp(1.0, -200));
  EXPECT_EQ(segments::carry(r, std::ldexp(1.0f, 100)), std::ldexp(1.0f, -100));
  EXPECT_EQ(segments::carry(r, -std::ldexp(1.0f, -90)), -0.0f);  // -2^-290: a zero, signed
  EXPECT_TRUE(std::signbit(segments::carry(r, -std::ldexp(1.0f, -90))));
  EXPECT_EQ(segments::carry(q, std::ldexp(1.0f, -140)), std::ldexp(1.0f, 70));  // a subnormal state
  EXPECT_EQ(segments::carry(q, std::ldexp(1.0f, -70)), std::numeric_limits<float>::infinity());  // 2^140
}

// A random value mantissa x 2^exponent as a double (exact: the exponents stay within double's).
double value_of(segments::Extended p) { return std::ldexp(static_cast<double>(p.mantissa), p.exponent); }

// times() over random scales anywhere in fp32 (subnormal, normal, near FLT_MAX; signs mixed), 16
// at a time: after every multiply the extended product is the previous one times the scale rounded
// once to 24 bits, as in a float with an unbounded exponent. The reference rounds the exact double
// product's significand to float; the scales' exponents are bounded so the reference stays in
// double's range (|exponent sum| < 1000).
TEST(StatePassingSegments, ExtendedProductRoundsEachMultiplyOnce) {
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> significand(1.0f, 2.0f);
  std::uniform_int_distribution<int> power(-149, 127), coin(0, 1);
  for (int chain = 0; chain < 20000; ++chain) {
    segments::Extended p{1.0f, 0};
    double mantissa = 1.0;  // the reference: a float significand in [0.5, 1) and a power of two
    int exponent = 0;
    for (int k = 0; k < segments::kSegmentChunks; ++k) {
      float scale = std::ldexp(significand(rng), power(rng) % 60);  // within double's range over 16
      if (k % 5 == 4) scale = std::ldexp(significand(rng), power(rng));  // sometimes anywhere
      if (coin(rng)) scale = -scale;
      if (std::abs(exponent) > 800) break;
      int e = 0;
      mantissa = static_cast<float>(std::frexp(mantissa * static_cast<double>(scale), &e));
      exponent += e;
      p = segments::times(p, scale);
      ASSERT_EQ(value_of(p), std::ldexp(mantissa, exponent)) << "chain " << chain << ", chunk " << k;
    }
  }
}

// 16 scales of 0.9 x 2^-9, each just outside the range whose plain fp32 product is safe: their
// product, about 2^-146.4, is subnormal in fp32 (digits lost), so the segment takes the extended
// product, equal to a multiply-by-multiply rounding to 24 bits with an unbounded exponent.
TEST(StatePassingSegments, ScalesPastTheSafeRangeTakeTheExtendedProduct) {
  float scale[segments::kSegmentChunks];
  double mantissa = 1.0;
  int exponent = 0;
  for (int k = 0; k < segments::kSegmentChunks; ++k) {
    scale[k] = std::ldexp(0.9f, -9);
    int e = 0;
    mantissa = static_cast<float>(std::frexp(mantissa * static_cast<double>(scale[k]), &e));
    exponent += e;
  }
  EXPECT_FALSE(segments::safe_scale(scale[0]));
  const segments::Extended p = segments::extended_product(scale, segments::kSegmentChunks);
  EXPECT_EQ(value_of(p), std::ldexp(mantissa, exponent));
  EXPECT_LT(value_of(p), static_cast<double>(std::numeric_limits<float>::min()));  // outside fp32's normals
}

// carry() against its definition, the exact product m x state x 2^e rounded once to fp32, over
// random products whose results land everywhere: normal, subnormal, just under half the smallest
// subnormal (zero), past FLT_MAX, and zero states. Every path is taken (counted).
TEST(StatePassingSegments, CarryRoundsTheExactProductOnce) {
  std::mt19937 rng(20261206);
  std::uniform_real_distribution<float> significand(1.0f, 2.0f);
  std::uniform_int_distribution<int> m_power(-64, 63), state_power(-149, 127), result_power(-190, 140), coin(0, 15);
  int normal = 0, subnormal = 0, zero = 0, infinite = 0;
  for (int n = 0; n < 200000; ++n) {
    const float m = std::ldexp(significand(rng), m_power(rng)) * (coin(rng) < 8 ? 1.0f : -1.0f);
    const float state = coin(rng) == 0 ? 0.0f : std::ldexp(significand(rng), state_power(rng));
    int product_power = 0;
    std::frexp(static_cast<double>(m) * state, &product_power);
    const int e = result_power(rng) - product_power;
    const float want = static_cast<float>(std::ldexp(static_cast<double>(m) * static_cast<double>(state), e));
    const float got = segments::carry({m, e}, state);
    ASSERT_EQ(std::signbit(got), std::signbit(want)) << m << " x " << state << " x 2^" << e;
    ASSERT_EQ(got, want) << m << " x " << state << " x 2^" << e;
    const float magnitude = std::fabs(want);
    if (std::isinf(want)) ++infinite;
    else if (magnitude == 0.0f) ++zero;
    else if (magnitude < std::numeric_limits<float>::min()) ++subnormal;
    else ++normal;
  }
  EXPECT_GT(normal, 1000);
  EXPECT_GT(subnormal, 1000);
  EXPECT_GT(zero, 1000);
  EXPECT_GT(infinite, 1000);
}

// Random chains (scales in [0.5, 1], one in 20 of them divided by 256, outside the safe range, so
// that windows take both folds; values in [-1, 1], 1..300 chunks, a random entering state):
// every state the segments give is within the contract's bound of the float64 walk, |got - exact|
// <= k u_acc phi(n) S with u_acc = 2^-24, phi(n) = sqrt(n) + 4 over the n chunks before it, S the
// walk on absolute values and k = 2, the low end of tolerance.md's calibrated 2 to 4: associating
// the chain by segments costs no more than the rule allows any fp32 order.
TEST(StatePassingSegments, WithinTheToleranceRule) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> decay(0.5f, 1.0f), value_of(-1.0f, 1.0f);
  std::uniform_int_distribution<int> rare(0, 19);
  double worst = 0.0;
  int windows = 0, windows_extended = 0;
  for (int NC = 1; NC <= 300; NC += 7) {
    std::vector<float> scale(NC), value(NC);
    for (int c = 0; c < NC; ++c) scale[c] = decay(rng) * (rare(rng) == 0 ? 1.0f / 256 : 1.0f), value[c] = value_of(rng);
    const float initial = value_of(rng);
    const Chain got = segmented(scale, value, initial, &windows_extended);
    const int64_t window = int64_t{segments::kSegments} * segments::segment_length(NC);
    windows += static_cast<int>((NC + window - 1) / window);
    double exact = initial, magnitude = std::fabs(initial);
    for (int c = 0; c <= NC; ++c) {
      const float state = c < NC ? got.entering[c] : got.final_state;
      const double bound = 2.0 * std::ldexp(1.0, -24) * (std::sqrt(static_cast<double>(c)) + 4.0) * magnitude;
      const double r = std::fabs(state - exact) / bound;
      ASSERT_LE(r, 1.0) << "NC " << NC << ", chunk " << c;
      worst = std::max(worst, r);
      if (c < NC) {
        exact = static_cast<double>(scale[c]) * exact + value[c];
        magnitude = static_cast<double>(scale[c]) * magnitude + std::fabs(value[c]);
      }
    }
  }
  EXPECT_GT(worst, 0.0);  // the comparison saw rounding, so the test can fail
  EXPECT_GT(windows_extended, 0);        // both folds were checked
  EXPECT_LT(windows_extended, windows);
}

}  // namespace
