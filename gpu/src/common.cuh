// Host-side glue shared by the op files: CUDA error checks, the guarded ABI boundary, grid sizing,
// and the parameter blocks and launchers of the stage kernels (Mamba2Fwd chains them).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <exception>
#include <new>
#include <string>

#include "checks.h"
#include "tensor_access.cuh"

namespace ssd_gpu {

constexpr int kThreads = 256;  // every kernel runs 256-thread blocks

inline void cuda_check(const char* op, cudaError_t error, const char* what) {
  if (error == cudaSuccess) return;
  throw Failure{SSD_STATUS_RUNTIME_ERROR, std::string(op) + ": " + what + ": " + cudaGetErrorName(error) + " (" +
                                              cudaGetErrorString(error) + ")"};
}

// After a launch: a bad configuration or a sticky device error becomes SSD_STATUS_RUNTIME_ERROR.
inline void check_launch(const char* op, const char* kernel) {
  cuda_check(op, cudaGetLastError(), (std::string("launch of ") + kernel).c_str());
}

// Grid of a grid-stride tile loop: one block per tile up to the hardware limit of gridDim.x.
inline unsigned grid_for(int64_t tiles) {
  const int64_t cap = 0x7fffffff;
  return static_cast<unsigned>(tiles < 1 ? 1 : (tiles > cap ? cap : tiles));
}

// Streaming multiprocessors of the current device: persistent grids size themselves by it.
inline int64_t multiprocessors(const char* op) {
  int device = 0, count = 0;
  cuda_check(op, cudaGetDevice(&device), "cudaGetDevice");
  cuda_check(op, cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  return count;
}

inline In in(const ssd_tensor& t) { return In{t.data, t.dtype}; }
inline Out out(const ssd_tensor& t) { return Out{t.data, t.dtype}; }
inline const int32_t* ids(const ssd_tensor& t) { return static_cast<const int32_t*>(t.data); }
inline cudaStream_t stream_of(void* stream) { return static_cast<cudaStream_t>(stream); }

// The ABI boundary: no exception crosses it; a Failure becomes its status and last_error.
template <class Body>
ssd_status guarded(const char* op, const void* args, Body&& body) noexcept {
  try {
    if (args == nullptr) fail(op, "args", "the argument struct pointer is NULL");
    body();
    return SSD_STATUS_OK;
  } catch (const Failure& f) {
    set_last_error(f.message);
    return f.status;
  } catch (const std::bad_alloc&) {
    set_last_error(std::string(op) + ": out of host memory");
    return SSD_STATUS_RUNTIME_ERROR;
  } catch (const std::exception& e) {
    set_last_error(std::string(op) + ": " + e.what());
    return SSD_STATUS_RUNTIME_ERROR;
  } catch (...) {
    set_last_error(std::string(op) + ": unknown error");
    return SSD_STATUS_RUNTIME_ERROR;
  }
}

// ---- Stage kernels (one launcher each; `op` names the caller in error messages) ----------------

// dt' and the within-chunk inclusive cumsum of A*dt', both f32 [Bt,H,NC,Q].
struct CumsumParams {
  In dt, A, dt_bias;  // dt [Bt,S,H]; A, dt_bias [H] (dt_bias.p may be null)
  float* dA_cumsum;
  float* dt_out;
  int64_t batch, seqlen, heads, chunk, chunks;
  bool softplus;
  float lo, hi;
};
void launch_chunk_cumsum(const char* op, const CumsumParams& p, cudaStream_t stream);

// CB[b,c,g,i,j] = sum_n C[i,n] B[j,n], masked past the valid length and to same-sequence pairs.
struct CouplingParams {
  In C, B;  // [Bt,S,G,N]
  const int32_t* seq_idx;
  Out CB;  // [Bt,NC,G,Q,Q]
  int64_t batch, seqlen, groups, dstate, chunk, chunks;
  bool causal;            // skip tiles wholly above the diagonal (left unwritten)
  int32_t operand_dtype;  // dot operands rounded to this dtype first; -1: used as they are
};
void launch_chunk_coupling(const char* op, const CouplingParams& p, cudaStream_t stream);

// states[b,c,h,p,n] = sum_k x[k,p] * round_x(B[k,n] * w[k]).
struct ChunkStateParams {
  In B, x, dt, dA;  // B [Bt,S,G,N], x [Bt,S,H,P], dt and dA [Bt,H,NC,Q]
  const int32_t* seq_idx;
  Out states;  // [Bt,NC,H,P,N]
  int64_t batch, seqlen, heads, headdim, groups, dstate, chunk, chunks;
};
void launch_chunk_state(const char* op, const ChunkStateParams& p, cudaStream_t stream);

// The exclusive inter-chunk scan over a flat state of `width` elements per (b,h).
struct StatePassingParams {
  In states;  // [Bt,NC,H,D]
  In dA;      // chunk total of (b,h,c) at ((b*H+h)*NC+c)*dA_step + dA_offset
  int64_t dA_step, dA_offset;
  In initial;  // [Bt,H,D], p may be null
  const int32_t* seq_idx;
  int64_t seqlen, chunk;  // used with seq_idx
  Out out;                // [Bt,NC,H,D]
  float* final_states;    // [Bt,H,D], may be null
  int64_t batch, chunks, heads, width;
};
void launch_state_passing(const char* op, const StatePassingParams& p, cudaStream_t stream);

// out = carried-in term + causal within-chunk term + D*x, gated by z.
struct ChunkScanParams {
  In cb, x, dt, dA, C, states, D, z;  // D, z may be null
  bool d_has_hdim;
  const int32_t* seq_idx;
  Out out, out_x;  // out_x.p may be null
  int64_t batch, seqlen, heads, headdim, groups, dstate, chunk, chunks;
};
void launch_chunk_scan(const char* op, const ChunkScanParams& p, cudaStream_t stream);

// Tensor-core kernels (the *_tc.cu files, absent from the reference library built with
// SSD_GPU_REFERENCE_ONLY): each launches and returns true where its dtype and alignment
// conditions hold, and returns false otherwise, so the launcher above runs the fp32 kernel.
#ifndef SSD_GPU_REFERENCE_ONLY
bool launch_chunk_coupling_fast(const char* op, const CouplingParams& p, cudaStream_t stream);
bool launch_chunk_state_fast(const char* op, const ChunkStateParams& p, cudaStream_t stream);
bool launch_chunk_scan_fast(const char* op, const ChunkScanParams& p, cudaStream_t stream);
// MambaDiscretizeSegsum with 16-bit B and C (arguments already checked): tensor-core Gram tiles and
// 16-byte stores; false where its shape or alignment conditions do not hold.
bool launch_discretize_segsum_fast(const ssd_discretize_segsum_args& a, cudaStream_t stream);
// SSDRecurrentFwd with an f32 state and A (arguments already checked): 16-byte state rows, loads
// ahead of the in-place stores; false where its dtype or alignment conditions do not hold.
bool launch_recurrent_fast(const ssd_recurrent_args& a, cudaStream_t stream);
// Memory-bound stage kernels with coalesced or batched loads (launch_chunk_cumsum and
// launch_state_passing try them first, so Mamba2Fwd runs them too).
bool launch_chunk_cumsum_fast(const char* op, const CumsumParams& p, cudaStream_t stream);
bool launch_state_passing_fast(const char* op, const StatePassingParams& p, cudaStream_t stream);
#endif

// ---- ABI entry points (table.cu collects them) -------------------------------------------------
ssd_status mamba2(const ssd_mamba2_args* args);
ssd_status chunk_cumsum(const ssd_chunk_cumsum_args* args);
ssd_status chunk_coupling(const ssd_chunk_coupling_args* args);
ssd_status chunk_state(const ssd_chunk_state_args* args);
ssd_status state_passing(const ssd_state_passing_args* args);
ssd_status chunk_scan(const ssd_chunk_scan_args* args);
ssd_status recurrent(const ssd_recurrent_args* args);
ssd_status discretize_segsum(const ssd_discretize_segsum_args* args);

}  // namespace ssd_gpu
