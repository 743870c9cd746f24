// The exported kernel table (SSD_KERNEL_TABLE_SYMBOL): the eight ops, the thread's last error, and
// plain CUDA device-memory functions for the caller's buffers.
// Host code only, like the entry points it collects (api/entry_points.h).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "api/entry_points.h"
#include "checks.h"

namespace ssd_gpu {
namespace {

ssd_status memory_status(const char* what, cudaError_t error) {
  if (error == cudaSuccess) return SSD_STATUS_OK;
  set_last_error(std::string(what) + ": " + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ")");
  return SSD_STATUS_RUNTIME_ERROR;
}

ssd_status device_alloc(void** pointer, size_t bytes) {
  if (pointer == nullptr) {
    set_last_error("device_alloc: argument 'pointer': is NULL");
    return SSD_STATUS_INVALID_ARGUMENT;
  }
  *pointer = nullptr;
  return memory_status("device_alloc: cudaMalloc", cudaMalloc(pointer, bytes));
}

ssd_status device_free(void* pointer) { return memory_status("device_free: cudaFree", cudaFree(pointer)); }

ssd_status device_copy(void* destination, const void* source, size_t bytes, int32_t direction) {
  if (direction != 0 && direction != 1) {
    set_last_error("device_copy: argument 'direction': " + std::to_string(direction) +
                   ", expected 0 (to device) or 1 (to host)");
    return SSD_STATUS_INVALID_ARGUMENT;
  }
  const cudaMemcpyKind kind = direction == 0 ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  return memory_status("device_copy: cudaMemcpy", cudaMemcpy(destination, source, bytes, kind));
}

ssd_status device_synchronize() {
  return memory_status("device_synchronize: cudaDeviceSynchronize", cudaDeviceSynchronize());
}

const ssd_kernel_table kTable = {
    // Version 3: the serving decode fields of version 4 (multi-token rows, write slots) are not
    // implemented here, so the runner sends this library only the cases version 3 can carry.
    3,
#ifdef SSD_GPU_REFERENCE_ONLY
    "ssd-cuda-reference",
#else
    "ssd-cuda",
#endif
    SSD_MEMORY_CUDA,
    &mamba2,
    &chunk_cumsum,
    &chunk_coupling,
    &chunk_state,
    &state_passing,
    &chunk_scan,
    &recurrent,
    &discretize_segsum,
    &last_error_message,
    &device_alloc,
    &device_free,
    &device_copy,
    &device_synchronize,
};

}  // namespace
}  // namespace ssd_gpu

// The one exported symbol (SSD_KERNEL_TABLE_SYMBOL); everything else has hidden visibility.
extern "C" __attribute__((visibility("default"))) const ssd_kernel_table* ssd_get_kernel_table(void) {
  return &ssd_gpu::kTable;
}
