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
// 5 + 6 = 11; the product 0.5. Folding it from 8: 0.5 * 8 + 11 = 15 = the walk 8 -> 10 -> 9 -> 15.
TEST(StatePassingSegments, OneSegmentByHand) {
  const float scale[3] = {1.0f, 0.5f, 1.0f};
  float value[segments::kSegmentChunks] = {2.0f, 4.0f, 6.0f};
  const segments::SegmentSum sum = segments::scan_from_zero(scale, value, 3);
  EXPECT_EQ(sum.end, 11.0f);
  EXPECT_EQ(sum.product, 0.5f);
  float product[segments::kSegments], end[segments::kSegments];
  for (int s = 0; s < segments::kSegments; ++s) product[s] = 1.0f, end[s] = 0.0f;  // empty segments
  product[0] = sum.product, end[0] = sum.end;
  const segments::Folded f = segments::fold(8.0f, product, end, 1, scale, 3, 3, 0);
  EXPECT_EQ(f.own_entering, 8.0f);
  EXPECT_EQ(f.after, 15.0f);
}

// The kernel's walk of one element's chain, thread by thread as the kernel splits it: the states
// entering every chunk and the final state.
struct Chain {
  std::vector<float> entering;
  float final_state;
};
Chain segmented(const std::vector<float>& scale, const std::vector<float>& value, float initial) {
  const int64_t NC = static_cast<int64_t>(scale.size());
  const int length = segments::segment_length(NC);
  Chain out{std::vector<float>(scale.size(), -1.0f), 0.0f};
  float M = initial;
  for (int64_t c0 = 0; c0 < NC; c0 += int64_t{segments::kSegments} * length) {
    float product[segments::kSegments], end[segments::kSegments];
    float v[segments::kSegments][segments::kSegmentChunks] = {};
    for (int s = 0; s < segments::kSegments; ++s) {  // every thread's loads and scan from zero
      const segments::SegmentChunks own = segments::segment_chunks(NC, length, c0, s);
      for (int k = 0; k < own.count; ++k) v[s][k] = value[own.first + k];
      const float* sc = own.count > 0 ? &scale[own.first] : nullptr;
      const segments::SegmentSum sum = segments::scan_from_zero(sc, v[s], own.count);
      product[s] = sum.product, end[s] = sum.end;
    }
    const int window_chunks = static_cast<int>(std::min<int64_t>(NC - c0, int64_t{segments::kSegments} * length));
    float after = M;
    for (int s = 0; s < segments::kSegments; ++s) {  // every thread's fold and walk
      const segments::Folded f = segments::fold(M, product, end, 1, &scale[c0], length, window_chunks, s);
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

// Random chains (scales in [0.5, 1], values in [-1, 1], 1..300 chunks, a random entering state):
// every state the segments give is within the contract's bound of the float64 walk, |got - exact|
// <= k u_acc phi(n) S with u_acc = 2^-24, phi(n) = sqrt(n) + 4 over the n chunks before it, S the
// walk on absolute values and k = 2, the low end of tolerance.md's calibrated 2 to 4: associating
// the chain by segments costs no more than the rule allows any fp32 order.
TEST(StatePassingSegments, WithinTheToleranceRule) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> decay(0.5f, 1.0f), value_of(-1.0f, 1.0f);
  double worst = 0.0;
  for (int NC = 1; NC <= 300; NC += 7) {
    std::vector<float> scale(NC), value(NC);
    for (int c = 0; c < NC; ++c) scale[c] = decay(rng), value[c] = value_of(rng);
    const float initial = value_of(rng);
    const Chain got = segmented(scale, value, initial);
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
}

}  // namespace
