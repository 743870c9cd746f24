/* The C interface of libflashinfer-ssu-shim.so: FlashInfer's selective_state_update kernels
 * (flashinfer.mamba, compiled from its own headers) called with raw device pointers, sizes and
 * strides, without torch or TVM FFI. flashinfer_shim.py mirrors these structs with ctypes. */
#ifndef SSU_SHIM_H_
#define SSU_SHIM_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a struct below or a function's meaning changes. */
#define SSU_SHIM_ABI 1
#define SSU_MAX_DIMS 6

/* Element types. SSU_ABSENT marks an optional argument that is not passed (None). */
enum ssu_dtype { SSU_ABSENT = 0, SSU_F32 = 1, SSU_F16 = 2, SSU_BF16 = 3, SSU_I16 = 4, SSU_I32 = 5, SSU_I64 = 6 };

/* Return codes of ssu_shim_selective_state_update. */
enum ssu_status {
  SSU_OK = 0,
  SSU_INVALID = 1,   /* one of FlashInfer's argument checks failed (csrc or its launcher) */
  SSU_NOT_BUILT = 2, /* no kernel of this shim for these dtypes and sizes (FlashInfer would JIT one) */
  SSU_CUDA = 3,      /* a CUDA call or kernel launch failed */
  SSU_INTERNAL = 4   /* anything else the shim caught */
};

/* One tensor argument, as a DLPack tensor would describe it; strides in elements. */
typedef struct {
  void* data;
  int32_t dtype; /* enum ssu_dtype */
  int32_t ndim;
  int32_t on_cuda; /* 1: device memory (CHECK_CUDA) */
  int32_t device;  /* CUDA device ordinal */
  int64_t sizes[SSU_MAX_DIMS];
  int64_t strides[SSU_MAX_DIMS];
} ssu_tensor;

/* The arguments of FlashInfer's C++ entry point (csrc/flashinfer_mamba_binding.cu), after its
 * Python wrapper has normalised their shapes. */
typedef struct {
  ssu_tensor state, x, dt, A, B, C, D, z, dt_bias, state_batch_indices, dst_state_batch_indices,
      state_scale, output, intermediate_states_buffer, intermediate_state_indices,
      intermediate_state_scales, rand_seed, cu_seqlens, num_accepted_tokens;
  int64_t pad_slot_id;
  int64_t cache_steps;
  int64_t algorithm; /* SSUAlgorithm: 0 auto, 1 simple, 2 vertical, 3 horizontal */
  int32_t dt_softplus;
  int32_t disable_state_update;
  void* stream; /* cudaStream_t */
} ssu_call;

int ssu_shim_abi(void);
size_t ssu_shim_call_size(void);
/* The FlashInfer commit the kernels were compiled from. */
const char* ssu_shim_source(void);
/* The built configurations, one a line: "stp|mtp state input weight A index dim dstate ntokens module". */
const char* ssu_shim_configs(void);
/* Runs the decode step; on failure writes a message (NUL-terminated, truncated to size) and
 * returns an ssu_status. Never throws. */
int ssu_shim_selective_state_update(const ssu_call* call, char* message, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* SSU_SHIM_H_ */
