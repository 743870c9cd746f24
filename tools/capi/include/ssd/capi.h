/* The suite's C API: problem strings, inputs, the float64 oracle with its per-element bounds,
 * verdicts on a caller's outputs, ssd-fuzz's generated cases and shrink candidates, and kernel
 * libraries, for callers in any language (Python through ctypes, docs/python.md). Plain C,
 * versioned; the reference is docs/c-api.md.
 *
 * Rules every function keeps:
 *  - it returns an ssd_capi_status (a few free and query functions return nothing or a value);
 *    no C++ exception ever crosses the API;
 *  - on a non-OK status, ssd_capi_last_error() holds a one-line message of this thread naming the
 *    function and the argument ("ssd_capi_problem_parse: argument 'problem': token 'x5': ...");
 *  - handles (ssd_problem, ssd_inputs, ssd_layout, ...) are opaque, created by one function and
 *    released by its _free function (NULL is accepted); a handle is never modified after it is
 *    made, so one handle may be read from several threads;
 *  - strings and tensor infos handed out stay valid until the handle they came from is freed;
 *  - values are copied into caller buffers whose size in bytes the caller passes; a buffer of the
 *    wrong size is an INVALID_ARGUMENT naming the buffer and the size expected. */
#ifndef SSD_CAPI_H
#define SSD_CAPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a declaration of this header changes incompatibly, and whenever functions are
 * added (a caller of the new ones needs a library that has them); a caller compares
 * ssd_capi_version() with the value it was written against. 2: the input layout (ssd_layout). */
#define SSD_CAPI_VERSION 2
#define SSD_CAPI_MAX_RANK 8

#if defined(SSD_CAPI_BUILDING)
#define SSD_CAPI_EXPORT __attribute__((visibility("default")))
#else
#define SSD_CAPI_EXPORT
#endif

typedef enum {
  SSD_CAPI_OK = 0,
  SSD_CAPI_INVALID_ARGUMENT = 1, /* a bad argument: NULL, a malformed string, an invalid problem,
                                    an unknown name, a buffer of the wrong size */
  SSD_CAPI_ERROR = 2             /* anything else (out of memory, a file that cannot be read) */
} ssd_capi_status;

/* Element types, in the order of ssd::DType. */
typedef enum {
  SSD_CAPI_F64 = 0,
  SSD_CAPI_F32 = 1,
  SSD_CAPI_F16 = 2,
  SSD_CAPI_BF16 = 3,
  SSD_CAPI_I32 = 4,
  SSD_CAPI_U8 = 5,              /* masks only */
  SSD_CAPI_DTYPE_CONTRACT = -1  /* judge: "the dtype the contract stores this output in" */
} ssd_capi_dtype;

/* How values cross a buffer. */
typedef enum {
  SSD_CAPI_AS_F64 = 0, /* float64, one per element (each exactly the stored value) */
  SSD_CAPI_NATIVE = 1  /* the tensor's own encoding: f32, the uint16 bit patterns of f16 and bf16,
                          int32; little-endian */
} ssd_capi_encoding;

/* What ssd_capi_truth_copy copies out. */
typedef enum {
  SSD_CAPI_ORACLE = 0,  /* float64 oracle values */
  SSD_CAPI_DEFINED = 1, /* uint8, 1 = defined by the contract (compared) */
  SSD_CAPI_BOUND = 2,   /* float64 per-element bound */
  SSD_CAPI_EXACT = 3    /* uint8, 1 = must match the oracle exactly */
} ssd_capi_field;

typedef struct ssd_problem ssd_problem;           /* one parsed case */
typedef struct ssd_inputs ssd_inputs;             /* the input tensors of a problem */
typedef struct ssd_truth ssd_truth;               /* oracle and bounds of a problem */
typedef struct ssd_judgement ssd_judgement;       /* the verdict on some outputs */
typedef struct ssd_problem_list ssd_problem_list; /* shrink candidates */
typedef struct ssd_library ssd_library;           /* a kernel library behind the kernel ABI */
typedef struct ssd_layout ssd_layout;             /* where a problem's inputs lie in memory */

/* An input tensor or an output of a case. */
typedef struct {
  const char* name;  /* the contract's name: "x", "dt", ..., "out", "final_states" */
  int32_t dtype;     /* ssd_capi_dtype: the storage dtype */
  int32_t rank;
  int64_t shape[SSD_CAPI_MAX_RANK];
  int64_t numel;
  /* outputs only (zero for inputs) */
  int32_t has_undefined;    /* some element is not defined by the contract (mask in DEFINED) */
  int32_t has_exact;        /* some element must match exactly (mask in EXACT) */
  int64_t reduction_length; /* n of phi(n) in the bound (docs/tolerance.md) */
} ssd_capi_tensor_info;

/* One buffer that input views lie in (ssd::LayoutBuffer): `extent` elements of `dtype`; the
 * elements no view reaches are gaps, which the kernel-ABI runner fills with `poison`. */
typedef struct {
  const char* name; /* "zxbcdt", or under layout=strided the name of the one input it holds */
  int32_t dtype;    /* ssd_capi_dtype of its elements (x's dtype for zxbcdt) */
  int64_t extent;   /* elements (past 2^31 with +far) */
  uint32_t poison;  /* the bit pattern of one gap element, in its low 16 bits for f16 and bf16: a
                       quiet NaN no arithmetic produces (f32 0x7FC0DEAD, bf16 0x7FDE, f16 0x7EAD),
                       0x5EADBEEF for i32 */
} ssd_capi_buffer_info;

/* One laid-out input (ssd::Placement): element [i0, i1, ...] of the input is element
 * offset + i0*strides[0] + i1*strides[1] + ... of its buffer. */
typedef struct {
  const char* role;   /* the input's contract name: "x", "dt", ... */
  const char* buffer; /* the name of the buffer it lies in */
  int32_t rank;
  int64_t shape[SSD_CAPI_MAX_RANK];   /* the input's shape (ssd_capi_inputs_info's) */
  int64_t strides[SSD_CAPI_MAX_RANK]; /* in elements; 0 along an expanded axis (recurrent +tie's dt) */
  int64_t offset;                     /* in elements, of element [0, ..., 0] */
} ssd_capi_placement_info;

/* One output of a kernel, handed to the judge. Contiguous row-major host memory. */
typedef struct {
  const char* name;
  int32_t dtype;    /* ssd_capi_dtype the kernel stored it in; SSD_CAPI_DTYPE_CONTRACT = the
                       contract's storage dtype (AS_F64 values are rounded to it, as a store would) */
  int32_t encoding; /* ssd_capi_encoding of `data` */
  int32_t rank;
  int64_t shape[SSD_CAPI_MAX_RANK];
  const void* data;
} ssd_capi_output;

/* One of the worst elements of a judged output. */
typedef struct {
  const char* output; /* output name */
  const char* index;  /* "[b,t,h,p]" */
  int64_t flat;
  double got, expected, bound, r;
  const char* why; /* "over bound", "exact value expected", "not finite", or "" */
} ssd_capi_element;

/* The tally of one judged output. */
typedef struct {
  const char* name;
  int64_t compared, over_bound, exact_mismatches, not_finite;
  double max_r;
} ssd_capi_output_judgement;

/* How ssd-fuzz draws its cases (ssd::CampaignOptions). Start from ssd_capi_campaign_defaults. */
typedef struct {
  uint64_t seed;
  int64_t shard, shards;  /* case k belongs to shard k % shards */
  const char* dtypes;     /* primary dtypes, comma separated ("bf16,f16"); NULL or "" = all */
  double large_fraction;  /* share of large shapes (ssd-fuzz --large, default 0.05) */
  double huge_fraction;   /* share of cases past 2^31 elements (--huge, default 0) */
} ssd_capi_campaign_options;

/* --- versions and errors --- */
SSD_CAPI_EXPORT int32_t ssd_capi_version(void); /* SSD_CAPI_VERSION of the library */
/* The contract, input-fill and oracle versions the numbers follow (ssd/reference/version.h). */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_versions(const char** contract, const char** generator, const char** oracle);
/* The message of this thread's last non-OK status ("" before any); valid until the thread's next failure. */
SSD_CAPI_EXPORT const char* ssd_capi_last_error(void);
SSD_CAPI_EXPORT const char* ssd_capi_status_name(int32_t status); /* "OK", "INVALID_ARGUMENT", "ERROR" */
SSD_CAPI_EXPORT const char* ssd_capi_dtype_name(int32_t dtype);   /* "f32", ...; "?" when unknown */
/* Rounds `count` float64 values to `dtype` (f32, f16, bf16: round to nearest, ties to even, straight
 * from float64, subnormals and overflow to infinity as in ssd::round_to), written to `out` as
 * float64; `out` may be `values`. What a kernel's store does, for callers without the format. */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_round_to(int32_t dtype, const double* values, double* out, int64_t count);
/* Every op's short name in the suite's order, comma separated: "mamba2,chunk_cumsum,...". */
SSD_CAPI_EXPORT const char* ssd_capi_op_names(void);

/* --- problems --- */
/* Parses a problem string (docs/problem-string.md). Form only: see _invalid_reason. */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_problem_parse(const char* problem, ssd_problem** out);
SSD_CAPI_EXPORT void ssd_capi_problem_free(ssd_problem* problem);
/* The canonical string (parse(string) gives an equal problem). */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_problem_string(const ssd_problem* problem, const char** text);
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_problem_op(const ssd_problem* problem, const char** op);
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_problem_dtype(const ssd_problem* problem, int32_t* dtype);
/* The op's size letters in print order ("bshq" for chunk_cumsum). */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_problem_size_letters(const ssd_problem* problem, const char** letters);
/* One size by letter (b s h p g n q d; 0 when the string leaves it out). */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_problem_size(const ssd_problem* problem, char letter, int64_t* value);
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_problem_seed(const ssd_problem* problem, uint64_t* seed);
/* Whether an option is on, by its name in the string without the '+': dt_bias softplus D Dhp z
 * init causal sbi tie ("D" is D of shape [H], "Dhp" of shape [H,P]). */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_problem_flag(const ssd_problem* problem, const char* flag, int32_t* on);
/* An integer option: "slots" (recurrent +sbi), "tokens" (recurrent tokens=, 0 when absent), "pad"
 * (recurrent pad=, -1 by default). */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_problem_value(const ssd_problem* problem, const char* key, int64_t* value);
/* The dt clamp in force: limit= when given, else the default (0, +inf). */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_problem_dt_limit(const ssd_problem* problem, double* lo, double* hi);
/* Why the problem is outside the contract, or NULL when it is valid. */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_problem_invalid_reason(const ssd_problem* problem, const char** reason);
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_problem_equal(const ssd_problem* a, const ssd_problem* b, int32_t* equal);

/* --- inputs (ssd::make_inputs: a pure function of the problem) --- */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_inputs_make(const ssd_problem* problem, ssd_inputs** out);
SSD_CAPI_EXPORT void ssd_capi_inputs_free(ssd_inputs* inputs);
/* The tensors in the op's role order (only those present in this case). */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_inputs_count(const ssd_inputs* inputs, int64_t* count);
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_inputs_info(const ssd_inputs* inputs, int64_t index, ssd_capi_tensor_info* info);
/* Copies input `name` into `dst` (bytes: numel * 8 for AS_F64, numel * dtype size for NATIVE). */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_inputs_copy(const ssd_inputs* inputs, const char* name, int32_t encoding,
                                                     void* dst, int64_t bytes);

/* --- the layout of the inputs (ssd::input_layout: layout=, +far; docs/problem-string.md 3.1) --- */
/* A pure function of the problem: the buffers its laid-out inputs are views into, and where each
 * view lies. Inputs without a placement are dense row-major tensors of their own; under
 * layout=contiguous (the default) there are no buffers and no placements. The values of every
 * input are those ssd_capi_inputs_copy gives. An invalid problem is an INVALID_ARGUMENT naming
 * 'problem'. */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_layout_make(const ssd_problem* problem, ssd_layout** out);
SSD_CAPI_EXPORT void ssd_capi_layout_free(ssd_layout* layout);
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_layout_buffer_count(const ssd_layout* layout, int64_t* count);
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_layout_buffer(const ssd_layout* layout, int64_t index,
                                                       ssd_capi_buffer_info* buffer);
/* The placements in the layout's order, those present: zxbcdt's in the op's order of its zxbcdt
 * roles (mamba2 and recurrent z x B C dt, chunk_state x B, chunk_scan z x C), layout=strided's in
 * the op's role order. */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_layout_placement_count(const ssd_layout* layout, int64_t* count);
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_layout_placement(const ssd_layout* layout, int64_t index,
                                                          ssd_capi_placement_info* placement);

/* --- the oracle and the bounds (ssd::compute_truth) --- */
/* `inputs` may be NULL (they are made from the problem); if given they must be that problem's. */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_truth_compute(const ssd_problem* problem, const ssd_inputs* inputs,
                                                       ssd_truth** out);
SSD_CAPI_EXPORT void ssd_capi_truth_free(ssd_truth* truth);
/* The outputs in the order the op produces them; dtype is the contract's storage dtype. */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_truth_count(const ssd_truth* truth, int64_t* count);
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_truth_info(const ssd_truth* truth, int64_t index, ssd_capi_tensor_info* info);
/* Copies one field of output `name` (bytes: numel * 8 for ORACLE and BOUND, numel for the masks). */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_truth_copy(const ssd_truth* truth, const char* name, int32_t field, void* dst,
                                                    int64_t bytes);

/* --- judging a kernel's outputs (ssd::judge under the truth's bounds) --- */
/* `worst_count`: how many worst elements to keep per output (ssd-fuzz keeps 5). A missing or
 * mis-shaped output gives a FAILED judgement (not an error); an unknown or repeated name is an
 * INVALID_ARGUMENT naming 'outputs'. */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_judge(const ssd_truth* truth, const ssd_capi_output* outputs, int64_t count,
                                               int32_t worst_count, ssd_judgement** out);
/* The same from the problem alone (ssd::judge_against_oracle: inputs and truth made inside). */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_judge_against_oracle(const ssd_problem* problem, const ssd_capi_output* outputs,
                                                              int64_t count, int32_t worst_count, ssd_judgement** out);
SSD_CAPI_EXPORT void ssd_capi_judgement_free(ssd_judgement* judgement);
/* "PASSED", "FAILED", "MISTRUSTED", "SKIPPED", "INVALID", "SUSPECT", or from a library's check "VARIANT". */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_judgement_verdict(const ssd_judgement* judgement, const char** verdict);
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_judgement_max_r(const ssd_judgement* judgement, double* max_r);
/* The largest statistical ratio ||y - y*|| / scale of any output; SUSPECT above its threshold
 * (docs/tolerance.md, "Statistical verdict"); 0 for an output without a scale. */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_judgement_max_ratio(const ssd_judgement* judgement, double* max_ratio);
/* Why (MISTRUSTED, SKIPPED, INVALID, a missing output), "" otherwise. */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_judgement_message(const ssd_judgement* judgement, const char** message);
/* The canonical problem string of the judged case. */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_judgement_problem(const ssd_judgement* judgement, const char** problem);
/* What ssd::describe prints: the verdict line, and for FAILED the worst elements and the repro. */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_judgement_describe(const ssd_judgement* judgement, const char** text);
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_judgement_output_count(const ssd_judgement* judgement, int64_t* count);
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_judgement_output(const ssd_judgement* judgement, int64_t index,
                                                          ssd_capi_output_judgement* output);
/* The worst elements of every output, output by output, worst first within each. */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_judgement_worst_count(const ssd_judgement* judgement, int64_t* count);
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_judgement_worst(const ssd_judgement* judgement, int64_t index,
                                                         ssd_capi_element* element);

/* --- fuzz cases and shrinking, exactly as ssd-fuzz --- */
/* seed 0, shard 0 of 1, all dtypes, large 0.05, huge 0: ssd-fuzz's defaults. */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_campaign_defaults(ssd_capi_campaign_options* options);
/* Case k of the campaign for `op` (ssd::campaign_problem); k must belong to the options' shard. */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_campaign_problem(const char* op, const ssd_capi_campaign_options* options,
                                                          int64_t k, ssd_problem** out);
/* Valid problems one step smaller (ssd::shrink_candidates), simplest first. */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_shrink_candidates(const ssd_problem* problem, ssd_problem_list** out);
SSD_CAPI_EXPORT void ssd_capi_problem_list_free(ssd_problem_list* list);
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_problem_list_count(const ssd_problem_list* list, int64_t* count);
/* A new problem handle (the caller frees it) equal to entry `index`. */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_problem_list_get(const ssd_problem_list* list, int64_t index, ssd_problem** out);

/* --- kernel libraries behind the kernel ABI (docs/kernel-abi.md) --- */
/* A path to a .so, or a name ("emulation", "mutant-b_c_swapped") found as ssd-fuzz finds it. */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_library_open(const char* kernels, ssd_library** out);
SSD_CAPI_EXPORT void ssd_capi_library_free(ssd_library* library);
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_library_name(const ssd_library* library, const char** name);
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_library_implements(const ssd_library* library, const char* op, int32_t* yes);
/* The whole check of one case, as ssd-fuzz runs it (ssd::check_case): SKIPPED, INVALID, FAILED
 * with the library's message, or the verdict on its outputs. */
SSD_CAPI_EXPORT ssd_capi_status ssd_capi_check_case(const ssd_library* library, const ssd_problem* problem,
                                                    ssd_judgement** out);

#ifdef __cplusplus
}
#endif

#endif /* SSD_CAPI_H */
