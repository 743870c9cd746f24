// SSDRecurrentFwd with an f32 state and f32 A (the decode layout): one warp per state row
// (b, h, p), each lane owning 4 consecutive n, so a 128-wide row is one 16-byte load of state and A
// per lane. All of a lane's loads are issued before its first store: the in-place state otherwise
// serializes every element into its own round trip to memory.
#include "decode_slot.cuh"
#include "mma.cuh"

namespace ssd_gpu {
namespace {

constexpr int kRowsPerBlock = kThreads / kWarp;
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

template <class T, int kVecs>
void launch_rows(const FastParams& p, cudaStream_t stream) {
  // Two rows per warp where there are rows for a full wave of warps (64 per SM) that way; fewer
  // warps in flight cost more than the second row's loads gain on the small batches.
  const int64_t rows = p.batch * p.heads * p.headdim;
  const bool two = p.headdim % 2 == 0 && rows / 2 >= multiprocessors("recurrent") * 64;
  const auto blocks = [&](int per_warp) { return static_cast<unsigned>(ceil_div(rows, kRowsPerBlock * per_warp)); };
  if (two)
    recurrent_fast_kernel<T, kVecs, 2><<<blocks(2), kThreads, 0, stream>>>(p);
  else
    recurrent_fast_kernel<T, kVecs, 1><<<blocks(1), kThreads, 0, stream>>>(p);
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
