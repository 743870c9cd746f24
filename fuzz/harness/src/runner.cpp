// Running one case through a kernel table and judging it.
#include "ssd/harness/runner.h"

#include "ssd/reference/errors.h"
#include "ssd/reference/truth.h"

namespace ssd {
namespace {

KernelRun run_call(const KernelLibrary& library, const Problem& p, const InputSet& inputs) {
  KernelRun run;
  if (!library.implements(p.op)) {
    run.status = KernelRun::Status::not_implemented;
    run.message = library.origin() + " does not implement " + std::string(op_name(p.op));
    return run;
  }
  const ssd_kernel_table& t = library.table();
  const PreparedCall call(library, p, inputs);
  const ssd_status status = call.invoke();
  if (status == SSD_STATUS_OK && t.device_synchronize && t.device_synchronize() != SSD_STATUS_OK) {
    run.status = KernelRun::Status::error;
  } else if (status == SSD_STATUS_OK) {
    run.outputs = call.read();
    return run;
  } else {
    run.status = status == SSD_STATUS_INVALID_ARGUMENT ? KernelRun::Status::rejected
                 : status == SSD_STATUS_UNSUPPORTED    ? KernelRun::Status::unsupported
                                                       : KernelRun::Status::error;
  }
  run.message = t.last_error ? t.last_error() : "(no message)";
  return run;
}

}  // namespace

PreparedCall::PreparedCall(const KernelLibrary& library, const Problem& p, const InputSet& inputs)
    : table_(library.table()), problem_(p), args_(p.op) {
  const OpSpec& spec = op_spec(p.op);
  for (const auto& [name, t] : inputs.all()) {
    buffers_[name] = std::make_unique<AbiBuffer>(table_, t);
    // A role that is also an output is a state updated in place: read and written.
    const bool in_place = spec.outputs.end() != std::find_if(spec.outputs.begin(), spec.outputs.end(),
                                                             [&](const OutputRole& r) { return r.name == name; });
    min_bytes_ += static_cast<std::size_t>(t.numel()) * dtype_bytes(t.dtype()) * (in_place ? 2 : 1);
    if (in_place) outputs_.push_back(name);
  }
  for (const auto& [name, shape] : output_shapes(p)) {
    if (buffers_.count(name)) continue;  // updated in place
    const DType dtype = spec.output(name).dtype(p);
    buffers_[name] = std::make_unique<AbiBuffer>(table_, dtype, shape);
    min_bytes_ += static_cast<std::size_t>(element_count(shape)) * dtype_bytes(dtype);
    outputs_.push_back(name);
  }
  for (const AbiTensorField& field : spec.abi.tensors)
    if (auto it = buffers_.find(std::string(field.role)); it != buffers_.end()) args_.set_tensor(field.role, it->second->view());
  args_.set_scalars(p);
}

ssd_tensor PreparedCall::operator[](const std::string& name) const {
  auto it = buffers_.find(name);
  return it == buffers_.end() ? ssd_tensor{} : it->second->view();
}

ssd_status PreparedCall::invoke(void* stream) const {
  args_.set_stream(stream);
  return op_spec(problem_.op).abi.call(table_, args_.data());
}

Outputs PreparedCall::read() const {
  Outputs out;
  for (const OutputRole& role : op_spec(problem_.op).outputs)
    if (auto it = buffers_.find(role.name); it != buffers_.end() &&
                                            std::find(outputs_.begin(), outputs_.end(), role.name) != outputs_.end())
      out.add(role.name, it->second->read());
  return out;
}

KernelRun run_kernel(const KernelLibrary& library, const Problem& problem, const InputSet& inputs) {
  return run_call(library, problem, inputs);
}

CaseJudgement check_case(const KernelLibrary& library, const Problem& given) {
  const Problem problem = library.as_declared(given);
  CaseJudgement j;
  j.problem = to_string(problem);
  if (!library.implements(problem.op)) {
    j.verdict = Verdict::skipped;
    j.message = library.origin() + " does not implement " + std::string(op_name(problem.op));
    return j;
  }
  if (auto why = invalid_reason(problem)) {
    // Outside the contract: the kernel must reject it. When its tensors cannot even be built
    // (e.g. a negative size) there is nothing to hand the kernel, and the case is INVALID as is.
    j.verdict = Verdict::invalid;
    j.message = *why;
    InputSet inputs;
    try {
      inputs = make_inputs_unchecked(problem);
      output_shapes(problem);
    } catch (const std::exception&) {
      return j;
    }
    const KernelRun run = run_call(library, problem, inputs);
    if (run.status == KernelRun::Status::ok) {
      j.verdict = Verdict::failed;
      j.message = "accepted a case outside the contract (" + *why + ")";
    } else if (run.status == KernelRun::Status::rejected) {
      j.message = *why + "; rejected: " + run.message;
    }
    return j;
  }
  const InputSet inputs = make_inputs(problem);
  const Truth truth = compute_truth(problem, inputs);
  const KernelRun run = run_call(library, problem, inputs);
  switch (run.status) {
    case KernelRun::Status::ok: return judge(problem, truth.oracle, truth.bounds, run.outputs);
    case KernelRun::Status::not_implemented:
    case KernelRun::Status::unsupported:
      j.verdict = Verdict::skipped;
      j.message = run.message;
      return j;
    case KernelRun::Status::rejected:
    case KernelRun::Status::error:
      j.verdict = Verdict::failed;
      j.message = std::string(run.status == KernelRun::Status::rejected ? "rejected a valid case: " : "error: ") + run.message;
      return j;
  }
  return j;
}

}  // namespace ssd
