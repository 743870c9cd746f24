// SSDStatePassingFwd: the exclusive inter-chunk scan M <- rho_c * exp(alpha_c) * M + states_c.
// One block per (batch, head, slice of 256 state elements); each thread carries one element of
// the running fp32 state through all chunks. The per-chunk scales (decay and seq_idx reset) are
// computed 256 chunks at a time into shared memory, so the serial loop is a load and an FMA.
#include "chunk_carry.cuh"

namespace ssd_gpu {
namespace {

__global__ void __launch_bounds__(kThreads) state_passing_kernel(StatePassingParams p) {
  __shared__ float sScale[kThreads];
  const int tid = static_cast<int>(threadIdx.x);
  const int64_t NC = p.chunks, H = p.heads, D = p.width;
  const int64_t slices = ceil_div(D, kThreads);
  const int64_t tiles = p.batch * H * slices;

  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t bh = tile / slices;
    const int64_t b = bh / H, h = bh % H;
    const int64_t d = (tile % slices) * kThreads + tid;
    const bool active = d < D;
    float M = (active && p.initial.p != nullptr) ? load(p.initial, bh * D + d) : 0.0f;
    for (int64_t c0 = 0; c0 < NC; c0 += kThreads) {
      __syncthreads();  // the previous batch of scales is consumed
      const int64_t c = c0 + tid;
      if (c < NC) {
        sScale[tid] = chunk_carry_scale(p, b, bh, NC, c);
      }
      __syncthreads();
      if (!active) continue;
      const int64_t count = min(static_cast<int64_t>(kThreads), NC - c0);
      for (int64_t cc = 0; cc < count; ++cc) {
        const int64_t at = ((b * NC + c0 + cc) * H + h) * D + d;
        store(p.out, at, M);  // the state ENTERING chunk c0 + cc
        M = sScale[cc] * M + load(p.states, at);
      }
    }
    if (active && p.final_states != nullptr) p.final_states[bh * D + d] = M;
  }
}

}  // namespace

void launch_state_passing(const char* op, const StatePassingParams& p, cudaStream_t stream) {
#ifndef SSD_GPU_REFERENCE_ONLY
  if (launch_state_passing_fast(op, p, stream)) return;
#endif
  const int64_t tiles = p.batch * p.heads * ceil_div(p.width, kThreads);
  state_passing_kernel<<<grid_for(tiles), kThreads, 0, stream>>>(p);
  check_launch(op, "state_passing_kernel");
}

ssd_status state_passing(const ssd_state_passing_args* args) {
  return guarded("state_passing", args, [&] {
    const ssd_state_passing_args& a = *args;
    const Check k{"state_passing"};
    k.float_input("states", a.states);
    const Shape s = k.extents("states", a.states, 4, "[Bt,NC,H,D]");
    const int64_t Bt = s[0], NC = s[1], H = s[2], D = s[3];
    k.float_input("dA_chunk_cumsum", a.dA_chunk_cumsum);
    k.shape("dA_chunk_cumsum", a.dA_chunk_cumsum, {Bt, H, NC}, "[Bt,H,NC]");
    k.optional_float("initial_states", a.initial_states, {Bt, H, D}, "[Bt,H,D]");
    int64_t S = 0;
    if (present(a.seq_idx)) {
      k.rank("seq_idx", a.seq_idx, 2, "[Bt,S]");
      k.positive("chunk_size", a.chunk_size);
      S = a.seq_idx.shape[1];
      k.seq_idx(a.seq_idx, Bt, S);
      if (ceil_div(S, a.chunk_size) != NC)
        fail("state_passing", "seq_idx",
             "S = " + std::to_string(S) + " with chunk_size " + std::to_string(a.chunk_size) + " gives " +
                 std::to_string(ceil_div(S, a.chunk_size)) + " chunks, but states has NC = " + std::to_string(NC));
    }
    k.output("out", a.out, {Bt, NC, H, D}, "[Bt,NC,H,D]", {SSD_DTYPE_F32, SSD_DTYPE_F16, SSD_DTYPE_BF16},
             "a floating-point dtype (states' dtype by default)");
    k.output("final_states", a.final_states, {Bt, H, D}, "[Bt,H,D]", {SSD_DTYPE_F32}, "f32");
    k.contiguous("states", a.states);
    k.contiguous("dA_chunk_cumsum", a.dA_chunk_cumsum);
    if (present(a.initial_states)) k.contiguous("initial_states", a.initial_states);
    if (present(a.seq_idx)) k.contiguous("seq_idx", a.seq_idx);
    k.contiguous("out", a.out);
    k.contiguous("final_states", a.final_states);

    StatePassingParams p{};
    p.states = in(a.states);
    p.dA = in(a.dA_chunk_cumsum);
    p.dA_step = 1;
    p.dA_offset = 0;
    p.initial = in(a.initial_states);
    p.seq_idx = ids(a.seq_idx);
    p.seqlen = S;
    p.chunk = a.chunk_size;
    p.out = out(a.out);
    p.final_states = static_cast<float*>(a.final_states.data);
    p.batch = Bt;
    p.chunks = NC;
    p.heads = H;
    p.width = D;
    launch_state_passing("state_passing", p, stream_of(a.stream));
  });
}

}  // namespace ssd_gpu
