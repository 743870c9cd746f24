// Checking cases with the kernel call in a worker process or in this one.
#include "ssd/harness/case_checker.h"

#include "ssd/harness/judge_call.h"
#include "ssd/reference/errors.h"
#include "ssd/reference/truth.h"
#include "worker_process.h"

namespace ssd {

struct CaseChecker::Worker {
  explicit Worker(std::string file) : process(std::move(file)) {}
  WorkerProcess process;
};

// One call in flight: a worker is handed the case as soon as its inputs exist and calls the
// kernel while this process computes the oracle and bounds; in process, the call is made when the
// call is finished.
struct CaseChecker::Call {
  CaseChecker& checker;
  const Problem& problem;
  const InputSet& inputs;

  Call(CaseChecker& c, const Problem& p, const InputSet& in) : checker(c), problem(p), inputs(in) {
    if (checker.worker_) checker.worker_->process.send(wire::Request{0, to_string(p), encode_inputs(inputs)});
  }
  WorkerProcess::Outcome finish() {
    if (!checker.worker_) return {record_call(checker.library_, problem, inputs, checker.pool_.get()), {}};
    return checker.worker_->process.receive(checker.options_.case_timeout.value_or(default_case_timeout(problem)));
  }
};

namespace {

CaseJudgement death_judgement(const Problem& p, const WorkerDeath& death) {
  CaseJudgement j;
  j.problem = to_string(p);
  j.verdict = death.verdict;
  j.message = death.message;
  return j;
}

}  // namespace

Isolation parse_isolation(std::string_view text) {
  if (text == "none") return Isolation::none;
  if (text == "process") return Isolation::process;
  throw ArgumentError("isolation", "'" + std::string(text) + "' is neither 'process' nor 'none'");
}

std::string_view isolation_name(Isolation isolation) { return isolation == Isolation::none ? "none" : "process"; }

double default_case_timeout(const Problem& p) {
  constexpr double kBase = 5.0, kPerElement = 1e-6;
  double elements = 0;
  try {
    const OpSpec& spec = op_spec(p.op);
    for (const InputRole& role : spec.inputs)
      if (!role.present || role.present(p)) elements += static_cast<double>(element_count(role.shape(p)));
    for (const auto& [name, shape] : output_shapes(p)) elements += static_cast<double>(element_count(shape));
  } catch (const std::exception&) {
    // A case whose shapes cannot be built is rejected at once: the base is plenty.
  }
  return kBase + kPerElement * elements;
}

CaseChecker::CaseChecker(const KernelLibrary& library, CheckOptions options) : library_(library), options_(options) {
  if (options_.isolation == Isolation::none) {
    pool_ = std::make_unique<MemoryPool>(library.table());
    return;
  }
  if (library.file().empty())
    throw ArgumentError("isolation", library.origin() +
                                         " was not loaded from a file, so a worker process cannot open it; use 'none'");
  worker_ = std::make_unique<Worker>(library.file());
}

CaseChecker::~CaseChecker() = default;

int CaseChecker::worker_starts() const { return worker_ ? worker_->process.starts() : 0; }

CaseJudgement CaseChecker::check(const Problem& given) {
  const Problem p = library_.as_declared(given);  // a library that declares TF32 dots is judged so
  CaseJudgement j;
  j.problem = to_string(p);
  if (auto why = library_.cannot_run(p)) {
    j.verdict = Verdict::skipped;
    j.message = *why;
    return j;
  }
  if (auto why = invalid_reason(p)) {
    // Outside the contract: the kernel must reject it. When its tensors cannot even be built
    // (e.g. a negative size) there is nothing to hand the kernel, and the case is INVALID as is.
    InputSet inputs;
    try {
      inputs = make_inputs_unchecked(p);
      output_shapes(p);
    } catch (const std::exception&) {
      j.verdict = Verdict::invalid;
      j.message = *why;
      return j;
    }
    const WorkerProcess::Outcome outcome = Call(*this, p, inputs).finish();
    return outcome.record ? judge_invalid_call(p, *why, *outcome.record) : death_judgement(p, outcome.death);
  }
  const InputSet inputs = make_inputs(p);
  Call call(*this, p, inputs);
  const Truth truth = compute_truth(p, inputs);
  const WorkerProcess::Outcome outcome = call.finish();
  return outcome.record ? judge_valid_call(p, truth, *outcome.record) : death_judgement(p, outcome.death);
}

KernelRun CaseChecker::run(const Problem& p) {
  const InputSet inputs = make_inputs(p);
  const WorkerProcess::Outcome outcome = Call(*this, p, inputs).finish();
  KernelRun run;
  if (!outcome.record) {
    run.status = CallStatus::error;
    run.message = std::string(verdict_name(outcome.death.verdict)) + ": " + outcome.death.message;
    return run;
  }
  run.status = outcome.record->status;
  run.message = outcome.record->message;
  if (run.status == CallStatus::ok) run.outputs = decode_outputs(outcome.record->outputs);
  return run;
}

}  // namespace ssd
