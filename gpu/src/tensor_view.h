// The tensor views the kernels take (base pointer and storage dtype) and ceil_div: plain C++, so
// the host-side parameter blocks (params.h) can hold them; tensor_access.cuh adds the device loads.
#pragma once
#include <cuda_runtime_api.h>  // __host__, __device__, __forceinline__ for either compiler

#include <cstdint>

namespace ssd_gpu {

// An input tensor as a kernel sees it: base pointer and storage dtype (contiguity is checked on
// the host, so element offsets are plain row-major int64 arithmetic). p == nullptr: absent.
struct In {
  const void* p;
  int32_t dtype;
};
// An output tensor: base pointer and storage dtype.
struct Out {
  void* p;
  int32_t dtype;
};

__host__ __device__ __forceinline__ int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace ssd_gpu
