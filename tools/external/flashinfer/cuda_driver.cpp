// The two CUDA driver functions FlashInfer's TMA descriptors call (create_tensor_map.cuh), resolved
// through the runtime's cudaGetDriverEntryPointByVersion: the library then does not link libcuda,
// so it loads on a host without a driver, where its argument checks are tested.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

namespace {

template <typename F>
F driver(char const* symbol, unsigned version) {
  void* f = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(symbol, &f, version, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    return nullptr;
  }
  return reinterpret_cast<F>(f);
}

}  // namespace

extern "C" __attribute__((visibility("hidden"))) CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType,
                                                   cuuint32_t tensorRank, void* globalAddress,
                                                   cuuint64_t const* globalDim, cuuint64_t const* globalStrides,
                                                   cuuint32_t const* boxDim, cuuint32_t const* elementStrides,
                                                   CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                                   CUtensorMapL2promotion l2Promotion,
                                                   CUtensorMapFloatOOBfill oobFill) {
  static auto const f = driver<PFN_cuTensorMapEncodeTiled_v12000>("cuTensorMapEncodeTiled", 12000);
  if (!f) return CUDA_ERROR_NOT_FOUND;
  return f(tensorMap, tensorDataType, tensorRank, globalAddress, globalDim, globalStrides, boxDim, elementStrides,
           interleave, swizzle, l2Promotion, oobFill);
}

extern "C" __attribute__((visibility("hidden"))) CUresult CUDAAPI cuGetErrorString(CUresult error, char const** pStr) {
  static auto const f = driver<PFN_cuGetErrorString_v6000>("cuGetErrorString", 6000);
  if (!f) {
    *pStr = "unknown CUDA driver error (cuGetErrorString is not reachable)";
    return CUDA_SUCCESS;
  }
  return f(error, pStr);
}
