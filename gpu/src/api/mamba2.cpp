// Mamba2Fwd (mamba_chunk_scan_combined): the five stage kernels in sequence on the caller's stream,
// as upstream's _mamba_chunk_scan_combined_fwd does, with stream-ordered temporaries
// (cudaMallocAsync / cudaFreeAsync, so the call is CUDA-graph capturable):
//   chunk_cumsum -> chunk_state (f32 states) -> state_passing (entering states in C's dtype,
//   f32 final states) -> chunk_coupling (f32 CB, seq-masked) -> chunk_scan (out in x's dtype).
// With f16/bf16 x, B and C both run on tensor cores: CB once per (chunk, group), in f32, which
// every head of the group then reads from L2 (chunk_scan_tc.cu).
// Host code only: the argument checks, the temporaries and the parameter blocks of the stage
// launchers (params.h), whose kernels live in the stage files.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "api/entry_points.h"
#include "host.h"
#include "params.h"

namespace ssd_gpu {
namespace {

size_t dtype_size(int32_t dtype) { return dtype == SSD_DTYPE_F32 ? 4 : 2; }

// Stream-ordered temporaries, freed on the same stream in every case (also after a failure).
class Scratch {
 public:
  Scratch(const char* op, cudaStream_t stream) : op_(op), stream_(stream) {}
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    for (int i = count_ - 1; i >= 0; --i) cudaFreeAsync(blocks_[i], stream_);
  }
  void* get(size_t bytes, const char* what) {
    void* p = nullptr;
    const std::string label = std::string("cudaMallocAsync of ") + std::to_string(bytes) + " bytes for " + what;
    cuda_check(op_, cudaMallocAsync(&p, bytes, stream_), label.c_str());
    blocks_[count_++] = p;
    return p;
  }

 private:
  const char* op_;
  cudaStream_t stream_;
  void* blocks_[8] = {};
  int count_ = 0;
};

}  // namespace

ssd_status mamba2(const ssd_mamba2_args* args) {
  return guarded("mamba2", args, [&] {
    const ssd_mamba2_args& a = *args;
    const char* op = "mamba2";
    const Check k{op};
    // Packed varlen batches and a state dtype (ABI version 3) are not implemented here.
    if (present(a.cu_seqlens))
      fail(op, "cu_seqlens", "packed varlen batches are not implemented by this library", SSD_STATUS_UNSUPPORTED);
    if (a.state_dtype >= 0)
      fail(op, "state_dtype", "a state dtype other than C's is not implemented by this library", SSD_STATUS_UNSUPPORTED);
    k.float_input("x", a.x);
    k.float_input("B", a.B);
    const TokenDims d = k.token_major(a.x, "B", a.B);
    const Shape bc_shape{d.batch, d.seqlen, d.groups, d.dstate};
    k.float_input("C", a.C);
    k.shape("C", a.C, bc_shape, "[Bt,S,G,N] (the shape of B)");
    k.float_input("dt", a.dt);
    k.shape("dt", a.dt, {d.batch, d.seqlen, d.heads}, "[Bt,S,H]");
    k.float_input("A", a.A);
    k.shape("A", a.A, {d.heads}, "[H]");
    k.positive("chunk_size", a.chunk_size);
    const int64_t Q = a.chunk_size, NC = ceil_div(d.seqlen, Q);
    const bool d_has_hdim = k.skip_D(a.D, d.heads, d.headdim);
    const Shape token_shape{d.batch, d.seqlen, d.heads, d.headdim};
    k.optional_float("z", a.z, token_shape, "[Bt,S,H,P]");
    k.optional_float("dt_bias", a.dt_bias, {d.heads}, "[H]");
    const Shape state_shape{d.batch, d.heads, d.headdim, d.dstate};
    k.optional_float("initial_states", a.initial_states, state_shape, "[Bt,H,P,N]");
    if (present(a.seq_idx)) k.seq_idx(a.seq_idx, d.batch, d.seqlen);
    k.dt_limit(a.dt_limit_lo, a.dt_limit_hi);
    k.output("out", a.out, token_shape, "[Bt,S,H,P]", {a.x.dtype}, (std::string("x's dtype, ") + dtype_name(a.x.dtype)).c_str());
    // final_states may be omitted (upstream return_final_states=False); when given it is f32.
    if (present(a.final_states))
      k.output("final_states", a.final_states, state_shape, "[Bt,H,P,N]", {SSD_DTYPE_F32}, "f32");
    k.contiguous({{"x", &a.x}, {"dt", &a.dt}, {"A", &a.A}, {"B", &a.B}, {"C", &a.C}, {"D", &a.D}, {"z", &a.z},
                  {"dt_bias", &a.dt_bias}, {"initial_states", &a.initial_states}, {"seq_idx", &a.seq_idx},
                  {"out", &a.out}, {"final_states", &a.final_states}});

    const cudaStream_t stream = stream_of(a.stream);
    const int64_t chunk_major = d.batch * d.heads * NC * Q;
    const int64_t state_elems = d.batch * NC * d.heads * d.headdim * d.dstate;
    Scratch scratch(op, stream);
    auto* dA = static_cast<float*>(scratch.get(sizeof(float) * chunk_major, "dA_cumsum"));
    auto* dtp = static_cast<float*>(scratch.get(sizeof(float) * chunk_major, "dt'"));
    auto* states = static_cast<float*>(scratch.get(sizeof(float) * state_elems, "chunk states"));
    void* prev = scratch.get(dtype_size(a.C.dtype) * state_elems, "entering states");
    // All temporaries before the first kernel, so that the stages follow each other directly (in a
    // captured graph, kernel after kernel) and can overlap (stage_of_call).
    const int64_t cb_elems = d.batch * NC * d.groups * Q * Q;
    auto* cb = static_cast<float*>(scratch.get(sizeof(float) * cb_elems, "CB"));
    const int32_t* seq = ids(a.seq_idx);

    CumsumParams cs{};
    cs.dt = in(a.dt);
    cs.A = in(a.A);
    cs.dt_bias = in(a.dt_bias);
    cs.dA_cumsum = dA;
    cs.dt_out = dtp;
    fill_dims(cs, d.batch, d.seqlen, d.heads, Q);
    cs.softplus = a.dt_softplus != 0;
    cs.lo = static_cast<float>(a.dt_limit_lo);
    cs.hi = static_cast<float>(a.dt_limit_hi);
    cs.stage_of_call = true;
    launch_chunk_cumsum(op, cs, stream);

    ChunkStateParams st{};
    st.B = in(a.B);
    st.x = in(a.x);
    st.dt = In{dtp, SSD_DTYPE_F32};
    st.dA = In{dA, SSD_DTYPE_F32};
    st.seq_idx = seq;
    st.states = Out{states, SSD_DTYPE_F32};
    fill_dims(st, d, Q);
    st.stage_of_call = true;
    launch_chunk_state(op, st, stream);

    StatePassingParams sp{};
    sp.states = In{states, SSD_DTYPE_F32};
    sp.dA = In{dA, SSD_DTYPE_F32};  // chunk totals: dA_cumsum[b,h,c,Q-1]
    sp.dA_step = Q;
    sp.dA_offset = Q - 1;
    sp.initial = in(a.initial_states);
    sp.seq_idx = seq;
    sp.out = Out{prev, a.C.dtype};  // inter-chunk states stored in C's dtype
    sp.final_states = static_cast<float*>(a.final_states.data);
    fill_dims(sp, d, Q);
    sp.width = d.headdim * d.dstate;
    sp.stage_of_call = true;
    launch_state_passing(op, sp, stream);

    ChunkScanParams sc{};
    sc.x = in(a.x);
    sc.dt = In{dtp, SSD_DTYPE_F32};
    sc.dA = In{dA, SSD_DTYPE_F32};
    sc.C = in(a.C);
    sc.states = In{prev, a.C.dtype};
    sc.D = in(a.D);
    sc.z = in(a.z);
    sc.d_has_hdim = d_has_hdim;
    sc.seq_idx = seq;
    sc.out = out(a.out);
    sc.out_x = Out{nullptr, a.x.dtype};
    fill_dims(sc, d, Q);
    CouplingParams cp{};
    cp.C = in(a.C);
    cp.B = in(a.B);
    cp.seq_idx = seq;
    cp.CB = Out{cb, SSD_DTYPE_F32};
    fill_dims(cp, d, Q);
    cp.causal = true;        // chunk_scan reads only k <= i, so tiles above the diagonal are not needed
    cp.operand_dtype = -1;   // CB kept in f32 from the exact fp32 products (seq-masked)
    cp.stage_of_call = true;
    launch_chunk_coupling(op, cp, stream);

    sc.cb = In{cb, SSD_DTYPE_F32};
    sc.stage_of_call = true;
    launch_chunk_scan(op, sc, stream);
  });
}

}  // namespace ssd_gpu
