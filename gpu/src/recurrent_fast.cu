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

template <class T, int kVecs>
__global__ void __launch_bounds__(kThreads) recurrent_fast_kernel(FastParams p) {
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int64_t H = p.heads, P = p.headdim, N = p.dstate;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarp;
  if (row >= p.batch * H * P) return;  // warp-uniform; no block barrier follows
  const int64_t pp = row % P, h = (row / P) % H, b = row / (P * H);
  const int64_t g = h / (H / p.groups);
  const int64_t slot = decode_row_slot(p, b, row, lane);
  if (slot < 0) return;
  float* state = p.state + ((slot * H + h) * P + pp) * N;
  const float* A = p.A + (h * P + pp) * N;
  const T* Bv = static_cast<const T*>(p.B) + (b * p.groups + g) * N;
  const T* Cv = static_cast<const T*>(p.C) + (b * p.groups + g) * N;

  float4 s[kVecs], a[kVecs], bb[kVecs], cc[kVecs];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t n = (static_cast<int64_t>(k) * kWarp + lane) * 4;
    if (n < N) {
      s[k] = __ldcs(reinterpret_cast<const float4*>(state + n));  // read once, written back below
      a[k] = load4(A + n);
      bb[k] = load4(Bv + n);
      cc[k] = load4(Cv + n);
    }
  }
  // No dt_limit on the decode path: bias and softplus only.
  float dtp = load(p.dt, row) + (p.dt_bias.p != nullptr ? load(p.dt_bias, h * P + pp) : 0.0f);
  if (p.softplus) dtp = softplus_thr20(dtp);
  const float xv = load(p.x, row);

  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t n = (static_cast<int64_t>(k) * kWarp + lane) * 4;
    if (n < N) {
      const float sv[4] = {s[k].x, s[k].y, s[k].z, s[k].w}, av[4] = {a[k].x, a[k].y, a[k].z, a[k].w};
      const float bv[4] = {bb[k].x, bb[k].y, bb[k].z, bb[k].w}, cv[4] = {cc[k].x, cc[k].y, cc[k].z, cc[k].w};
      float hn[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float decay = expf(av[e] * dtp);
        hn[e] = sv[e] * decay + bv[e] * dtp * xv;
        acc += hn[e] * cv[e];  // from the unrounded new state
      }
      __stcs(reinterpret_cast<float4*>(state + n), make_float4(hn[0], hn[1], hn[2], hn[3]));
    }
  }
  float y = warp_sum(acc);
  if (lane == 0) {
    if (p.D.p != nullptr) y += load(p.D, h * P + pp) * xv;
    if (p.z.p != nullptr) y = gate(y, load(p.z, row));
    store(p.out, row, y);
  }
}

template <class T>
void launch(const FastParams& p, unsigned blocks, cudaStream_t stream) {
  const int64_t vecs = ceil_div(p.dstate, 4 * kWarp);
  if (vecs <= 1)
    recurrent_fast_kernel<T, 1><<<blocks, kThreads, 0, stream>>>(p);
  else if (vecs <= 2)
    recurrent_fast_kernel<T, 2><<<blocks, kThreads, 0, stream>>>(p);
  else
    recurrent_fast_kernel<T, kMaxVecs><<<blocks, kThreads, 0, stream>>>(p);
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
  const unsigned grid = static_cast<unsigned>(blocks);
  switch (a.B.dtype) {
    case SSD_DTYPE_F16: launch<__half>(p, grid, stream); break;
    case SSD_DTYPE_BF16: launch<__nv_bfloat16>(p, grid, stream); break;
    default: launch<float>(p, grid, stream); break;
  }
  return true;
}

}  // namespace ssd_gpu
