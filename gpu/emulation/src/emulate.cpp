// The fp32 emulation's entry point: the op's kernel, then the one flaw that acts on storage.
#include "ssd/emulation/emulation.h"

#include "emu.h"
#include "ssd/reference/errors.h"

namespace ssd {
namespace emu {

DType output_dtype(const Problem& p, std::string_view name) {
  for (const OutputRole& role : op_spec(p.op).outputs)
    if (role.name == name) return role.dtype(p);
  throw ArgumentError(op_name(p.op), "output", "no output named '" + std::string(name) + "'");
}

Tensor to_tensor(DType t, Shape shape, const std::vector<float>& values) {
  Tensor out(t, std::move(shape));
  for (std::int64_t i = 0; i < out.numel(); ++i) out.set(i, static_cast<double>(values[static_cast<std::size_t>(i)]));
  return out;
}

}  // namespace emu

Outputs emulate(const Problem& problem, const InputSet& inputs, const EmulationOptions& options) {
  using Kernel = Outputs (*)(const Problem&, const InputSet&, const emu::Ctx&);
  // The emulation's own kernel table: one function per op, as a CUDA library has one kernel per op.
  static const std::pair<Op, Kernel> kernels[] = {
      {Op::mamba2, emu::mamba2},       {Op::chunk_cumsum, emu::chunk_cumsum}, {Op::chunk_coupling, emu::chunk_coupling},
      {Op::chunk_state, emu::chunk_state}, {Op::state_passing, emu::state_passing}, {Op::chunk_scan, emu::chunk_scan},
      {Op::recurrent, emu::recurrent}, {Op::discretize_segsum, emu::discretize_segsum}};
  const emu::Ctx ctx(options);
  Outputs out;
  for (const auto& [op, kernel] : kernels)
    if (op == problem.op) out = kernel(problem, inputs, ctx);
  // The kernel never stores the last element of its first output: it keeps the buffer's 0.
  if (ctx.has(Flaw::last_element_unwritten) && !out.all().empty()) {
    Tensor& first = out.get(out.all().front().name).value;
    if (first.numel() > 0) first.data()[first.numel() - 1] = 0.0;
  }
  return out;
}

}  // namespace ssd
