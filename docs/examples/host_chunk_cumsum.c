/* A kernel library in host memory, in plain C: SSDChunkCumsumFwd for f32 and bf16 inputs (an f16
 * input is reported UNSUPPORTED, so those cases are SKIPPED). docs/testing-your-kernel.md walks through it;
 * tests/fuzz builds it and fuzzes it, so this example stays correct.
 *   cc -O2 -fPIC -shared -I path/to/suite/gpu/include host_chunk_cumsum.c -o libhost_cumsum.so -lm */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ssd/kernel_abi.h"

static _Thread_local char error_message[256];
static const char* last_error(void) { return error_message; }

static ssd_status fail(ssd_status status, const char* argument, const char* what) {
  snprintf(error_message, sizeof error_message, "chunk_cumsum: argument '%s': %s", argument, what);
  return status;
}

/* The element at offset i (in elements, through the view's strides) of an f32 or bf16 tensor, as a float. */
static float load(const ssd_tensor* t, int64_t i) {
  if (t->dtype == SSD_DTYPE_F32) return ((const float*)t->data)[i];
  uint32_t bits = (uint32_t)((const uint16_t*)t->data)[i] << 16; /* bf16 is the top half of an f32 */
  float v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

static ssd_status chunk_cumsum(const ssd_chunk_cumsum_args* a) {
  if (a->dt.data == NULL || a->dt.rank != 3) return fail(SSD_STATUS_INVALID_ARGUMENT, "dt", "expected [Bt,S,H]");
  /* The contract lets a problem store any float input in f32, f16 or bf16 (e.g. "A=bf16"). */
  const struct { const char* name; const ssd_tensor* t; } inputs[] = {{"dt", &a->dt}, {"A", &a->A}, {"dt_bias", &a->dt_bias}};
  for (int k = 0; k < 3; ++k)
    if (inputs[k].t->data != NULL && inputs[k].t->dtype != SSD_DTYPE_F32 && inputs[k].t->dtype != SSD_DTYPE_BF16)
      return fail(SSD_STATUS_UNSUPPORTED, inputs[k].name, "this library takes f32 and bf16 only");
  const int64_t batch = a->dt.shape[0], seqlen = a->dt.shape[1], heads = a->dt.shape[2], q = a->chunk_size;
  if (batch <= 0 || seqlen <= 0 || heads <= 0) return fail(SSD_STATUS_INVALID_ARGUMENT, "dt", "every extent must be positive");
  if (q <= 0) return fail(SSD_STATUS_INVALID_ARGUMENT, "chunk_size", "must be positive");
  if (a->A.data == NULL || a->A.rank != 1 || a->A.shape[0] != heads) return fail(SSD_STATUS_INVALID_ARGUMENT, "A", "expected [H]");
  if (a->dt_bias.data != NULL && (a->dt_bias.rank != 1 || a->dt_bias.shape[0] != heads))
    return fail(SSD_STATUS_INVALID_ARGUMENT, "dt_bias", "expected [H]");
  if (!(a->dt_limit_lo <= a->dt_limit_hi)) return fail(SSD_STATUS_INVALID_ARGUMENT, "dt_limit", "needs lo <= hi");
  const int64_t chunks = (seqlen + q - 1) / q;
  float* dA = (float*)a->dA_cumsum.data; /* outputs are always contiguous row-major */
  float* dt_out = (float*)a->dt_out.data;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t c = 0; c < chunks; ++c) {
        float sum = 0.0f;
        for (int64_t i = 0; i < q; ++i) {
          const int64_t t = c * q + i, at = ((b * heads + h) * chunks + c) * q + i;
          float step = 0.0f; /* the padded tail (t >= S) has dt' = 0: the cumsum stays flat */
          if (t < seqlen) {
            /* Inputs may be strided views (kernel ABI version 5): every offset goes through the strides. */
            float v = load(&a->dt, b * a->dt.strides[0] + t * a->dt.strides[1] + h * a->dt.strides[2]);
            if (a->dt_bias.data != NULL) v += load(&a->dt_bias, h * a->dt_bias.strides[0]);
            if (a->dt_softplus && v <= 20.0f) v = log1pf(expf(v));
            step = fminf(fmaxf(v, (float)a->dt_limit_lo), (float)a->dt_limit_hi);
          }
          sum += load(&a->A, h * a->A.strides[0]) * step;
          dt_out[at] = step;
          dA[at] = sum;
        }
      }
  return SSD_STATUS_OK;
}

__attribute__((visibility("default"))) const ssd_kernel_table* ssd_get_kernel_table(void) {
  static ssd_kernel_table table;
  table.abi_version = SSD_KERNEL_ABI_VERSION;
  table.name = "host-chunk-cumsum-example";
  table.memory_kind = SSD_MEMORY_HOST; /* the runner hands the kernel host pointers */
  table.chunk_cumsum = chunk_cumsum;   /* every other op stays NULL: SKIPPED */
  table.last_error = last_error;
  return &table;
}
