// Where one op's contract roles sit in its kernel-ABI argument struct (gpu/include/ssd/kernel_abi.h):
// the one map between the contract's names and the ABI's fields. The harness reads it to call a
// kernel, a host kernel library (the fp32 emulation) to read a call back into a Problem, and both to
// ask whether a table implements the op. Each OpSpec holds one, written in its spec file.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ssd/kernel_abi.h"
#include "ssd/reference/problem.h"
#include "ssd/reference/tensor.h"

namespace ssd {

// The kernel-ABI version from which the runner sends strided input views (layout= other than
// contiguous): a version-5 library reads every view's strides, or answers UNSUPPORTED.
inline constexpr std::uint32_t kStridedViewsVersion = 5;

// A tensor argument: the contract role (input, output, or both for a state updated in place) and
// the offset of its ssd_tensor in the args struct. `mark` records in a Problem what the presence
// (and shape) of an optional input says, e.g. z present => +z, or the presence of an optional
// output (called with an empty tensor), e.g. intermediate_states => +inter; nullptr for required roles.
struct AbiTensorField {
  std::string_view role;
  std::size_t offset;
  void (*mark)(Problem&, const Tensor&) = nullptr;
  std::uint32_t since = 1;  // the ABI version that added the field
};

// A scalar argument: its C type, the value a problem passes, and how a call's value is read back.
struct AbiScalarField {
  enum class Type { i32, i64, f64 };
  std::string_view name;
  std::size_t offset;
  Type type;
  double (*get)(const Problem&);
  void (*set)(Problem&, double);
  std::uint32_t since = 1;  // the ABI version that added the field
};

// Where a host library reads a problem size from a call: `size` (a dim letter, or "slots") is axis
// `axis` (negative counts from the end) of the tensor of `role`, times Q when `times_chunk`. The
// first source whose role is present wins; `only_with` names a role that must also be present.
struct SizeSource {
  std::string_view size;
  std::string_view role;
  int axis;
  bool times_chunk = false;
  std::string_view only_with = {};
  bool minus_one = false;  // the extent less one: Bt from cu_seqlens [Bt+1]
};

struct AbiBinding {
  std::size_t args_size = 0;      // sizeof the op's args struct
  std::size_t stream_offset = 0;  // offset of its `void* stream`
  std::vector<AbiTensorField> tensors;
  std::vector<AbiScalarField> scalars;
  std::vector<SizeSource> sizes;  // in order: a later source may use Q set by an earlier one or a scalar
  // The table's entry for the op: present?, call it with an args struct given as bytes, and (for a
  // library that implements every op the same way) point the entry at one function of (op, args).
  bool (*implemented_by)(const ssd_kernel_table&) = nullptr;
  ssd_status (*call)(const ssd_kernel_table&, const void* args) = nullptr;
  using HostEntry = ssd_status (*)(Op, const void* args);
  void (*install)(ssd_kernel_table&, HostEntry) = nullptr;

  const AbiTensorField* tensor(std::string_view role) const {
    for (const auto& f : tensors)
      if (f.role == role) return &f;
    return nullptr;
  }
  // The oldest ABI version whose args struct can carry the problem: the newest field it uses (a
  // tensor it has, a scalar off the value a plain problem passes). Defined in abi_call.cpp.
  std::uint32_t version_needed(const Problem& p) const;
};

namespace abi_detail {

template <class Member>
struct EntryTraits;
template <class Args>
struct EntryTraits<ssd_status (*ssd_kernel_table::*)(const Args*)> {
  using type = Args;
};

// One host entry per op, forwarding to the function the library installed.
template <Op O, class Args>
struct HostEntryOf {
  static inline AbiBinding::HostEntry target = nullptr;
  static ssd_status entry(const Args* args) { return target(O, args); }
};

}  // namespace abi_detail

// The binding of the op whose table entry is `Entry` (e.g. &ssd_kernel_table::chunk_scan): the
// parts that follow from the args struct's type; the spec adds tensors, scalars and sizes.
template <Op O, auto Entry>
AbiBinding make_abi_binding(std::size_t stream_offset) {
  using Args = typename abi_detail::EntryTraits<decltype(Entry)>::type;
  static_assert(std::is_trivially_copyable_v<Args>);
  AbiBinding b;
  b.args_size = sizeof(Args);
  b.stream_offset = stream_offset;
  b.implemented_by = [](const ssd_kernel_table& t) { return t.*Entry != nullptr; };
  b.call = [](const ssd_kernel_table& t, const void* bytes) {
    Args args;
    std::memcpy(&args, bytes, sizeof args);
    return (t.*Entry)(&args);
  };
  b.install = [](ssd_kernel_table& t, AbiBinding::HostEntry target) {
    abi_detail::HostEntryOf<O, Args>::target = target;
    t.*Entry = &abi_detail::HostEntryOf<O, Args>::entry;
  };
  return b;
}

}  // namespace ssd
