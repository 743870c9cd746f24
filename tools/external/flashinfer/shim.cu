// One configuration of FlashInfer's selective_state_update kernels, compiled from its own headers
// as its JIT compiles csrc/selective_state_update.cu for one module: the dtypes, DIM, DSTATE and
// NTOKENS_MTP come from -D values (build.sh), as FlashInfer's jinja config renders them. SSU_ENTRY
// fills FlashInfer's params struct as run_selective_state_update_stp/_mtp do and calls its launcher.
//
// Each configuration is compiled once and all are linked into one library, so FlashInfer's namespace
// is renamed per configuration (SSU_NAMESPACE): its templates read the global DIM, DSTATE and
// NTOKENS_MTP, and two configurations would otherwise define the same symbols.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "ssu_internal.h"

// selective_state_update_customize_config.jinja, rendered from the -D values.
using state_t = SSU_STATE_T;
using input_t = SSU_INPUT_T;
using weight_t = SSU_WEIGHT_T;
using matrixA_t = SSU_MATRIXA_T;
using stateIndex_t = SSU_INDEX_T;
using cuSeqlensIndex_t = int32_t;    // only int32 cu_seqlens are built (api.cpp checks)
using numAcceptedIndex_t = int32_t;  // likewise num_accepted_tokens
using state_scale_t = void;          // no int16 state with block scales
constexpr int DIM = SSU_DIM;
constexpr int DSTATE = SSU_DSTATE;
constexpr int NTOKENS_MTP = SSU_NTOKENS;
constexpr int PHILOX_ROUNDS = 0;  // no stochastic rounding (rand_seed is refused)

#define flashinfer SSU_NAMESPACE
#include <flashinfer/mamba/selective_state_update.cuh>
#undef flashinfer

namespace fi = SSU_NAMESPACE::mamba;

namespace {

// csrc's batch strides and pointers, common to both paths (SelectiveStateUpdateParams).
void fill_common(fi::SelectiveStateUpdateParams& p, ssu_call const& c, ssu::Shape const& s) {
  ssu::Tensor state(c.state, "state"), x(c.x, "x"), dt(c.dt, "dt"), B(c.B, "B"), C(c.C, "C"),
      z(c.z, "z"), out(c.output, "out"), sbi(c.state_batch_indices, "state_batch_indices"),
      dsbi(c.dst_state_batch_indices, "dst_state_batch_indices");
  p.batch = s.batch;
  p.nheads = s.nheads;
  p.dim = s.dim;
  p.dstate = s.dstate;
  p.ngroups = s.ngroups;
  p.state_cache_size = s.state_cache_size;
  p.dt_softplus = c.dt_softplus != 0;
  p.pad_slot_id = c.pad_slot_id;
  p.update_state = c.disable_state_update == 0;

  p.x_stride_batch = x.stride(0);
  p.dt_stride_batch = dt.stride(0);
  p.B_stride_batch = B.stride(0);
  p.C_stride_batch = C.stride(0);
  p.out_stride_batch = out.has_value() ? out.stride(0) : 0;
  p.state_stride_batch = state.stride(0);
  if (sbi.has_value()) {
    p.state_batch_indices = sbi.data_ptr();
    p.state_batch_indices_stride_batch = sbi.stride(0);
    p.state_batch_indices_stride_T = sbi.dim() >= 2 ? sbi.stride(1) : 0;
  }
  if (dsbi.has_value()) {
    p.dst_state_batch_indices = dsbi.data_ptr();
    p.dst_state_batch_indices_stride_batch = dsbi.stride(0);
    p.dst_state_batch_indices_stride_T = dsbi.dim() >= 2 ? dsbi.stride(1) : 0;
  }

  p.state = state.data_ptr();
  p.x = x.data_ptr();
  p.dt = dt.data_ptr();
  p.output = out.has_value() ? out.data_ptr() : nullptr;
  if (c.dt_bias.dtype != SSU_ABSENT) p.dt_bias = c.dt_bias.data;
  if (z.has_value()) {
    p.z = z.data_ptr();
    p.z_stride_batch = z.stride(0);
  }
  p.A = c.A.data;
  p.B = c.B.data;
  p.C = c.C.data;
  p.D = c.D.data;
}

#if SSU_MTP
// run_selective_state_update_mtp's params (its token strides, tables and buffers).
void run(ssu_call const& c, ssu::Shape const& s) {
  fi::mtp::SelectiveStateMTPParams p;
  fill_common(p, c, s);
  ssu::Tensor x(c.x, "x"), dt(c.dt, "dt"), B(c.B, "B"), C(c.C, "C"), z(c.z, "z"), out(c.output, "out"),
      inter(c.intermediate_states_buffer, "intermediate_states_buffer");
  p.ntokens_mtp = s.ntokens_mtp;
  p.cache_steps = static_cast<uint64_t>(c.cache_steps);
  if (!s.varlen) {
    p.x_stride_mtp = x.stride(1);
    p.dt_stride_mtp = dt.stride(1);
    p.B_stride_mtp = B.stride(1);
    p.C_stride_mtp = C.stride(1);
    p.out_stride_mtp = out.has_value() ? out.stride(1) : 0;
  }
  if (z.has_value()) p.z_stride_mtp = s.varlen ? 0 : z.stride(1);
  if (c.cu_seqlens.dtype != SSU_ABSENT) p.cu_seqlens = c.cu_seqlens.data;
  if (c.num_accepted_tokens.dtype != SSU_ABSENT) p.num_accepted_tokens = c.num_accepted_tokens.data;
  if (inter.has_value()) {
    p.intermediate_states = inter.data_ptr();
    p.intermediate_state_stride_batch = inter.stride(0);
  }
  if (c.intermediate_state_indices.dtype != SSU_ABSENT) {
    p.intermediate_state_indices = c.intermediate_state_indices.data;
  }
  auto const algorithm = static_cast<fi::SSUAlgorithm>(c.algorithm);
  fi::mtp::invokeSelectiveStateUpdateMTP<input_t, weight_t, matrixA_t, state_t, stateIndex_t, state_scale_t>(
      p, algorithm, static_cast<cudaStream_t>(c.stream));
}
#else
// run_selective_state_update_stp's params.
void run(ssu_call const& c, ssu::Shape const& s) {
  fi::SelectiveStateUpdateParams p;
  fill_common(p, c, s);
  auto const algorithm = static_cast<fi::SSUAlgorithm>(c.algorithm);
  fi::invokeSelectiveStateUpdate<input_t, weight_t, matrixA_t, state_t, stateIndex_t, state_scale_t>(
      p, algorithm, static_cast<cudaStream_t>(c.stream));
}
#endif

}  // namespace

namespace ssu {
void SSU_ENTRY(ssu_call const& call, Shape const& shape) { run(call, shape); }
}  // namespace ssu
