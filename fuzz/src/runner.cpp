// Loading kernel tables and running one case through them.
#include "ssd/runner.h"

#include <dlfcn.h>

#include <map>

#include "ssd/abi_tensors.h"
#include "ssd/emulation_table.h"
#include "ssd/errors.h"

namespace ssd {

KernelLibrary KernelLibrary::from_table(const ssd_kernel_table* table, std::string origin) {
  if (table == nullptr) throw ArgumentError("kernels", origin + ": the table is NULL");
  if (table->abi_version != SSD_KERNEL_ABI_VERSION)
    throw ArgumentError("kernels", origin + ": kernel ABI version " + std::to_string(table->abi_version) +
                                       ", this runner speaks version " + std::to_string(SSD_KERNEL_ABI_VERSION));
  if (table->memory_kind != SSD_MEMORY_HOST && table->memory_kind != SSD_MEMORY_CUDA)
    throw ArgumentError("kernels", origin + ": unknown memory kind " + std::to_string(table->memory_kind));
  KernelLibrary library;
  library.table_ = table;
  library.origin_ = std::move(origin);
  return library;
}

KernelLibrary KernelLibrary::open(const std::string& spec) {
  if (spec == "emulation") return from_table(emulation_table({SumOrder::sequential, Flaw::none}), spec);
  if (spec == "emulation-blocked") return from_table(emulation_table({SumOrder::blocked, Flaw::none}), spec);
  if (spec.rfind("mutant:", 0) == 0) return from_table(emulation_table({SumOrder::sequential, parse_flaw(spec.substr(7))}), spec);
  if (spec.find('/') == std::string::npos && spec.find(".so") == std::string::npos)
    throw ArgumentError("kernels", "'" + spec + "' is neither a built-in table (emulation, emulation-blocked, "
                                   "mutant:<flaw>) nor a path to a shared library");
  void* handle = dlopen(spec.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw ArgumentError("kernels", "cannot open " + spec + ": " + dlerror());
  std::shared_ptr<void> owner(handle, [](void* h) { dlclose(h); });
  void* symbol = dlsym(handle, SSD_KERNEL_TABLE_SYMBOL);
  if (symbol == nullptr)
    throw ArgumentError("kernels", spec + " does not export " SSD_KERNEL_TABLE_SYMBOL "()");
  const auto get_table = reinterpret_cast<ssd_kernel_table_fn>(symbol);
  KernelLibrary library = from_table(get_table(), spec);
  library.handle_ = std::move(owner);
  return library;
}

bool KernelLibrary::implements(Op op) const {
  switch (op) {
    case Op::mamba2: return table_->mamba2 != nullptr;
    case Op::chunk_cumsum: return table_->chunk_cumsum != nullptr;
    case Op::chunk_coupling: return table_->chunk_coupling != nullptr;
    case Op::chunk_state: return table_->chunk_state != nullptr;
    case Op::state_passing: return table_->state_passing != nullptr;
    case Op::chunk_scan: return table_->chunk_scan != nullptr;
    case Op::recurrent: return table_->recurrent != nullptr;
    case Op::discretize_segsum: return table_->discretize_segsum != nullptr;
  }
  return false;
}

namespace {

template <class Buffers>
ssd_status call_op(const ssd_kernel_table& t, const Problem& p, const Buffers& c, void* stream) {
  const double lo = p.dt_limit ? p.dt_limit->lo : DtLimit{}.lo, hi = p.dt_limit ? p.dt_limit->hi : DtLimit{}.hi;
  switch (p.op) {
    case Op::mamba2: {
      ssd_mamba2_args a{c["x"], c["dt"], c["A"], c["B"], c["C"], p.q, c["D"], c["z"], c["dt_bias"],
                        c["initial_states"], c["seq_idx"], p.softplus, lo, hi, c["out"], c["final_states"], stream};
      return t.mamba2(&a);
    }
    case Op::chunk_cumsum: {
      ssd_chunk_cumsum_args a{c["dt"], c["A"], p.q, c["dt_bias"], p.softplus, lo, hi, c["dA_cumsum"], c["dt_out"], stream};
      return t.chunk_cumsum(&a);
    }
    case Op::chunk_coupling: {
      ssd_chunk_coupling_args a{c["C"], c["B"], p.q, c["seq_idx"], p.causal, c["CB"], stream};
      return t.chunk_coupling(&a);
    }
    case Op::chunk_state: {
      ssd_chunk_state_args a{c["B"], c["x"], c["dt"], c["dA_cumsum"], c["seq_idx"], c["states"], stream};
      return t.chunk_state(&a);
    }
    case Op::state_passing: {
      ssd_state_passing_args a{c["states"], c["dA_chunk_cumsum"], c["initial_states"], c["seq_idx"], p.q,
                               c["out"], c["final_states"], stream};
      return t.state_passing(&a);
    }
    case Op::chunk_scan: {
      ssd_chunk_scan_args a{c["cb"], c["x"], c["dt"], c["dA_cumsum"], c["C"], c["states"], c["D"], c["z"],
                            c["seq_idx"], c["out"], c["out_x"], stream};
      return t.chunk_scan(&a);
    }
    case Op::recurrent: {
      ssd_recurrent_args a{c["state"], c["x"], c["dt"], c["A"], c["B"], c["C"], c["D"], c["z"], c["dt_bias"],
                           c["state_batch_indices"], p.softplus, c["out"], stream};
      return t.recurrent(&a);
    }
    case Op::discretize_segsum: {
      ssd_discretize_segsum_args a{c["hidden_states"], c["dt"], c["A_log"], c["B"], c["C"], c["L"], c["G"],
                                   c["M"], c["A_cumsum"], c["decay_states"], stream};
      return t.discretize_segsum(&a);
    }
  }
  return SSD_STATUS_UNSUPPORTED;
}

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
    : table_(library.table()), problem_(p) {
  for (const auto& [name, t] : inputs.all()) {
    buffers_[name] = std::make_unique<AbiBuffer>(table_, t);
    min_bytes_ += static_cast<std::size_t>(t.numel()) * dtype_bytes(t.dtype()) * (p.op == Op::recurrent && name == "state" ? 2 : 1);
  }
  const OpSpec& spec = op_spec(p.op);
  for (const auto& [name, shape] : output_shapes(p)) {
    if (p.op == Op::recurrent && name == "state") continue;  // updated in place
    const DType dtype = spec.output(name).dtype(p);
    buffers_[name] = std::make_unique<AbiBuffer>(table_, dtype, shape);
    min_bytes_ += static_cast<std::size_t>(element_count(shape)) * dtype_bytes(dtype);
    outputs_.push_back(name);
  }
  if (p.op == Op::recurrent) outputs_.push_back("state");
}

ssd_tensor PreparedCall::operator[](const std::string& name) const {
  auto it = buffers_.find(name);
  return it == buffers_.end() ? ssd_tensor{} : it->second->view();
}

ssd_status PreparedCall::invoke(void* stream) const { return call_op(table_, problem_, *this, stream); }

Outputs PreparedCall::read() const {
  Outputs out;
  for (const auto& name : outputs_) out.add(name, buffers_.at(name)->read());
  return out;
}

KernelRun run_kernel(const KernelLibrary& library, const Problem& problem, const InputSet& inputs) {
  return run_call(library, problem, inputs);
}

CaseJudgement check_case(const KernelLibrary& library, const Problem& problem) {
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
  const OpSpec& spec = op_spec(problem.op);
  const Outputs oracle = spec.chunked(problem, inputs);
  const Bounds bounds = compute_bounds(problem, inputs, oracle);
  const KernelRun run = run_call(library, problem, inputs);
  switch (run.status) {
    case KernelRun::Status::ok: return judge(problem, oracle, bounds, run.outputs);
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
