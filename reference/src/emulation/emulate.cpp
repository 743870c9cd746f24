// The fp32 emulation's entry point: dispatch on the op, then the one flaw that acts on storage.
#include "ssd/emulation.h"

#include "emu.h"
#include "ssd/errors.h"

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
  const emu::Ctx ctx(options);
  Outputs out;
  switch (problem.op) {
    case Op::mamba2: out = emu::mamba2(problem, inputs, ctx); break;
    case Op::chunk_cumsum: out = emu::chunk_cumsum(problem, inputs, ctx); break;
    case Op::chunk_coupling: out = emu::chunk_coupling(problem, inputs, ctx); break;
    case Op::chunk_state: out = emu::chunk_state(problem, inputs, ctx); break;
    case Op::state_passing: out = emu::state_passing(problem, inputs, ctx); break;
    case Op::chunk_scan: out = emu::chunk_scan(problem, inputs, ctx); break;
    case Op::recurrent: out = emu::recurrent(problem, inputs, ctx); break;
    case Op::discretize_segsum: out = emu::discretize_segsum(problem, inputs, ctx); break;
  }
  // The kernel never stores the last element of its first output: it keeps the buffer's 0.
  if (ctx.has(Flaw::last_element_unwritten) && !out.all().empty()) {
    Tensor& first = out.get(out.all().front().name).value;
    if (first.numel() > 0) first.data()[first.numel() - 1] = 0.0;
  }
  return out;
}

}  // namespace ssd
