/* The kernel ABI: how any SSD kernel library (the suite's CUDA kernels, the fp32 emulation, the
 * planted-bug mutants, a user's own kernels) is loaded and called. Plain C, versioned.
 *
 * A library exports one symbol, SSD_KERNEL_TABLE_SYMBOL, returning its table. The caller owns
 * every buffer: it allocates inputs and outputs (in the table's memory kind, through the table's
 * memory functions for device memory), fills inputs, calls an op, and reads outputs back. Outputs
 * are allocated in the dtype the contract gives them (docs/contract.md); a kernel may reject a
 * dtype it does not support with SSD_STATUS_UNSUPPORTED. Docs: docs/kernel-abi.md. */
#ifndef SSD_KERNEL_ABI_H
#define SSD_KERNEL_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version 2 adds f32_dot_precision at the end of the table; version-1 tables still load and are
 * judged as IEEE (the runner reads the field only from version-2 tables). Version 3 appends the
 * packed varlen batch and the state dtype to ssd_mamba2_args; version 4 appends the serving decode
 * step (multi-token rows, write slots, speculative decoding, padding id, intermediate states) to
 * ssd_recurrent_args. Version 5 changes no struct: a version-5 library reads the strides of every
 * input view (it takes them, or answers SSD_STATUS_UNSUPPORTED), so the runner sends it strided
 * views (zxbcdt splits, padded pitches, stride 0, offsets past 2^31 elements). A library of an
 * older version is never sent a case that uses them (SKIPPED), and is called with the struct it
 * knows. */
#define SSD_KERNEL_ABI_VERSION 5
#define SSD_KERNEL_ABI_OLDEST_VERSION 1
#define SSD_KERNEL_TABLE_SYMBOL "ssd_get_kernel_table"
#define SSD_MAX_RANK 6

typedef enum { SSD_DTYPE_F32 = 0, SSD_DTYPE_F16 = 1, SSD_DTYPE_BF16 = 2, SSD_DTYPE_I32 = 3 } ssd_dtype;
typedef enum { SSD_MEMORY_HOST = 0, SSD_MEMORY_CUDA = 1 } ssd_memory_kind;
/* How a library's kernels take f32 operands into dot products: IEEE fp32 products, or TF32 (10 of
 * the 23 mantissa bits, as tensor cores read f32), which the bounds then charge (docs/tolerance.md). */
typedef enum { SSD_DOTS_IEEE = 0, SSD_DOTS_TF32 = 1 } ssd_dot_precision;

typedef enum {
  SSD_STATUS_OK = 0,
  SSD_STATUS_INVALID_ARGUMENT = 1, /* shapes, dtypes, strides or sizes outside the contract */
  SSD_STATUS_UNSUPPORTED = 2,      /* legal, but this library does not implement the case */
  SSD_STATUS_RUNTIME_ERROR = 3     /* launch or device failure */
} ssd_status;

/* A strided tensor view. data == NULL means the (optional) argument is absent. Strides are in
 * elements, not bytes, and may be anything an input view can have (padded pitches, 0 along an
 * expanded axis, offsets past 2^31 elements): from version 5 the runner sends such input views
 * (outputs stay contiguous row-major), and a kernel that takes only some strides answers the
 * others with SSD_STATUS_UNSUPPORTED (SKIPPED), never INVALID_ARGUMENT. */
typedef struct {
  void* data;
  int32_t dtype; /* ssd_dtype */
  int32_t rank;
  int64_t shape[SSD_MAX_RANK];
  int64_t strides[SSD_MAX_RANK];
} ssd_tensor;

/* Mamba2Fwd: out [Bt,S,H,P] (x.dtype), final_states [Bt,H,P,N] (f32, or the state dtype). */
typedef struct {
  ssd_tensor x, dt, A, B, C;
  int64_t chunk_size;
  ssd_tensor D, z, dt_bias, initial_states, seq_idx; /* optional */
  int32_t dt_softplus;
  double dt_limit_lo, dt_limit_hi; /* default (0, +inf) */
  ssd_tensor out, final_states;    /* outputs */
  void* stream;                    /* cudaStream_t for CUDA tables, NULL = default stream */
  /* Since version 3. A packed varlen batch (Bt = 1) has cu_seqlens.data != NULL; then seq_idx
   * [1,S] numbers its sequences 0, 1, ... (negative = padding tail), initial_states is
   * [nseq,H,P,N] with has_initial_states [nseq] (0 = start from zero; absent = all have one), and
   * the same sequences come in every encoding, for a kernel to read the one it takes (all i32,
   * docs/contract.md): cu_seqlens [nseq+1]; chunk_indices, chunk_offsets [logical chunks];
   * cu_chunk_seqlens [chunks+1], chunk_seq_idx [chunks], last_chunk_indices [nseq]. */
  ssd_tensor has_initial_states, cu_seqlens, chunk_indices, chunk_offsets, cu_chunk_seqlens, chunk_seq_idx,
      last_chunk_indices;
  ssd_tensor varlen_states; /* output with cu_seqlens: each sequence's final state [nseq,H,P,N] */
  /* The dtype the states between chunks are stored in (ssd_dtype), or -1 for C's dtype (the
   * default); when set, final_states and varlen_states are stored in it too. */
  int32_t state_dtype;
} ssd_mamba2_args;

/* SSDChunkCumsumFwd: dA_cumsum, dt_out [Bt,H,NC,Q] (f32). */
typedef struct {
  ssd_tensor dt, A;
  int64_t chunk_size;
  ssd_tensor dt_bias; /* optional */
  int32_t dt_softplus;
  double dt_limit_lo, dt_limit_hi;
  ssd_tensor dA_cumsum, dt_out; /* outputs */
  void* stream;
} ssd_chunk_cumsum_args;

/* SSDChunkCouplingFwd: CB [Bt,NC,G,Q,Q] in the dtype the caller allocated (default C.dtype). */
typedef struct {
  ssd_tensor C, B;
  int64_t chunk_size;
  ssd_tensor seq_idx; /* optional */
  int32_t causal;
  ssd_tensor CB; /* output */
  void* stream;
} ssd_chunk_coupling_args;

/* SSDChunkStateFwd: states [Bt,NC,H,P,N] (f32 by default). */
typedef struct {
  ssd_tensor B, x, dt, dA_cumsum;
  ssd_tensor seq_idx; /* optional */
  ssd_tensor states;  /* output */
  void* stream;
} ssd_chunk_state_args;

/* SSDStatePassingFwd: out [Bt,NC,H,D], final_states [Bt,H,D] (f32). */
typedef struct {
  ssd_tensor states, dA_chunk_cumsum;
  ssd_tensor initial_states, seq_idx; /* optional */
  int64_t chunk_size;                 /* required with seq_idx */
  ssd_tensor out, final_states;       /* outputs */
  void* stream;
} ssd_state_passing_args;

/* SSDChunkScanFwd: out [Bt,S,H,P] (x.dtype); out_x (same) only when z is given. */
typedef struct {
  ssd_tensor cb, x, dt, dA_cumsum, C, states;
  ssd_tensor D, z, seq_idx; /* optional */
  ssd_tensor out, out_x;    /* outputs; out_x.data == NULL when z is absent */
  void* stream;
} ssd_chunk_scan_args;

/* SSDRecurrentFwd: out [Bt,H,P] (x.dtype); state [Bs,H,P,N] updated in place. A row whose read
 * slot is negative (or equals pad_slot_id) is padding: its state is left alone, its output is
 * "don't care". */
typedef struct {
  ssd_tensor state; /* input and output */
  ssd_tensor x, dt, A, B, C;
  ssd_tensor D, z, dt_bias, state_batch_indices; /* optional */
  int32_t dt_softplus;
  ssd_tensor out; /* output */
  void* stream;
  /* Since version 4 (docs/kernel-abi.md). tokens = T >= 1: each row has T tokens, x, dt, z and out
   * [Bt,T,H,P], B and C [Bt,T,G,N], the state carried in f32 from token to token; 0 keeps the
   * one-token layout. state_batch_indices (read slots) and dst_state_batch_indices (write slots,
   * default the read slots) are [Bt], the state stored once after the row's last token, or [Bt,T],
   * the state after token t stored to column t (speculative decoding); num_accepted_tokens [Bt]
   * then picks the read column max(n - 1, 0). A write entry that is negative or pad_slot_id skips
   * that store. intermediate_states, when given, receives the state after every token. */
  ssd_tensor dst_state_batch_indices, num_accepted_tokens; /* optional, i32 */
  ssd_tensor intermediate_states;                          /* optional output [Bt,T,H,P,N], the state's dtype */
  /* With tokens: rows of 0..T tokens packed one after the other (varlen decode), cu_seqlens [Bt+1]
   * i32; x, dt, z, out [tokens,H,P] and B, C [tokens,G,N]; a row without tokens stores nothing. */
  ssd_tensor cu_seqlens;
  int64_t tokens;
  int64_t pad_slot_id;          /* the padding slot id (vLLM's pad_slot_id / null_block_id), -1 by default */
  int32_t disable_state_update; /* 1: the state buffer is read only */
} ssd_recurrent_args;

/* MambaDiscretizeSegsum: L [b,h,c,Q,Q], G, M [b,c,Q,Q,h] (bf16); A_cumsum, decay_states [b,h,c,Q] (f32). */
typedef struct {
  ssd_tensor hidden_states, dt, A_log, B, C;
  ssd_tensor L, G, M, A_cumsum, decay_states; /* outputs */
  void* stream;
} ssd_discretize_segsum_args;

typedef struct {
  uint32_t abi_version; /* SSD_KERNEL_ABI_VERSION */
  const char* name;     /* e.g. "ssd-cuda", "fp32-emulation" */
  int32_t memory_kind;  /* ssd_memory_kind */

  /* One entry per op; NULL = not implemented (the op is SKIPPED). */
  ssd_status (*mamba2)(const ssd_mamba2_args*);
  ssd_status (*chunk_cumsum)(const ssd_chunk_cumsum_args*);
  ssd_status (*chunk_coupling)(const ssd_chunk_coupling_args*);
  ssd_status (*chunk_state)(const ssd_chunk_state_args*);
  ssd_status (*state_passing)(const ssd_state_passing_args*);
  ssd_status (*chunk_scan)(const ssd_chunk_scan_args*);
  ssd_status (*recurrent)(const ssd_recurrent_args*);
  ssd_status (*discretize_segsum)(const ssd_discretize_segsum_args*);

  /* The message of the last non-OK status on this thread (names the argument). */
  const char* (*last_error)(void);

  /* Memory of a SSD_MEMORY_CUDA table (all NULL for host tables): allocate, free, copy between
   * host and device (direction 0 = to device, 1 = to host), and wait for all work. Each returns
   * SSD_STATUS_OK or SSD_STATUS_RUNTIME_ERROR. */
  ssd_status (*device_alloc)(void** pointer, size_t bytes);
  ssd_status (*device_free)(void* pointer);
  ssd_status (*device_copy)(void* destination, const void* source, size_t bytes, int32_t direction);
  ssd_status (*device_synchronize)(void);

  /* Since version 2. */
  int32_t f32_dot_precision; /* ssd_dot_precision; 0 (IEEE) when the library declares nothing */
} ssd_kernel_table;

/* The one symbol a kernel library exports, named SSD_KERNEL_TABLE_SYMBOL:
 *   extern "C" const ssd_kernel_table* ssd_get_kernel_table(void); */
typedef const ssd_kernel_table* (*ssd_kernel_table_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* SSD_KERNEL_ABI_H */
