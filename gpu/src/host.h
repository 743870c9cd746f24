// Host-side glue of the launchers and the ABI entry points: CUDA error checks, the no-throw ABI
// boundary, grid sizing and the ABI tensor -> kernel view conversions. Plain C++ (no kernels), so
// the entry points in api/ compile without nvcc.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>

#include "checks.h"
#include "tensor_view.h"

namespace ssd_gpu {

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

// Whether a switch of the environment (`name`=0 turns it off) is on: unset or anything but "0".
inline bool env_switch_on(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr || std::string(value) != "0";
}

// Whether launch_kernel (common.cuh) launches the fast kernels as programmatic dependent launches:
// yes unless the environment sets SSD_GPU_PDL=0 (read once), which launches them plainly, so a
// difference can be traced to the overlap.
inline bool programmatic_launch_enabled() {
  static const bool enabled = env_switch_on("SSD_GPU_PDL");
  return enabled;
}

// The current device's compute capability as major * 10 + minor (90: H100, H200).
inline int compute_capability(const char* op) {
  int device = 0, major = 0, minor = 0;
  cuda_check(op, cudaGetDevice(&device), "cudaGetDevice");
  cuda_check(op, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "cudaDeviceGetAttribute");
  cuda_check(op, cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), "cudaDeviceGetAttribute");
  return major * 10 + minor;
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

}  // namespace ssd_gpu
