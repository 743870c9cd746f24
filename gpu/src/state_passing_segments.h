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
#include <cstdint>

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

// A segment scanned from a zero state: end = the state after its chunks, product = the factor the
// state entering it is carried with (1 and 0 for an empty segment: the identity).
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

// Folds the window's segments onto `entering` (the state entering the window), segment 0 first:
// the state entering segment `own`, and the state after the window. product[s] and
// end[s * end_stride] are segment s's SegmentSum; scale[i] is the window's chunk i's scale, and the
// window holds window_chunks chunks. A segment's product carries the state where it is a normal
// number. Where it is not, it overflowed or underflowed on the way although the state carried
// chunk by chunk need not (an infinite product times a zero state is NaN, a flushed one loses a
// large state), so the state is multiplied by the segment's scales one by one, as the one-element
// walk carries it. Every thread of an element folds the same values in the same order, so they
// agree bit for bit.
struct Folded {
  float own_entering, after;
};
__host__ __device__ __forceinline__ Folded fold(float entering, const float* product, const float* end, int end_stride,
                                                const float* scale, int length, int window_chunks, int own) {
  Folded f{entering, entering};
  for (int s = 0; s < kSegments; ++s) {
    if (s == own) f.own_entering = f.after;
    const float magnitude = product[s] < 0.0f ? -product[s] : product[s];
    if (magnitude >= FLT_MIN && magnitude <= FLT_MAX) {  // false for NaN too
      f.after = product[s] * f.after + end[s * end_stride];
    } else {
      const int from = s * length, to = from + length < window_chunks ? from + length : window_chunks;
      for (int i = from; i < to; ++i) f.after *= scale[i];
      f.after += end[s * end_stride];
    }
  }
  return f;
}

}  // namespace ssd_gpu::state_passing_segments
