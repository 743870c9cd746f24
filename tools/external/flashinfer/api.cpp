// The library's C entry points: csrc's checks (checks.cpp), then the built configuration that
// FlashInfer's JIT would have compiled for these dtypes and sizes (configs.inc, written by
// build.sh), run on the caller's device and stream. No C++ exception leaves this file.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "ssu_internal.h"

#ifndef SSU_SOURCE_COMMIT
#define SSU_SOURCE_COMMIT "unknown"
#endif

// SSU_CONFIG(entry, kind, state, input, weight, A, index, dim, dstate, ntokens, module)
#define SSU_CONFIG(entry, ...) void entry(ssu_call const&, Shape const&);
namespace ssu {
#include "configs.inc"
}  // namespace ssu
#undef SSU_CONFIG

namespace {

struct Config {
  char const* kind;  // "stp" (single-token launcher) or "mtp" (multi-token launcher)
  int32_t state, input, weight, A, index;
  int64_t dim, dstate, ntokens;
  // "sm90": compiled as FlashInfer's Hopper module (FLASHINFER_MAMBA_ENABLE_SM90); "sm80": as its
  // pre-Hopper module, for single-token head_dim < 64, where the Hopper module does not compile.
  char const* module;
  ssu::Entry entry;
};

#define SSU_CONFIG(entry, kind, state, input, weight, A, index, dim, dstate, ntokens, module) \
  {kind, state, input, weight, A, index, dim, dstate, ntokens, module, ssu::entry},
Config const kConfigs[] = {
#include "configs.inc"
};
#undef SSU_CONFIG

char const* dtype_name(int32_t dtype) {
  switch (dtype) {
    case SSU_F32: return "f32";
    case SSU_F16: return "f16";
    case SSU_BF16: return "bf16";
    case SSU_I16: return "i16";
    case SSU_I32: return "i32";
    case SSU_I64: return "i64";
    default: return "absent";
  }
}

struct Failure {
  int status;
  std::string message;
};

// The Python wrapper's stateIndex dtype: that of the first index table passed, else int32.
int32_t index_dtype(ssu_call const& c) {
  for (ssu_tensor const* t : {&c.state_batch_indices, &c.dst_state_batch_indices, &c.intermediate_state_indices}) {
    if (t->dtype != SSU_ABSENT) return t->dtype;
  }
  return SSU_I32;
}

// What this build cannot do at all, whatever the sizes: the kernels are compiled without them.
void refuse_unbuilt_features(ssu_call const& c) {
  auto refuse = [](char const* what) { throw Failure{SSU_NOT_BUILT, what}; };
  if (c.state_scale.dtype != SSU_ABSENT || c.intermediate_state_scales.dtype != SSU_ABSENT) {
    refuse("state_scale / intermediate_state_scales: the int16 state with block scales is not built into this shim");
  }
  if (c.rand_seed.dtype != SSU_ABSENT) {
    refuse("rand_seed: stochastic rounding (PHILOX_ROUNDS > 0) is not built into this shim");
  }
  if (c.cu_seqlens.dtype != SSU_ABSENT && c.cu_seqlens.dtype != SSU_I32) {
    throw Failure{SSU_NOT_BUILT, std::string("cu_seqlens: only int32 is built into this shim, got ") +
                                     dtype_name(c.cu_seqlens.dtype)};
  }
  if (c.num_accepted_tokens.dtype != SSU_ABSENT && c.num_accepted_tokens.dtype != SSU_I32) {
    throw Failure{SSU_NOT_BUILT, std::string("num_accepted_tokens: only int32 is built into this shim, got ") +
                                     dtype_name(c.num_accepted_tokens.dtype)};
  }
}

Config const& find_config(ssu_call const& c, ssu::Shape const& s) {
  char const* kind = s.mtp ? "mtp" : "stp";
  int64_t const ntokens = s.mtp ? s.ntokens_mtp : 1;
  int32_t const index = index_dtype(c);
  for (Config const& k : kConfigs) {
    if (!std::strcmp(k.kind, kind) && k.state == c.state.dtype && k.input == c.x.dtype && k.weight == c.dt.dtype &&
        k.A == c.A.dtype && k.index == index && k.dim == s.dim && k.dstate == s.dstate && k.ntokens == ntokens) {
      return k;
    }
  }
  char text[512];
  std::snprintf(text, sizeof text,
                "no %s kernel of this shim for state %s, x %s, dt %s, A %s, indices %s, dim %lld, dstate %lld, "
                "ntokens %lld (FlashInfer's JIT would compile one; add it to build.sh's --configs)",
                kind, dtype_name(c.state.dtype), dtype_name(c.x.dtype), dtype_name(c.dt.dtype), dtype_name(c.A.dtype),
                dtype_name(index), static_cast<long long>(s.dim), static_cast<long long>(s.dstate),
                static_cast<long long>(ntokens));
  throw Failure{SSU_NOT_BUILT, text};
}

// A pre-Hopper single-token build on a Hopper or later device runs what FlashInfer's Hopper
// module would run only where that module picks its simple kernel (auto below 2 blocks per SM).
void refuse_hopper_only_kernels(Config const& k, ssu_call const& c, ssu::Shape const& s) {
  if (std::strcmp(k.module, "sm80") != 0) return;
  int device = 0, major = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    cudaGetLastError();
    return;  // no device: the launch below reports it
  }
  if (major < 9) return;
  bool const simple = c.algorithm == 1 || (c.algorithm == 0 && s.batch * s.nheads < 2 * sms);
  if (!simple) {
    char text[400];
    std::snprintf(text, sizeof text,
                  "head_dim %lld: FlashInfer's Hopper module would run its %s single-token kernel here "
                  "(batch*nheads %lld, %d SMs), and that module does not compile for head_dim below 64 "
                  "(its horizontal kernel's static_assert lanesPerRow >= 1); this shim has only the "
                  "pre-Hopper module's simple kernel for it",
                  static_cast<long long>(s.dim), c.algorithm == 3 ? "horizontal" : "vertical",
                  static_cast<long long>(s.batch * s.nheads), sms);
    throw Failure{SSU_NOT_BUILT, text};
  }
}

// csrc's CUDADeviceGuard: the state's device for the call, the caller's again afterwards.
struct DeviceGuard {
  int previous = -1;
  explicit DeviceGuard(int device) {
    if (cudaGetDevice(&previous) != cudaSuccess || cudaSetDevice(device) != cudaSuccess) {
      cudaGetLastError();
      throw Failure{SSU_CUDA, "cannot make CUDA device " + std::to_string(device) + " current"};
    }
  }
  ~DeviceGuard() {
    if (previous >= 0) cudaSetDevice(previous);
  }
};

void run(ssu_call const& c) {
  ssu::Shape const shape = ssu::validate(c);
  refuse_unbuilt_features(c);
  Config const& config = find_config(c, shape);
  DeviceGuard guard(c.state.device);
  refuse_hopper_only_kernels(config, c, shape);
  config.entry(c, shape);
  cudaError_t const launched = cudaGetLastError();  // FlashInfer's launcher does not look
  if (launched != cudaSuccess) {
    throw Failure{SSU_CUDA, std::string("kernel launch failed: ") + cudaGetErrorString(launched)};
  }
}

int report(char* message, size_t size, int status, std::string const& text) {
  if (message && size) std::snprintf(message, size, "%s", text.c_str());
  return status;
}

}  // namespace

extern "C" {

int ssu_shim_abi(void) { return SSU_SHIM_ABI; }

size_t ssu_shim_call_size(void) { return sizeof(ssu_call); }

char const* ssu_shim_source(void) { return "flashinfer-ai/flashinfer " SSU_SOURCE_COMMIT; }

char const* ssu_shim_configs(void) {
  static std::string const text = [] {
    std::string lines;
    for (Config const& k : kConfigs) {
      char line[160];
      std::snprintf(line, sizeof line, "%s %s %s %s %s %s %lld %lld %lld %s\n", k.kind, dtype_name(k.state),
                    dtype_name(k.input), dtype_name(k.weight), dtype_name(k.A), dtype_name(k.index),
                    static_cast<long long>(k.dim), static_cast<long long>(k.dstate),
                    static_cast<long long>(k.ntokens), k.module);
      lines += line;
    }
    return lines;
  }();
  return text.c_str();
}

int ssu_shim_selective_state_update(ssu_call const* call, char* message, size_t size) {
  if (!call) return report(message, size, SSU_INVALID, "call is NULL");
  try {
    run(*call);
    return report(message, size, SSU_OK, "");
  } catch (Failure const& f) {
    return report(message, size, f.status, f.message);
  } catch (ssu::Invalid const& e) {
    return report(message, size, SSU_INVALID, e.what());
  } catch (std::exception const& e) {  // FlashInfer's own checks in its launchers (flashinfer::Error)
    std::string const what = e.what();
    int const status = what.find("CUDA Error") != std::string::npos ? SSU_CUDA : SSU_INVALID;
    return report(message, size, status, what);
  } catch (...) {
    return report(message, size, SSU_INTERNAL, "unknown exception");
  }
}

}  // extern "C"
