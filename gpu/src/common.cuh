// What every kernel file includes: the device helpers, the host-side glue and parameter blocks of
// the launchers (host.h, params.h), the block size, and the fast paths the launchers offer a call.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "host.h"
#include "params.h"
#include "tensor_access.cuh"

namespace ssd_gpu {

constexpr int kThreads = 256;  // every kernel runs 256-thread blocks

// kernel<<<grid, block, smem, stream>>>(args...) as a programmatic dependent launch: the kernel's
// blocks may be scheduled while the previous kernel on the stream drains, once every block of that
// one has run allow_next_grid() or exited, so a launch's latency overlaps the previous kernel's
// tail. Every kernel launched so calls wait_previous_grid() before it reads or writes global memory
// another kernel may touch (tensor_access.cuh). A plain launch where programmatic_launch_enabled()
// (host.h) is false.
template <class... Params, class... Args>
void launch_kernel(const char* op, const char* name, void (*kernel)(Params...), unsigned grid, unsigned block,
                   size_t smem, cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(block);
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = programmatic_launch_enabled() ? 1 : 0;
  cuda_check(op, cudaLaunchKernelEx(&config, kernel, static_cast<Args&&>(args)...), name);
}

// Tensor-core kernels (the *_tc.cu files, absent from the reference library built with
// SSD_GPU_REFERENCE_ONLY): each launches and returns true where its dtype and alignment
// conditions hold, and returns false otherwise, so the launcher of the op runs the fp32 kernel.
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

}  // namespace ssd_gpu
