// How state_passing_fast.cu's segments kernel splits a chain of chunks among the threads of one
// element, and the fp32 arithmetic each thread does with its segment: plain C++ for either
// compiler, so the host tests replay it (tests/gpu/state_passing_segments_test.cpp).
//
// A window of kSegments segments of `length` consecutive chunks each; thread s of an element takes
// segment s. It scans its segment from zero (scan_from_zero: the end value and the product of the
// scales), the block publishes those, and every thread folds the window's segments in order onto
// the state entering the window (fold: the state entering its own segment, and the state after
// the window, which enters the next one). It then walks its segment again from that entering state,
// M = scale * M + value per chunk, as the one-element kernel walks the whole chain.
#pragma once
#include <cuda_runtime_api.h>  // __host__, __device__, __forceinline__ for either compiler

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

// Kept out of line: the rare paths stay out of the unrolled loops that call them.
#if defined(__CUDACC__)
#define SSD_SEGMENTS_OUT_OF_LINE inline __noinline__
#else
#define SSD_SEGMENTS_OUT_OF_LINE inline __attribute__((noinline))
#endif

namespace ssd_gpu::state_passing_segments {

constexpr int kSegments = 8;        // threads per element
constexpr int kSegmentChunks = 16;  // chunks a thread holds in registers, at most

// Chunks per segment: kSegmentChunks, or an eighth of a chain shorter than a whole window (rounded
// up, so that one window holds it).
__host__ __device__ __forceinline__ int segment_length(int64_t chunks) {
  const int64_t eighth = (chunks + kSegments - 1) / kSegments;
  return static_cast<int>(eighth < kSegmentChunks ? eighth : kSegmentChunks);
}

// The chunks of segment s of the window that starts at chunk c0: [first, first + count), count 0
// where the segment lies past the chain's end.
struct SegmentChunks {
  int64_t first;
  int count;
};
__host__ __device__ __forceinline__ SegmentChunks segment_chunks(int64_t chunks, int length, int64_t c0, int s) {
  const int64_t first = c0 + int64_t{s} * length;
  const int64_t count = chunks - first < length ? chunks - first : length;
  return {first, static_cast<int>(count > 0 ? count : 0)};
}

// A product of scales in an extended range: mantissa * 2^exponent, with |mantissa| kept in
// [2^-64, 2^64] (or 0, inf, NaN), so a segment's product neither overflows nor flushes where its
// scales do not, and each multiply rounds once, relative to the product, as an fp32 multiply in
// range does. The state a segment carries over is then the one the chunk-by-chunk walk carries,
// within rounding, however far the product itself lies outside fp32's range.
struct Extended {
  float mantissa;
  int exponent;
};

// The bits of an fp32 value and back: memcpy, which both compilers turn into a move.
__host__ __device__ __forceinline__ uint32_t bits_of(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
__host__ __device__ __forceinline__ float float_of(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

// p times scale. In range, one fp32 multiply and a compare. Out of it, an fp32 product that is still
// a normal number is renormalized by its exponent bits (exact); one that overflowed, flushed or went
// subnormal is recomputed from the two factors' frexpf fractions, whose product lies in [0.25, 1)
// and rounds once, as the fp32 multiply in range would (fp32 only: doubles cost the kernel a spill).
__host__ __device__ __forceinline__ Extended times(Extended p, float scale) {
  const float next = p.mantissa * scale;
  const float magnitude = next < 0.0f ? -next : next;
  if (magnitude >= 0x1p-64f && magnitude <= 0x1p64f) return {next, p.exponent};  // false for NaN
  const uint32_t u = bits_of(next);
  const int field = static_cast<int>((u >> 23) & 0xffu);
  if (field >= 1 && field <= 254) return {float_of((u & 0x807fffffu) | (127u << 23)), p.exponent + field - 127};
  // A zero, infinite or NaN factor: nothing to renormalize (x - x is 0 only for a finite x).
  if (!((p.mantissa - p.mantissa == 0.0f) & (scale - scale == 0.0f)) || scale == 0.0f) return {next, p.exponent};
  int a = 0, c = 0;
  const float fraction = frexpf(p.mantissa, &a) * frexpf(scale, &c);
  return {fraction, p.exponent + a + c};
}

// state times the extended product p, rounded once to fp32 (as if computed exactly and then
// rounded, flushing to a signed zero below fp32's subnormals and to inf above FLT_MAX): a multiply
// and an exponent add where the result stays normal or lies below half the smallest subnormal.
// Out of line: only a product outside fp32's normal range takes it (fold).
__host__ __device__ SSD_SEGMENTS_OUT_OF_LINE float carry(Extended p, float state) {
  const float product = p.mantissa * state;
  if (state == 0.0f) return product;  // +-0, or NaN where the scales were inf or NaN: the walk's value
  const uint32_t u = bits_of(product);
  const int field = static_cast<int>((u >> 23) & 0xffu);
  if (field >= 1 && field <= 254) {  // product normal: |result| < 2^(field - 126 + exponent)
    const int result_field = field + p.exponent;
    if (result_field >= 1 && result_field <= 254) return float_of(u + (static_cast<uint32_t>(p.exponent) << 23));
    if (result_field <= -24) return float_of(u & 0x80000000u);  // |result| < 2^-150: rounds to zero
  }
  return static_cast<float>(ldexp(static_cast<double>(p.mantissa) * static_cast<double>(state), p.exponent));
}

// The extended product of count scales, one times() per scale. Only the branch of a window with a
// scale outside the safe range calls it (the vote in state_passing_fast.cu), so it stays off the
// common path without a call.
__host__ __device__ __forceinline__ Extended extended_product(const float* scale, int count) {
  Extended p{1.0f, 0};
  for (int k = 0; k < count; ++k) p = times(p, scale[k]);
  return p;
}

// Scales in [2^-7, 2^7] (or 0) keep a product of up to 16 of them within [2^-112, 2^112], where fp32
// multiplies round as the extended product does: the plain product is then exact to the same bits.
constexpr float kSafeScale = 0x1p7f;

// Whether a scale is safe (0, or |scale| in [2^-7, 2^7]; NaN is not). The kernel tests each scale
// once, where it computes it, and votes the window's results in the barrier that publishes them.
// Bitwise, not short-circuit: && and || became branches with convergence barriers.
__host__ __device__ __forceinline__ bool safe_scale(float scale) {
  const float magnitude = scale < 0.0f ? -scale : scale;
  return (magnitude == 0.0f) | ((magnitude >= 1.0f / kSafeScale) & (magnitude <= kSafeScale));
}

// A segment scanned from a zero state: end = the state after its chunks, product = the plain fp32
// product of its scales (1 for an empty segment: the identity), which is the extended product to the
// bit where every scale is safe (the workloads' decays, sequence starts).
struct SegmentSum {
  float end, product;
};
__host__ __device__ __forceinline__ SegmentSum scan_from_zero(const float* scale, const float (&value)[kSegmentChunks],
                                                              int count) {
  SegmentSum sum{0.0f, 1.0f};
  for (int k = 0; k < kSegmentChunks; ++k)
    if (k < count) {
      sum.end = scale[k] * sum.end + value[k];
      sum.product *= scale[k];
    }
  return sum;
}

// The folds of a window's segments onto `entering` (the state entering the window), segment 0
// first: the state entering segment `own`, and the state after the window. end[s * end_stride] is
// segment s's end value. Every thread of an element folds the same values in the same order, so
// they agree bit for bit; the kernel picks one fold per window and block (every scale of the window
// safe or not), so every thread of a block takes the same one.
struct Folded {
  float own_entering, after;
};
// Where every scale of the window is safe: the plain products, one fused multiply-add per segment,
// straight-line (no call, no branch).
__host__ __device__ __forceinline__ Folded fold_plain(float entering, const float* product, const float* end,
                                                      int end_stride, int own) {
  Folded f{entering, entering};
  for (int s = 0; s < kSegments; ++s) {
    if (s == own) f.own_entering = f.after;
    f.after = product[s] * f.after + end[s * end_stride];
  }
  return f;
}
// Elsewhere: the extended products (extended_product), a multiply-add where a product is a normal
// fp32 number with no exponent, carry() where it is not, so a product that overflowed or flushed
// where the chain's own walk would not never makes a NaN or loses a state.
__host__ __device__ __forceinline__ Folded fold_extended(float entering, const Extended* product, const float* end,
                                                         int end_stride, int own) {
  Folded f{entering, entering};
  for (int s = 0; s < kSegments; ++s) {
    if (s == own) f.own_entering = f.after;
    const float m = product[s].mantissa, magnitude = m < 0.0f ? -m : m;
    if (product[s].exponent == 0 && (m == 0.0f || (magnitude >= FLT_MIN && magnitude <= FLT_MAX)))
      f.after = m * f.after + end[s * end_stride];
    else
      f.after = carry(product[s], f.after) + end[s * end_stride];
  }
  return f;
}

}  // namespace ssd_gpu::state_passing_segments
