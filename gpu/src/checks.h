// Host-side argument checks of the ABI entry points, mirroring the oracle's validation
// (reference/src/validate.cpp): a failed check throws Failure, which the entry point turns into a
// status and the thread's last_error message "<op>: argument '<name>': <what is wrong>".
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "ssd/kernel_abi.h"

namespace ssd_gpu {

using Shape = std::vector<int64_t>;

// What a failed check (or a failed CUDA call) carries to the ABI boundary.
struct Failure {
  ssd_status status;
  std::string message;
};

// Sets the message that the table's last_error returns on this thread.
void set_last_error(const std::string& message);
const char* last_error_message();

[[noreturn]] void fail(const char* op, const char* argument, const std::string& what,
                       ssd_status status = SSD_STATUS_INVALID_ARGUMENT);

std::string shape_string(const Shape& shape);  // "[2,10,4,8]"
Shape shape_of(const ssd_tensor& t);           // the first rank extents
const char* dtype_name(int32_t dtype);
inline bool present(const ssd_tensor& t) { return t.data != nullptr; }
inline bool is_float(int32_t dtype) {
  return dtype == SSD_DTYPE_F32 || dtype == SSD_DTYPE_F16 || dtype == SSD_DTYPE_BF16;
}

// Sizes read from a token-major pair x [Bt,S,H,P], B-like [Bt,S,G,N].
struct TokenDims {
  int64_t batch, seqlen, heads, headdim, groups, dstate;
};

// The checks of one op; `op` prefixes every message.
struct Check {
  const char* op;

  // A required input: present (non-NULL data) with a float dtype.
  void float_input(const char* name, const ssd_tensor& t) const;
  // Rank (within SSD_MAX_RANK) before dims are read; `dims` names the axes, e.g. "[Bt,S,H,P]".
  void rank(const char* name, const ssd_tensor& t, int expected_rank, const char* dims) const;
  // Rank plus every extent positive (an empty input names the zero axis); returns the shape.
  Shape extents(const char* name, const ssd_tensor& t, int expected_rank, const char* dims) const;
  // Exact shape; the message shows the expected shape with the names of its dims.
  void shape(const char* name, const ssd_tensor& t, const Shape& expected, const char* dims) const;
  // An optional float input: when present, float dtype and exact shape.
  void optional_float(const char* name, const ssd_tensor& t, const Shape& expected, const char* dims) const;
  // seq_idx [Bt,S] i32 (monotonicity is outside what the GPU library checks).
  void seq_idx(const ssd_tensor& t, int64_t batch, int64_t seqlen) const;
  void positive(const char* name, int64_t value) const;
  void groups_divide_heads(const char* group_argument, int64_t heads, int64_t groups) const;
  void dt_limit(double lo, double hi) const;
  // An output: present, exact shape, and one of the allowed dtypes (`rule` explains them).
  void output(const char* name, const ssd_tensor& t, const Shape& expected, const char* dims,
              std::initializer_list<int32_t> allowed, const char* rule) const;
  // x [Bt,S,H,P] and a B-like [Bt,S,G,N] (named bname): extents, agreement in Bt and S, H % G.
  TokenDims token_major(const ssd_tensor& x, const char* bname, const ssd_tensor& B) const;
  // An optional D of shape [H] or [H,P]; returns true for [H,P].
  bool skip_D(const ssd_tensor& D, int64_t heads, int64_t headdim) const;
  // Dense row-major strides (extent-1 axes may carry any stride); others are UNSUPPORTED.
  void contiguous(const char* name, const ssd_tensor& t) const;
  // contiguous() for every tensor of the list that is present, in the list's order.
  void contiguous(std::initializer_list<std::pair<const char*, const ssd_tensor*>> tensors) const;
};

}  // namespace ssd_gpu
