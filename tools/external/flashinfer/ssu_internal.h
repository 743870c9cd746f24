// What the shim's parts share in C++: a read-only view of an ssu_tensor, the sizes csrc works out
// before it fills FlashInfer's params struct, and the signature of one built configuration.
#ifndef SSU_INTERNAL_H_
#define SSU_INTERNAL_H_

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "ssu_shim.h"

namespace ssu {

// An argument check that failed (csrc's FLASHINFER_CHECK / TVM_FFI_ICHECK): SSU_INVALID.
struct Invalid : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

template <typename... Parts>
void check(bool condition, Parts const&... parts) {
  if (condition) return;
  std::ostringstream message;
  (message << ... << parts);
  throw Invalid(message.str());
}

// TVM FFI's TensorView as csrc uses it: size(i), stride(i) with negative i from the end.
class Tensor {
 public:
  Tensor(ssu_tensor const& t, char const* name) : t_(t), name_(name) {}
  bool has_value() const { return t_.dtype != SSU_ABSENT; }
  char const* name() const { return name_; }
  int32_t dim() const { return t_.ndim; }
  int32_t dtype() const { return t_.dtype; }
  void* data_ptr() const { return t_.data; }
  int32_t device() const { return t_.device; }
  bool on_cuda() const { return t_.on_cuda != 0; }
  int64_t size(int i) const { return t_.sizes[axis(i)]; }
  int64_t stride(int i) const { return t_.strides[axis(i)]; }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < t_.ndim; i++) n *= t_.sizes[i];
    return n;
  }
  // TVM FFI's IsContiguous: row-major strides, axes of size 1 ignored.
  bool is_contiguous() const {
    int64_t expected = 1;
    for (int i = t_.ndim - 1; i >= 0; i--) {
      if (t_.sizes[i] == 1) continue;
      if (t_.strides[i] != expected) return false;
      expected *= t_.sizes[i];
    }
    return true;
  }

 private:
  int axis(int i) const {
    int const a = i < 0 ? i + t_.ndim : i;
    check(a >= 0 && a < t_.ndim, name_, ": axis ", i, " of a ", t_.ndim, "D tensor");
    return a;
  }
  ssu_tensor const& t_;
  char const* name_;
};

// The sizes run_selective_state_update_stp/_mtp derive from the tensors.
struct Shape {
  bool mtp = false;     // the multi-token path (x 4D, or 3D with cu_seqlens)
  bool varlen = false;  // packed tokens with cu_seqlens
  int64_t batch = 0, ntokens_mtp = 1, state_cache_size = 0, nheads = 0, dim = 0, dstate = 0,
          ngroups = 0;
};

// csrc/selective_state_update.cu's checks for this call (checks.cpp); throws Invalid.
Shape validate(ssu_call const& call);

// One built configuration (shim.cu compiled with its -D values): fills FlashInfer's params
// struct as csrc does and calls its launcher on call.stream; throws on FlashInfer's errors.
using Entry = void (*)(ssu_call const& call, Shape const& shape);

}  // namespace ssu

#endif  // SSU_INTERNAL_H_
