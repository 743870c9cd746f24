// SSDStatePassingFwd with the chunk loads issued ahead: each thread loads the states of several
// chunks before it stores the first of them (in the fp32 kernel every load waits for the previous
// chunk's store, as they may alias, so a chain of NC chunks costs NC round trips to memory). Where D
// is a multiple of 4, at least 1024 wide and the bases are aligned, each thread owns 4 consecutive
// elements (one 16- or 8-byte load per chunk, the out dtype a template argument, one vector store)
// and walks the chain in batches; other shapes run 8 threads per element, each taking a segment of
// the chain (state_passing_segments.h), so that a window of up to 128 chunks has all its loads in
// flight at once (the one-element kernel, 32 chunks deep, stays for STATE_PASSING_SEGMENTS_PAST).
#include "chunk_carry.cuh"
#include "mma.cuh"
#include "state_passing_segments.h"

namespace ssd_gpu {
namespace {

// ---- One element per thread (any D, any alignment) ----------------------------------------------

// The states' storage type is a template argument (to_f32): 32 loads with a dtype switch each
// would not fit in registers. kAhead: chunk loads in flight per thread. 8 where there are no more chunks (registers cost
// occupancy, which Mamba2Fwd's 8-chunk stage needs more than depth); otherwise 32 (measured: a
// 16-deep build was slower on the 16-chunk workloads, and its f32 variant spills). The loads and
// the stores walk one pointer each from chunk to chunk, so no per-chunk offsets stay live between
// them: 32 deep, f32 states fit 80 registers (three blocks per SM), 16-bit ones 92 (two, as before).
template <class T, int kAhead>
constexpr int kMinBlocks = kAhead > 8 && sizeof(T) == 4 ? 3 : 0;  // 0: no minimum (the compiler's default)

template <class T, int kAhead>
__global__ void __launch_bounds__(kThreads, (kMinBlocks<T, kAhead>)) state_passing_fast_kernel(StatePassingParams p) {
  wait_previous_grid();
  if (p.stage_of_call) allow_next_grid();  // Mamba2Fwd's CB reads only the call's inputs
  const T* states = static_cast<const T*>(p.states.p);
  __shared__ float sScale[kThreads];
  const int tid = static_cast<int>(threadIdx.x);
  const int64_t NC = p.chunks, H = p.heads, D = p.width;
  const int64_t slices = ceil_div(D, kThreads);
  const int64_t tile = blockIdx.x;  // the launcher's grid has one block per tile
  const int64_t bh = tile / slices;
  const int64_t b = bh / H, h = bh % H;
  const int64_t d = (tile % slices) * kThreads + tid;
  const bool active = d < D;
  const int64_t stride = H * D;  // from chunk c to c + 1
  float M = (active && p.initial.p != nullptr) ? load(p.initial, bh * D + d) : 0.0f;
  for (int64_t c0 = 0; c0 < NC; c0 += kThreads) {
    __syncthreads();  // the previous batch of scales is consumed
    const int64_t c = c0 + tid;
    if (c < NC) {
      sScale[tid] = chunk_carry_scale(p, b, bh, NC, c);
    }
    __syncthreads();
    if (!active) continue;
    const int count = static_cast<int>(min(static_cast<int64_t>(kThreads), NC - c0));
    const int64_t first = ((b * NC + c0) * H + h) * D + d;
    const T* src = states + first;  // chunk c0 + k0 + k of the loads
    int64_t at = first;             // ... and of the stores
    for (int k0 = 0; k0 < count; k0 += kAhead) {
      float v[kAhead];
      const T* s = src;
#pragma unroll
      for (int k = 0; k < kAhead; ++k)
        if (k0 + k < count) {
          v[k] = to_f32(*s);
          s += stride;
        }
      src = s;
#pragma unroll
      for (int k = 0; k < kAhead; ++k)
        if (k0 + k < count) {
          store(p.out, at, M);  // the state ENTERING chunk c0 + k0 + k
          at += stride;
          M = sScale[k0 + k] * M + v[k];
        }
    }
  }
  if (active && p.final_states != nullptr) p.final_states[bh * D + d] = M;
}

template <class T>
void launch_scalar(const char* op, const StatePassingParams& p, unsigned grid, cudaStream_t stream) {
  if (p.chunks <= 8)
    launch_kernel(op, "launch of state_passing_fast_kernel", state_passing_fast_kernel<T, 8>, grid, kThreads, 0, stream, p);
  else
    launch_kernel(op, "launch of state_passing_fast_kernel", state_passing_fast_kernel<T, 32>, grid, kThreads, 0, stream, p);
}


// ---- Chains the vector kernel does not take: one element per 8 threads, in segments (any D) ------

// For chains of any length, the 8 threads of an element split its chain into segments of up to 16
// chunks (state_passing_segments.h: the split and the arithmetic), so a window of up to 128 chunks
// has all its loads in flight at once where the one-element kernel waited a round trip per 32
// chunks (b2 s32768: 13.0 -> 8.3 us on the H200), and a 16-chunk chain of D = 128 runs 256 blocks
// of 8 threads per element instead of 64 half-idle ones; the segments' sums go through shared
// memory. The sums are associated differently from a walk along the chain (any order is within the
// contract's bounds); every thread of an element folds the same values in the same order, so the
// results are deterministic. Where every scale of a window is safe (0 or within [2^-7, 2^7]: the
// workloads' are), the block folds the segments' plain fp32 products, one fused multiply-add each,
// in straight-line code; otherwise it folds extended products (mantissa and exponent), so the fold
// never makes a NaN or loses a state that the chain's own walk would carry. One block-wide vote
// picks the fold (a branch per segment, or a call in the common fold, cost up to 2.4 us of 8.35 on
// b2 s32768), cast on the barrier that publishes the scales (__syncthreads_and), each scale tested
// once where it is computed (1.047x on these workloads, on the H100). STATE_PASSING_SEGMENTS_PAST=32
// builds the one-element kernel for chains of up to 32 chunks (for an A/B).
namespace segments = state_passing_segments;
#ifndef STATE_PASSING_SEGMENTS_PAST
#define STATE_PASSING_SEGMENTS_PAST 0
#endif
constexpr int kSegmentsPast = STATE_PASSING_SEGMENTS_PAST;  // chains up to this long: the one-element kernel
constexpr int kSegmentWidth = kThreads / segments::kSegments;  // elements per block: a warp per segment
constexpr int kWindow = segments::kSegments * segments::kSegmentChunks;  // chunks per window, at most
static_assert(kWindow <= kThreads, "one thread computes one chunk's scale");

// 16 values in registers, three blocks per SM (80 registers, no spills; at four blocks, 64
// registers, the 16-bit kernels spilled, and 32 values a thread took 109 registers).
template <class T>
__global__ void __launch_bounds__(kThreads, 3) state_passing_segments_kernel(StatePassingParams p) {
  wait_previous_grid();
  if (p.stage_of_call) allow_next_grid();  // Mamba2Fwd's CB reads only the call's inputs
  __shared__ float sScale[kWindow];
  __shared__ float sEnd[segments::kSegments][kSegmentWidth];
  __shared__ float sProduct[segments::kSegments];
  __shared__ segments::Extended sExtended[segments::kSegments];
  const int tid = static_cast<int>(threadIdx.x), segment = tid / kSegmentWidth, e = tid % kSegmentWidth;
  const int64_t NC = p.chunks, H = p.heads, D = p.width;
  const int64_t slices = ceil_div(D, kSegmentWidth);
  const int64_t bh = blockIdx.x / slices;  // the launcher's grid has one block per (b, h, slice)
  const int64_t b = bh / H, h = bh % H;
  const int64_t d = (blockIdx.x % slices) * kSegmentWidth + e;
  const bool active = d < D;
  const int64_t stride = H * D;  // from chunk c to c + 1
  const T* states = static_cast<const T*>(p.states.p);
  const int length = segments::segment_length(NC);
  float M = (active && p.initial.p != nullptr) ? load(p.initial, bh * D + d) : 0.0f;  // entering the window
  for (int64_t c0 = 0; c0 < NC; c0 += segments::kSegments * length) {
    const segments::SegmentChunks own = segments::segment_chunks(NC, length, c0, segment);
    const int count = active ? own.count : 0;
    const int64_t base = ((b * NC + own.first) * H + h) * D + d;
    float v[segments::kSegmentChunks];
    {
      const T* s = states + base;  // loaded before any store of the window (out may alias states)
#pragma unroll
      for (int k = 0; k < segments::kSegmentChunks; ++k) {
        v[k] = 0.0f;
        if (k < count) {
          v[k] = to_f32(*s);
          s += stride;
        }
      }
    }
    if (c0 > 0) __syncthreads();  // the previous window's scales and segment sums are consumed
    // One thread per chunk of the window computes its scale and tests it; the barrier that
    // publishes the scales votes the tests, so one fold serves the whole block and window: the
    // plain one unless some scale is unsafe (window_safe is the same in every thread).
    bool safe = true;
    if (tid < segments::kSegments * length && c0 + tid < NC) {
      const float s = chunk_carry_scale(p, b, bh, NC, c0 + tid);
      sScale[tid] = s;
      safe = segments::safe_scale(s);
    }
    const bool window_safe = __syncthreads_and(safe);
    const float* scale = sScale + segment * length;
    const segments::SegmentSum sum = segments::scan_from_zero(scale, v, count);
    sEnd[segment][e] = sum.end;
    if (e == 0) sProduct[segment] = sum.product;  // element 0 of a block is active when any is
    __syncthreads();
    segments::Folded folded;
    if (window_safe) {
      folded = segments::fold_plain(M, sProduct, &sEnd[0][e], kSegmentWidth, segment);
    } else {
      if (e == 0) sExtended[segment] = segments::extended_product(scale, count);
      __syncthreads();
      folded = segments::fold_extended(M, sExtended, &sEnd[0][e], kSegmentWidth, segment);
    }
    M = folded.after;
    float entering = folded.own_entering;
    int64_t to = base;
#pragma unroll
    for (int k = 0; k < segments::kSegmentChunks; ++k)
      if (k < count) {
        store(p.out, to, entering);  // the state ENTERING chunk own.first + k
        to += stride;
        entering = scale[k] * entering + v[k];
      }
  }
  if (active && segment == 0 && p.final_states != nullptr) p.final_states[bh * D + d] = M;
}

// ---- Four consecutive elements per thread --------------------------------------------------------

constexpr int kVec = 4;

// Four consecutive values of one storage type: the register form they wait in between load and use
// (16-bit ones stay packed, two registers for four), the exact conversion to fp32, and the store of
// four fp32 values rounded one by one with store()'s own conversions, so the bits are store()'s.
template <class T>
struct Vec4;
template <>
struct Vec4<float> {
  using Raw = float4;
  __device__ static Raw load(const float* q) { return *reinterpret_cast<const float4*>(q); }
  __device__ static float4 to_float4(Raw r) { return r; }
  __device__ static void store(float* q, float4 v) { *reinterpret_cast<float4*>(q) = v; }
};

template <class T16>
struct Vec4Half {
  using Raw = uint2;
  union Four {
    uint2 raw;
    T16 h[4];
  };
  __device__ static Raw load(const T16* q) { return *reinterpret_cast<const uint2*>(q); }
  __device__ static float4 to_float4(Raw r) {
    Four f;
    f.raw = r;
    return make_float4(to_f32(f.h[0]), to_f32(f.h[1]), to_f32(f.h[2]), to_f32(f.h[3]));
  }
  __device__ static void store(T16* q, float4 v) {
    Four f;
    f.h[0] = Half16<T16>::from(v.x);
    f.h[1] = Half16<T16>::from(v.y);
    f.h[2] = Half16<T16>::from(v.z);
    f.h[3] = Half16<T16>::from(v.w);
    *reinterpret_cast<uint2*>(q) = f.raw;
  }
};
template <>
struct Vec4<__half> : Vec4Half<__half> {};
template <>
struct Vec4<__nv_bfloat16> : Vec4Half<__nv_bfloat16> {};

// t[i..i+3] of the initial state, whatever its dtype (read once per thread, so a switch is cheap);
// i a multiple of 4 and the base aligned to 4 elements, which the launcher checks.
__device__ __forceinline__ float4 load4(In t, int64_t i) {
  switch (t.dtype) {
    case SSD_DTYPE_F16: return Vec4<__half>::to_float4(Vec4<__half>::load(static_cast<const __half*>(t.p) + i));
    case SSD_DTYPE_BF16:
      return Vec4<__nv_bfloat16>::to_float4(Vec4<__nv_bfloat16>::load(static_cast<const __nv_bfloat16*>(t.p) + i));
    default: return Vec4<float>::load(static_cast<const float*>(t.p) + i);
  }
}

// Issues the loads of the next n <= kAhead chunks (n == kAhead folds the guards away).
template <int kAhead, class T>
__device__ __forceinline__ void load_batch(typename Vec4<T>::Raw (&v)[kAhead], const T*& src, int64_t stride, int n) {
#pragma unroll
  for (int k = 0; k < kAhead; ++k)
    if (k < n) {
      v[k] = Vec4<T>::load(src);
      src += stride;
    }
}

// Stores the state entering each of the n chunks loaded by load_batch and carries M over them with
// the same expression per element as the one-element kernel (one contraction into an FMA each).
template <int kAhead, class T, class O>
__device__ __forceinline__ void store_batch(const typename Vec4<T>::Raw (&v)[kAhead], O*& dst, int64_t stride,
                                            const float* scale, int n, float4& M) {
#pragma unroll
  for (int k = 0; k < kAhead; ++k)
    if (k < n) {
      Vec4<O>::store(dst, M);
      dst += stride;
      const float s = scale[k];
      const float4 x = Vec4<T>::to_float4(v[k]);
      M.x = s * M.x + x.x;
      M.y = s * M.y + x.y;
      M.z = s * M.z + x.z;
      M.w = s * M.w + x.w;
    }
}

// The scales of chunks c0 .. c0 + 255 into sScale, as the one-element kernel computes them; every
// thread of the block calls it.
__device__ __forceinline__ void fill_scales(const StatePassingParams& p, float* sScale, int64_t b, int64_t bh,
                                            int64_t c0) {
  const int tid = static_cast<int>(threadIdx.x);
  __syncthreads();  // the previous batch of scales is consumed
  if (c0 + tid < p.chunks) sScale[tid] = chunk_carry_scale(p, b, bh, p.chunks, c0 + tid);
  __syncthreads();
}

// kAhead chunks of 4 values each: 8 for f32 states, 16 for 16-bit ones past 8 chunks; either way 32
// registers of values (as 32 chunks of one element), which with the launch bound's four blocks per
// SM (64 registers, no spills; 76 unbounded) puts a 512-block grid in one wave on an H200.
template <class T>
constexpr int kVecDeep = sizeof(T) == 4 ? 8 : 16;

// One block per (b, h, slice of 1024 elements); thread t owns elements 4t .. 4t + 3 of the slice.
// Chunks go in batches of kAhead (256 is a multiple, so a batch never spans two batches of scales):
// a batch's loads are issued before its stores (out may alias states), and before the scales of
// its 256 chunks are computed, so the first batch's round trip overlaps that of the scales.
template <class T, class O, int kAhead>
__global__ void __launch_bounds__(kThreads, 4) state_passing_vec_kernel(StatePassingParams p) {
  wait_previous_grid();
  if (p.stage_of_call) allow_next_grid();  // Mamba2Fwd's CB reads only the call's inputs
  static_assert(kThreads % kAhead == 0, "a batch of chunks within one batch of scales");
  __shared__ float sScale[kThreads];
  const int tid = static_cast<int>(threadIdx.x);
  const int64_t NC = p.chunks, H = p.heads, D = p.width;
  const int64_t lanes = D / kVec;  // vectors per (b, h); the launcher checks D % 4 == 0
  const int64_t slices = ceil_div(lanes, kThreads);
  const int64_t tile = blockIdx.x;  // the launcher's grid has one block per tile
  const int64_t bh = tile / slices;
  const int64_t b = bh / H, h = bh % H;
  const int64_t lane = (tile % slices) * kThreads + tid;
  const bool active = lane < lanes;
  const int64_t d = lane * kVec;
  const int64_t stride = H * D;  // from chunk c to c + 1, in elements of either tensor
  const int64_t first = (b * NC * H + h) * D + d;
  const T* src = static_cast<const T*>(p.states.p) + first;  // the next chunk to load
  O* dst = static_cast<O*>(p.out.p) + first;                 // ... and to store
  float4 M = (active && p.initial.p != nullptr) ? load4(p.initial, bh * D + d) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  typename Vec4<T>::Raw v[kAhead];
  for (int64_t c = 0; c < NC; c += kAhead) {
    const int n = static_cast<int>(min(static_cast<int64_t>(kAhead), NC - c));
    const int k0 = static_cast<int>(c) & (kThreads - 1);  // chunk c's place in sScale
    if (active) {
      if (n == kAhead)
        load_batch<kAhead>(v, src, stride, kAhead);
      else
        load_batch<kAhead>(v, src, stride, n);
    }
    if (k0 == 0) fill_scales(p, sScale, b, bh, c);  // uniform: every thread takes the same c
    if (active) {
      if (n == kAhead)
        store_batch<kAhead, T>(v, dst, stride, sScale + k0, kAhead, M);
      else
        store_batch<kAhead, T>(v, dst, stride, sScale + k0, n, M);
    }
  }
  if (active && p.final_states != nullptr) Vec4<float>::store(p.final_states + bh * D + d, M);
}

template <class T, class O>
void launch_vec(const char* op, const StatePassingParams& p, unsigned grid, cudaStream_t stream) {
  if (p.chunks <= 8 || kVecDeep<T> == 8)
    launch_kernel(op, "launch of state_passing_vec_kernel", state_passing_vec_kernel<T, O, 8>, grid, kThreads, 0, stream, p);
  else
    launch_kernel(op, "launch of state_passing_vec_kernel", state_passing_vec_kernel<T, O, kVecDeep<T>>, grid, kThreads,
                 0, stream, p);
}

template <class T>
void launch_vec_out(const char* op, const StatePassingParams& p, unsigned grid, cudaStream_t stream) {
  switch (p.out.dtype) {  // as store(): anything but f16 and bf16 is f32
    case SSD_DTYPE_F16: launch_vec<T, __half>(op, p, grid, stream); break;
    case SSD_DTYPE_BF16: launch_vec<T, __nv_bfloat16>(op, p, grid, stream); break;
    default: launch_vec<T, float>(op, p, grid, stream); break;
  }
}

// The storage size of a dtype as load() and store() read it (anything but f16 and bf16 is f32).
int64_t element_bytes(int32_t dtype) { return dtype == SSD_DTYPE_F16 || dtype == SSD_DTYPE_BF16 ? 2 : 4; }

bool aligned(const void* q, int64_t bytes) { return reinterpret_cast<uintptr_t>(q) % static_cast<uintptr_t>(bytes) == 0; }

// The vector kernel's blocks, or 0 where it does not apply: D a multiple of 4 and at least 1024
// (narrower chains are latency-bound: 4 elements per thread would not shorten a thread's chain of
// round trips but would hold 4 times fewer chunks in flight per register and put the chains on 4
// times fewer SMs), every base aligned to 4 of its elements, and either all chunks in one batch or
// two blocks per SM (past one batch a thread waits a round trip per batch of 8 or 16 chunks, which
// only a grid that keeps the memory busy meanwhile hides; segments were 4-6x slower on the wide f32
// workloads and on Mamba2Fwd s8192's 32 chunks of 8192-wide states).
int64_t vec_tiles(const StatePassingParams& p, const char* op) {
  const int64_t D = p.width;
  if (D % kVec != 0 || D / kVec < kThreads) return 0;
  const int64_t states_bytes = element_bytes(p.states.dtype);
  if (!aligned(p.states.p, kVec * states_bytes) || !aligned(p.out.p, kVec * element_bytes(p.out.dtype))) return 0;
  if (p.initial.p != nullptr && !aligned(p.initial.p, kVec * element_bytes(p.initial.dtype))) return 0;
  if (p.final_states != nullptr && !aligned(p.final_states, kVec * 4)) return 0;
  const int64_t tiles = p.batch * p.heads * ceil_div(D / kVec, kThreads);
  const int64_t depth = p.chunks <= 8 ? 8 : (states_bytes == 4 ? kVecDeep<float> : kVecDeep<__half>);
  if (p.chunks > depth && tiles < 2 * multiprocessors(op)) return 0;
  return tiles;
}

// Calls f(Tag<T>{}) with T the states' storage type (as load(): anything but f16 and bf16 is f32).
template <class T>
struct Tag {
  using type = T;
};
template <class F>
void with_states_type(int32_t dtype, F&& f) {
  switch (dtype) {
    case SSD_DTYPE_F16: f(Tag<__half>{}); break;
    case SSD_DTYPE_BF16: f(Tag<__nv_bfloat16>{}); break;
    default: f(Tag<float>{}); break;
  }
}

}  // namespace

bool launch_state_passing_fast(const char* op, const StatePassingParams& p, cudaStream_t stream) {
  const int64_t vec = vec_tiles(p, op);
  if (vec > 0 && vec <= 0x7fffffff) {
    const unsigned grid = static_cast<unsigned>(vec);
    with_states_type(p.states.dtype, [&](auto t) { launch_vec_out<typename decltype(t)::type>(op, p, grid, stream); });
    check_launch(op, "state_passing_vec_kernel");
    return true;
  }
  if (p.chunks > kSegmentsPast) {
    const int64_t tiles = p.batch * p.heads * ceil_div(p.width, kSegmentWidth);
    if (tiles > 0x7fffffff) return false;
    if (tiles == 0) return true;
    const unsigned grid = static_cast<unsigned>(tiles);
    with_states_type(p.states.dtype, [&](auto t) {
      launch_kernel(op, "launch of state_passing_segments_kernel",
                    state_passing_segments_kernel<typename decltype(t)::type>, grid, kThreads, 0, stream, p);
    });
    check_launch(op, "state_passing_segments_kernel");
    return true;
  }
  const int64_t tiles = p.batch * p.heads * ceil_div(p.width, kThreads);
  if (tiles > 0x7fffffff) return false;
  if (tiles == 0) return true;
  const unsigned grid = static_cast<unsigned>(tiles);
  with_states_type(p.states.dtype, [&](auto t) { launch_scalar<typename decltype(t)::type>(op, p, grid, stream); });
  check_launch(op, "state_passing_fast_kernel");
  return true;
}

}  // namespace ssd_gpu
