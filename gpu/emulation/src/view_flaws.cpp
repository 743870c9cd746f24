// The planted flaws of strided input views: applied to a call's views before the call is read.
#include "view_flaws.h"

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace ssd {
namespace {

// strides_ignored: the view's strides replaced by the dense row-major ones of its shape.
ssd_tensor dense(ssd_tensor v) {
  std::int64_t stride = 1;
  for (int axis = v.rank - 1; axis >= 0; --axis) {
    v.strides[axis] = stride;
    stride *= v.shape[axis];
  }
  return v;
}

// offsets_int32: the largest element offset the view reaches, computed as a kernel with int32
// offsets would (idx * stride summed in 32 bits); a wrapped (negative) offset is an access before
// the tensor, which a GPU faults on.
void check_int32_offsets(const ssd_tensor& v, std::string_view role) {
  std::int64_t reach = 0;
  for (int axis = 0; axis < v.rank; ++axis)
    if (v.shape[axis] > 0 && v.strides[axis] > 0) reach += (v.shape[axis] - 1) * v.strides[axis];
  if (reach > std::numeric_limits<std::int32_t>::max())
    throw std::runtime_error("illegal memory access: element offset " + std::to_string(reach) + " of " + std::string(role) +
                             " computed in int32 wrapped to " +
                             std::to_string(static_cast<std::int32_t>(static_cast<std::uint32_t>(reach))));
}

// params_assumed_dense: the decode step's per-head parameters, which serving engines pass as
// stride-0 expansions of one value per head, indexed as dense arrays (A[h*P*N + p*N + n]): a
// kernel that takes the strides of x, B, C and dt but not of these. It reads past the end of a
// buffer of H values, into its guard band and beyond.
bool per_head_parameter(Op op, std::string_view role) {
  return op == Op::recurrent && (role == "A" || role == "D" || role == "dt_bias");
}

}  // namespace

void apply_view_flaw(Flaw flaw, AbiArgs& call) {
  if (flaw != Flaw::strides_ignored && flaw != Flaw::offsets_int32 && flaw != Flaw::params_assumed_dense) return;
  for (const InputRole& role : op_spec(call.op()).inputs) {
    const ssd_tensor v = call.tensor(role.name);
    if (v.data == nullptr) continue;
    if (flaw == Flaw::strides_ignored) call.set_tensor(role.name, dense(v));
    else if (flaw == Flaw::params_assumed_dense && per_head_parameter(call.op(), role.name)) call.set_tensor(role.name, dense(v));
    else if (flaw == Flaw::offsets_int32) check_int32_offsets(v, role.name);
  }
}

}  // namespace ssd
