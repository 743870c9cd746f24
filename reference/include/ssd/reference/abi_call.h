// One kernel-ABI call as bytes of the op's args struct, read and written through the op's
// AbiBinding: the caller's side (put tensors and scalars in) and a host library's side (read the
// call back into the Problem and inputs it describes, write the outputs into the caller's views).
#pragma once
#include <cstdint>
#include <vector>

#include "ssd/reference/abi_binding.h"
#include "ssd/reference/op_spec.h"

namespace ssd {

// The args struct of one op call, zero-initialised (absent tensors have data NULL).
class AbiArgs {
 public:
  explicit AbiArgs(Op op);
  AbiArgs(Op op, const void* args);  // a copy of a caller's struct

  Op op() const { return op_; }
  const void* data() const { return bytes_.data(); }

  ssd_tensor tensor(std::string_view role) const;  // data NULL when the op has no such role
  void set_tensor(std::string_view role, const ssd_tensor& view);
  double scalar(const AbiScalarField& field) const;
  void set_scalar(const AbiScalarField& field, double value);
  void set_stream(void* stream);
  // Every scalar from the problem's fields (the clamp's default, the flags, chunk_size).
  void set_scalars(const Problem& p);

 private:
  Op op_;
  const AbiBinding* binding_;
  std::vector<std::uint8_t> bytes_;
};

// What a host library reads from a call: the problem (sizes, flags, dtypes, clamp) and the input
// tensors by role. Throws ArgumentError naming the argument for a missing required input or a
// view that cannot be read (NULL data, unknown dtype, a bad rank); input views may have any strides.
struct DecodedCall {
  Problem problem;
  InputSet inputs;
};
DecodedCall decode_call(const AbiArgs& args);

// Writes each output the problem produces into the caller's host view of it (shape and dtype
// must match, else ArgumentError naming the output).
void write_outputs(const AbiArgs& args, const Outputs& outputs);

}  // namespace ssd
