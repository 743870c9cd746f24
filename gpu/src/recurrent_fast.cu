// SSDRecurrentFwd with an f32 state and f32 A (the decode layout): one warp per state row
// (b, h, p), each lane owning 4 consecutive n, so a 128-wide row is one 16-byte load of state and A
// per lane. All of a lane's loads are issued before its first store: the in-place state otherwise
// serializes every element into its own round trip to memory.
// Two grids. Batches too small to give every warp of a full persistent grid two row groups run one
// group of 1-2 rows per warp, which then exits (a launch and one round trip). Larger ones run a
// persistent grid whose warps walk the row groups with a grid stride and issue the loads of their
// next group before they update the current one, so each warp keeps a group's loads in flight for
// the whole kernel rather than idling the memory system between one-shot warps. Both compute an
// element and sum y in the same order, so they give the same bits.
#include <climits>
#include <type_traits>

#include "decode_slot.cuh"
#include "mma.cuh"

namespace ssd_gpu {
namespace {

constexpr int kRowsPerBlock = kThreads / kWarp;
constexpr int kWarpsPerBlock = kThreads / kWarp;  // the persistent grid's name for the same count
constexpr int kMaxVecs = 4;  // float4 chunks per lane: N <= 4 * 4 * 32 = 512

struct FastParams {
  float* state;  // [Bs,H,P,N]
  const float* A;  // [H,P,N]
  const void* B;   // [Bt,G,N], the template type
  const void* C;
  In x, dt, D, z, dt_bias;
  const int32_t* slots;
  Out out;
  int64_t batch, slot_count, heads, headdim, groups, dstate;
  bool softplus;
};

// Four consecutive 16-bit or f32 values as fp32.
template <class T>
__device__ __forceinline__ float4 load4(const T* p) {
  const uint2 raw = *reinterpret_cast<const uint2*>(p);
  const float2 lo = Half16<T>::unpack2(raw.x), hi = Half16<T>::unpack2(raw.y);
  return make_float4(lo.x, lo.y, hi.x, hi.y);
}
template <>
__device__ __forceinline__ float4 load4<float>(const float* p) {
  return *reinterpret_cast<const float4*>(p);
}

// kRows consecutive rows (consecutive p of one (b, h): one slot, one B and C row) per warp, every
// load of all of them issued before the first store, so each lane has kRows state and A vectors in
// flight: one row per warp left the memory system idle between a warp's round trips.
template <class T, int kVecs, int kRows>
__global__ void __launch_bounds__(kThreads) recurrent_fast_kernel(FastParams p) {
  wait_previous_grid();
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int64_t H = p.heads, P = p.headdim, N = p.dstate;
  const int64_t row0 = (static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarp) * kRows;
  if (row0 >= p.batch * H * P) return;  // warp-uniform; no block barrier follows
  const int64_t pp0 = row0 % P, h = (row0 / P) % H, b = row0 / (P * H);
  const int64_t g = h / (H / p.groups);
  int64_t slot = -1;
#pragma unroll
  for (int r = 0; r < kRows; ++r) slot = decode_row_slot(p, b, row0 + r, lane);  // one slot; each row's padding output
  if (slot < 0) return;
  float* state = p.state + ((slot * H + h) * P + pp0) * N;
  const float* A = p.A + (h * P + pp0) * N;
  const T* Bv = static_cast<const T*>(p.B) + (b * p.groups + g) * N;
  const T* Cv = static_cast<const T*>(p.C) + (b * p.groups + g) * N;

  float4 s[kRows][kVecs], a[kRows][kVecs], bb[kVecs], cc[kVecs];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t n = (static_cast<int64_t>(k) * kWarp + lane) * 4;
    if (n < N) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        s[r][k] = __ldcs(reinterpret_cast<const float4*>(state + r * N + n));  // read once, written back below
        a[r][k] = load4(A + r * N + n);
      }
      bb[k] = load4(Bv + n);
      cc[k] = load4(Cv + n);
    }
  }
  // No dt_limit on the decode path: bias and softplus only.
  float dtp[kRows], xv[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    dtp[r] = load(p.dt, row0 + r) + (p.dt_bias.p != nullptr ? load(p.dt_bias, h * P + pp0 + r) : 0.0f);
    if (p.softplus) dtp[r] = softplus_thr20(dtp[r]);
    xv[r] = load(p.x, row0 + r);
  }

#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int64_t n = (static_cast<int64_t>(k) * kWarp + lane) * 4;
      if (n < N) {
        const float sv[4] = {s[r][k].x, s[r][k].y, s[r][k].z, s[r][k].w};
        const float av[4] = {a[r][k].x, a[r][k].y, a[r][k].z, a[r][k].w};
        const float bv[4] = {bb[k].x, bb[k].y, bb[k].z, bb[k].w}, cv[4] = {cc[k].x, cc[k].y, cc[k].z, cc[k].w};
        float hn[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float decay = expf(av[e] * dtp[r]);
          hn[e] = sv[e] * decay + bv[e] * dtp[r] * xv[r];
          acc += hn[e] * cv[e];  // from the unrounded new state
        }
        __stcs(reinterpret_cast<float4*>(state + r * N + n), make_float4(hn[0], hn[1], hn[2], hn[3]));
      }
    }
    float y = warp_sum(acc);
    if (lane == 0) {
      const int64_t row = row0 + r;
      if (p.D.p != nullptr) y += load(p.D, h * P + pp0 + r) * xv[r];
      if (p.z.p != nullptr) y = gate(y, load(p.z, row));
      store(p.out, row, y);
    }
  }
}

// ---- The persistent grid -------------------------------------------------------------------------

// Its parameter block: 32-bit sizes and no dtypes keep it at 120 bytes. Past 128 bytes nvcc reads
// a kernel's parameter block through its address (CumsumParams in params.h): with the grid stride
// in it (136 bytes) the loop re-read its sizes (41 parameter loads in the PTX, 15 at 120 bytes).
// The launcher takes this path only where the rows and the state fit these sizes and the dtypes
// are the contract's (pipe_fits).
struct PipeParams {
  float* state;      // [Bs,H,P,N]
  const float* A;    // [H,P,N]
  const void* B;     // [Bt,G,N], the template type
  const void* C;
  const int32_t* slots;  // [Bt] or null
  const void *x, *z;     // [Bt,H,P], the template type (z may be null)
  const float *dt, *D, *dt_bias;  // dt [Bt,H,P]; D, dt_bias [H,P] (may be null)
  void* out;              // [Bt,H,P], the template type
  int32_t batch, slot_count, headdim, dstate, heads_per_group, groups;
  bool softplus;
};
static_assert(sizeof(PipeParams) <= 128, "the persistent kernel reads its parameter block directly");

// A row's coordinates: row = ((b * G + hq) * (H / G) + hr) * P + pp, i.e. h = hq * (H / G) + hr
// with hq the group of B and C. The same form holds the grid stride (decomposed once per warp, in
// registers rather than in the parameter block), so a warp steps to its next group by three
// carries, not the three divisions per group that decomposing the row would cost.
struct Walk {
  int32_t pp, hr, hq, b;
};

__device__ __forceinline__ Walk decompose(const PipeParams& p, uint32_t row) {
  const uint32_t P = p.headdim, hpg = p.heads_per_group, G = p.groups;
  const uint32_t bh = row / P, q = bh / hpg;
  return Walk{static_cast<int32_t>(row - bh * P), static_cast<int32_t>(bh - q * hpg), static_cast<int32_t>(q % G),
              static_cast<int32_t>(q / G)};
}

// w += step, each coordinate carried into the next; step's coordinates are in range (pp < P, hr <
// H / G, hq < G), so each sum is below twice its bound and one subtraction is enough.
__device__ __forceinline__ void advance(const PipeParams& p, Walk& w, const Walk& step) {
  w.pp += step.pp;
  const int c0 = w.pp >= p.headdim;
  if (c0) w.pp -= p.headdim;
  w.hr += step.hr + c0;
  const int c1 = w.hr >= p.heads_per_group;
  if (c1) w.hr -= p.heads_per_group;
  w.hq += step.hq + c1;
  const int c2 = w.hq >= p.groups;
  if (c2) w.hq -= p.groups;
  w.b += step.b + c2;
}

// B and C as loaded: two packed pairs (16-bit types) or a float4, converted where they are used,
// so that no conversion of the next group waits on its loads.
template <class T>
struct Raw4 {
  using type = uint2;
};
template <>
struct Raw4<float> {
  using type = float4;
};
template <class T>
__device__ __forceinline__ float4 unpack4(uint2 raw) {
  const float2 lo = Half16<T>::unpack2(raw.x), hi = Half16<T>::unpack2(raw.y);
  return make_float4(lo.x, lo.y, hi.x, hi.y);
}
template <class T>
__device__ __forceinline__ float4 unpack4(float4 raw) {
  return raw;
}

// A T element's bits (16-bit types in the low half) and those bits as fp32; an fp32 rounded to
// nearest even into a T tensor. load and store of tensor_access.cuh with the dtype a template
// argument: a dtype switch per scalar access in this loop made nvcc thread each switch into the
// next (a 130,000-line kernel, minutes to compile), besides its instructions.
template <class T>
__device__ __forceinline__ uint32_t bits1(const void* p, int64_t i) {
  return reinterpret_cast<const uint16_t*>(p)[i];
}
template <>
__device__ __forceinline__ uint32_t bits1<float>(const void* p, int64_t i) {
  return reinterpret_cast<const uint32_t*>(p)[i];
}
template <class T>
__device__ __forceinline__ float from_bits(uint32_t u) {
  const uint16_t h = static_cast<uint16_t>(u);
  return Half16<T>::to(*reinterpret_cast<const T*>(&h));
}
template <>
__device__ __forceinline__ float from_bits<float>(uint32_t u) {
  return __uint_as_float(u);
}
template <class T>
__device__ __forceinline__ void store1(void* p, int64_t i, float v) {
  static_cast<T*>(p)[i] = Half16<T>::from(v);
}
template <>
__device__ __forceinline__ void store1<float>(void* p, int64_t i, float v) {
  static_cast<float*>(p)[i] = v;
}

// The registers of one row group in flight, as loaded (nothing here is used before consume, so no
// instruction of issue waits on a load). The group's scalars are spread over its first lanes, two
// per lane, not held by every lane (ten registers a lane for two rows): lane r < kRows holds dt and
// dt_bias of row r, lane kRows + r the bits of x and D, lane 2 kRows + r the bits of z; consume
// broadcasts them with shuffles.
template <class T, int kVecs, int kRows>
struct Group {
  float4 s[kRows][kVecs], a[kRows][kVecs];
  typename Raw4<T>::type b[kVecs], c[kVecs];
  uint32_t u;    // dt (f32 bits), x or z (T bits)
  float v;       // dt_bias or D; 0 where absent, as the one-shot kernel adds 0.0f without a bias
  int32_t srow;  // the state row of its first row, slot * H * P + h * P + p; -1: none (padding or a bad slot)
  int32_t row;   // its first row
};

// Issues every load of group w (slot: its slot entry, loaded a group ahead) and no store, except
// the outputs of decode_row_slot for a group without state: 0 for padding, NaN for a slot past the
// state, written by lane 0.
template <class T, int kVecs, int kRows>
__device__ __forceinline__ void issue(const PipeParams& p, const Walk& w, int32_t slot, int lane,
                                      Group<T, kVecs, kRows>& g) {
  const int32_t P = p.headdim, N = p.dstate;
  const int32_t bg = w.b * p.groups + w.hq;  // the row of B and C
  const int32_t row = (bg * p.heads_per_group + w.hr) * P + w.pp;
  g.row = row;
  g.srow = -1;
  if (slot < 0 || slot >= p.slot_count) {  // warp-uniform: the rows of a group share b
    if (lane == 0) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) store1<T>(p.out, row + r, slot < 0 ? 0.0f : __int_as_float(0x7fc00000));
    }
    return;
  }
  const int32_t hp = (w.hq * p.heads_per_group + w.hr) * P + w.pp;  // h * P + p of the first row
  g.srow = slot * (p.groups * p.heads_per_group * P) + hp;
  const float* state = p.state + static_cast<int64_t>(g.srow) * N;
  const float* A = p.A + static_cast<int64_t>(hp) * N;
  const int64_t bc = static_cast<int64_t>(bg) * N;
  const T* Bv = static_cast<const T*>(p.B) + bc;
  const T* Cv = static_cast<const T*>(p.C) + bc;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int32_t n = (k * kWarp + lane) * 4;
    if (n < N) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        g.s[r][k] = __ldcs(reinterpret_cast<const float4*>(state + r * N + n));  // read once, written back in consume
        g.a[r][k] = *reinterpret_cast<const float4*>(A + r * N + n);
      }
      g.b[k] = *reinterpret_cast<const typename Raw4<T>::type*>(Bv + n);
      g.c[k] = *reinterpret_cast<const typename Raw4<T>::type*>(Cv + n);
    }
  }
  g.u = 0;
  g.v = 0.0f;
  const int r = lane % kRows;
  if (lane < kRows) {
    g.u = __float_as_uint(p.dt[row + r]);
    if (p.dt_bias != nullptr) g.v = p.dt_bias[hp + r];
  } else if (lane < 2 * kRows) {
    g.u = bits1<T>(p.x, row + r);
    if (p.D != nullptr) g.v = p.D[hp + r];
  } else if (lane < 3 * kRows && p.z != nullptr) {
    g.u = bits1<T>(p.z, row + r);
  }
}

// Updates group g's state rows and writes their outputs: the arithmetic of recurrent_fast_kernel,
// element for element and in its summation order (a shuffle moves a value's bits unchanged).
template <class T, int kVecs, int kRows>
__device__ __forceinline__ void consume(const PipeParams& p, const Group<T, kVecs, kRows>& g, int lane) {
  if (g.srow < 0) return;  // warp-uniform, so every lane or none reaches the shuffles
  const int32_t N = p.dstate;
  float* state = p.state + static_cast<int64_t>(g.srow) * N;
  // No dt_limit on the decode path: bias and softplus only, once in the lane of each row.
  float own;
  if (lane < kRows) {
    own = __uint_as_float(g.u) + g.v;
    if (p.softplus) own = softplus_thr20(own);
  } else {
    own = from_bits<T>(g.u);  // x, z
  }
  float dtp[kRows], xv[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    dtp[r] = __shfl_sync(kFullMask, own, r);
    xv[r] = __shfl_sync(kFullMask, own, kRows + r);
  }
  // k outside r, so that each B and C vector is converted once: each row still sums its k and e in
  // the one-shot kernel's order (the rows are independent).
  float acc[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = 0.0f;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int32_t n = (k * kWarp + lane) * 4;
    if (n < N) {
      const float4 bb = unpack4<T>(g.b[k]), cc = unpack4<T>(g.c[k]);
      const float bv[4] = {bb.x, bb.y, bb.z, bb.w}, cv[4] = {cc.x, cc.y, cc.z, cc.w};
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const float sv[4] = {g.s[r][k].x, g.s[r][k].y, g.s[r][k].z, g.s[r][k].w};
        const float av[4] = {g.a[r][k].x, g.a[r][k].y, g.a[r][k].z, g.a[r][k].w};
        float hn[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float decay = expf(av[e] * dtp[r]);
          hn[e] = sv[e] * decay + bv[e] * dtp[r] * xv[r];
          acc[r] += hn[e] * cv[e];  // from the unrounded new state
        }
        __stcs(reinterpret_cast<float4*>(state + r * N + n), make_float4(hn[0], hn[1], hn[2], hn[3]));
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    float y = warp_sum(acc[r]);
    // D and z from their lanes (uniform branches: every lane shuffles or none).
    const float dv = p.D != nullptr ? __shfl_sync(kFullMask, g.v, kRows + r) : 0.0f;
    const float zv = p.z != nullptr ? __shfl_sync(kFullMask, own, 2 * kRows + r) : 0.0f;
    if (lane == 0) {
      if (p.D != nullptr) y += dv * xv[r];
      if (p.z != nullptr) y = gate(y, zv);
      store1<T>(p.out, g.row + r, y);
    }
  }
}

// Blocks per SM, for __launch_bounds__ and the grid: the most at which ptxas fits two groups in
// flight without spilling (80 registers for 3 blocks, 128 for 2). f32 B and C take twice the
// registers of the 16-bit ones.
template <class T, int kVecs, int kRows>
constexpr int kPipeMinBlocks = kVecs == 4 || (sizeof(T) == 4 && kVecs * kRows > 1) ? 2 : 3;

// The slot entry of row b (b itself without a table), loaded one group ahead of its use: the state
// address of a group depends on it, and waiting on it would hold back that group's loads.
__device__ __forceinline__ int32_t row_slot(const PipeParams& p, int32_t b) {
  return p.slots != nullptr ? p.slots[b] : b;
}

// Warp w takes row groups w, w + W, w + 2W, ... (W warps in the grid), two groups in registers:
// the loads of group i + W are issued before group i is updated, so its stores and its exp chain
// overlap the next round trip. Unrolled by two so that the groups swap roles without copies (a copy
// of a group whose loads are in flight would wait for them). Reading group i + W's state before
// group i's is written is safe where the one-shot grid is: the contract gives no two rows one slot,
// so no two groups share a state row.
template <class T, int kVecs, int kRows>
__global__ void __launch_bounds__(kThreads, (kPipeMinBlocks<T, kVecs, kRows>)) recurrent_pipe_kernel(PipeParams p) {
  wait_previous_grid();
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const uint32_t warp = blockIdx.x * kWarpsPerBlock + threadIdx.x / kWarp;
  Walk w = decompose(p, warp * kRows);
  if (w.b >= p.batch) return;  // warp-uniform; no block barrier follows
  const Walk step = decompose(p, gridDim.x * kWarpsPerBlock * kRows);
  Group<T, kVecs, kRows> g0, g1;
  issue(p, w, row_slot(p, w.b), lane, g0);
  advance(p, w, step);
  int32_t slot = w.b < p.batch ? row_slot(p, w.b) : 0;
  // One turn: the loads of the next group into `next` (if there is one), then `current` updated;
  // false once no group is left. Warp-uniform, as is every branch in it.
  const auto turn = [&](Group<T, kVecs, kRows>& next, const Group<T, kVecs, kRows>& current) {
    const bool more = w.b < p.batch;
    if (more) {
      issue(p, w, slot, lane, next);
      advance(p, w, step);
      if (w.b < p.batch) slot = row_slot(p, w.b);
    }
    consume(p, current, lane);
    return more;
  };
  while (turn(g1, g0) && turn(g0, g1)) {
  }
}

// Where the persistent kernel applies: rows below 2^30 (a row plus a grid stride stays below
// 2^31), state rows (Bs H P) below 2^31, and the contract's dtypes (x, z and out those of B and C;
// dt, D and dt_bias f32), which it reads without a dtype switch. Other calls run the one-shot grid.
template <class T>
bool pipe_fits(const FastParams& f) {
  int32_t t = SSD_DTYPE_F32;
  if constexpr (!std::is_same<T, float>::value) t = Half16<T>::kDtype;
  const auto f32_or_absent = [](In v) { return v.p == nullptr || v.dtype == SSD_DTYPE_F32; };
  return f.batch * f.heads * f.headdim < (int64_t{1} << 30) && f.slot_count * f.heads * f.headdim <= INT32_MAX &&
         f.x.dtype == t && f.out.dtype == t && (f.z.p == nullptr || f.z.dtype == t) && f.dt.dtype == SSD_DTYPE_F32 &&
         f32_or_absent(f.D) && f32_or_absent(f.dt_bias);
}

// Runs the persistent grid and returns true where the rows give each of its warps at least two
// groups; below that a warp has no next group to overlap (the one-shot grid with a loop around it).
// The grid is the resident one, kPipeMinBlocks blocks per SM (__launch_bounds__ guarantees that
// they fit; a constant, so no occupancy query runs at launch or inside a graph capture), trimmed
// so that the groups spread evenly: every warp takes ceil(groups / W) or one fewer.
template <class T, int kVecs, int kRows>
bool launch_pipe(const FastParams& f, cudaStream_t stream) {
  const int64_t groups = f.batch * f.heads * f.headdim / kRows;
  const int64_t resident = multiprocessors("recurrent") * kPipeMinBlocks<T, kVecs, kRows> * kWarpsPerBlock;  // warps
  if (groups < 2 * resident) return false;
  const int64_t per_warp = ceil_div(groups, resident);
  const auto blocks = static_cast<unsigned>(ceil_div(ceil_div(groups, per_warp), kWarpsPerBlock));
  PipeParams p{};
  p.state = f.state;
  p.A = f.A;
  p.B = f.B;
  p.C = f.C;
  p.slots = f.slots;
  p.x = f.x.p;
  p.z = f.z.p;
  p.dt = static_cast<const float*>(f.dt.p);
  p.D = static_cast<const float*>(f.D.p);
  p.dt_bias = static_cast<const float*>(f.dt_bias.p);
  p.out = f.out.p;
  p.batch = static_cast<int32_t>(f.batch);
  p.slot_count = static_cast<int32_t>(f.slot_count);
  p.headdim = static_cast<int32_t>(f.headdim);
  p.dstate = static_cast<int32_t>(f.dstate);
  p.heads_per_group = static_cast<int32_t>(f.heads / f.groups);
  p.groups = static_cast<int32_t>(f.groups);
  p.softplus = f.softplus;
  launch_kernel("recurrent", "launch of recurrent_pipe_kernel", recurrent_pipe_kernel<T, kVecs, kRows>, blocks, kThreads, 0,
                stream, p);
  return true;
}

template <class T, int kVecs>
void launch_rows(const FastParams& p, cudaStream_t stream) {
  // The persistent grid first, where its two groups in flight fit 128 registers: two rows a group
  // at N <= 128 (P even, so that no group crosses a head), one row above. f32 B and C at N > 256
  // stay on the one-shot grid: two such groups take 189 registers, one block (8 warps) per SM.
  if constexpr (kVecs <= 2 || sizeof(T) == 2) {
    if (pipe_fits<T>(p)) {
      if constexpr (kVecs == 1) {
        if (p.headdim % 2 == 0 ? launch_pipe<T, 1, 2>(p, stream) : launch_pipe<T, 1, 1>(p, stream)) return;
      } else {
        if (launch_pipe<T, kVecs, 1>(p, stream)) return;
      }
    }
  }
  // Two rows per warp where there are rows for a full wave of warps (64 per SM) that way; fewer
  // warps in flight cost more than the second row's loads gain on the small batches.
  const int64_t rows = p.batch * p.heads * p.headdim;
  const bool two = p.headdim % 2 == 0 && rows / 2 >= multiprocessors("recurrent") * 64;
  const auto blocks = [&](int per_warp) { return static_cast<unsigned>(ceil_div(rows, kRowsPerBlock * per_warp)); };
  if (two)
    launch_kernel("recurrent", "launch of recurrent_fast_kernel", recurrent_fast_kernel<T, kVecs, 2>, blocks(2), kThreads, 0,
                  stream, p);
  else
    launch_kernel("recurrent", "launch of recurrent_fast_kernel", recurrent_fast_kernel<T, kVecs, 1>, blocks(1), kThreads, 0,
                  stream, p);
}

template <class T>
void launch(const FastParams& p, cudaStream_t stream) {
  const int64_t vecs = ceil_div(p.dstate, 4 * kWarp);
  if (vecs <= 1)
    launch_rows<T, 1>(p, stream);
  else if (vecs <= 2)
    launch_rows<T, 2>(p, stream);
  else
    launch_rows<T, kMaxVecs>(p, stream);
  check_launch("recurrent", "recurrent_fast_kernel");
}

}  // namespace

bool launch_recurrent_fast(const ssd_recurrent_args& a, cudaStream_t stream) {
  if (a.state.dtype != SSD_DTYPE_F32 || a.A.dtype != SSD_DTYPE_F32 || a.B.dtype != a.C.dtype) return false;
  const int64_t Bs = a.state.shape[0], H = a.state.shape[1], P = a.state.shape[2], N = a.state.shape[3];
  const int64_t Bt = a.x.shape[0];
  const int elem = a.B.dtype == SSD_DTYPE_F32 ? 4 : 2;
  // Whole float4 / 4-element chunks: N % 4 == 0 and every row aligned (the bases 16- and 8-byte).
  if (N % 4 != 0 || N > kMaxVecs * 4 * kWarp) return false;
  if (!aligned16(a.state.data) || !aligned16(a.A.data) || (reinterpret_cast<uintptr_t>(a.B.data) % (4 * elem)) != 0 ||
      (reinterpret_cast<uintptr_t>(a.C.data) % (4 * elem)) != 0)
    return false;
  const int64_t blocks = ceil_div(Bt * H * P, kRowsPerBlock);
  if (blocks > 0x7fffffff) return false;

  FastParams p{};
  p.state = static_cast<float*>(a.state.data);
  p.A = static_cast<const float*>(a.A.data);
  p.B = a.B.data;
  p.C = a.C.data;
  p.x = in(a.x);
  p.dt = in(a.dt);
  p.D = in(a.D);
  p.z = in(a.z);
  p.dt_bias = in(a.dt_bias);
  p.slots = ids(a.state_batch_indices);
  p.out = out(a.out);
  p.batch = Bt;
  p.slot_count = Bs;
  p.heads = H;
  p.headdim = P;
  p.groups = a.B.shape[1];
  p.dstate = N;
  p.softplus = a.dt_softplus != 0;
  if (blocks == 0) return true;
  switch (a.B.dtype) {
    case SSD_DTYPE_F16: launch<__half>(p, stream); break;
    case SSD_DTYPE_BF16: launch<__nv_bfloat16>(p, stream); break;
    default: launch<float>(p, stream); break;
  }
  return true;
}

}  // namespace ssd_gpu
