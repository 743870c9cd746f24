// Checking cases with the kernel call in a worker process or in this one.
#include "ssd/harness/case_checker.h"

#include <chrono>
#include <cstdio>
#include <deque>
#include <exception>

#include "ssd/harness/invariance.h"
#include "ssd/harness/judge_call.h"
#include "ssd/harness/packed_invariance.h"
#include "ssd/reference/errors.h"
#include "ssd/reference/layout.h"
#include "ssd/reference/truth.h"
#include "worker_process.h"

namespace ssd {

struct CaseChecker::Queued {
  Problem problem;                       // as declared
  InputSet inputs;
  std::optional<std::string> invalid;    // outside the contract: why
  std::optional<CaseJudgement> settled;  // no call to make: SKIPPED, or INVALID with no tensors to hand over
  double seconds = 0;                    // spent building and sending it
  std::vector<RawTensor> outputs;        // the kernel's outputs, once judged (a call that returned ok)
  // The worker's reply, taken early because a call outside the queue had to pass it (with_invariance).
  std::optional<WorkerProcess::Outcome> received;
  std::optional<Truth> truth;            // the oracle and bounds, once judged (split prefill reuses them)
};

struct CaseChecker::Worker {
  explicit Worker(std::string file) : process(std::move(file)) {}
  WorkerProcess process;
  // Oldest first. Those with a call have it in the process's queue, in the same order, so each
  // reply and each death belongs to the first of them.
  std::deque<Queued> queued;
};

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

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

CaseChecker::Queued CaseChecker::prepare(const Problem& p) const {
  Queued q;
  q.problem = p;
  if (auto why = library_.cannot_run(p)) {
    q.settled = CaseJudgement{};
    q.settled->problem = to_string(p);
    q.settled->verdict = Verdict::skipped;
    q.settled->message = *why;
    return q;
  }
  if (auto why = invalid_reason(p)) {
    // Outside the contract: the kernel must reject it. When its tensors cannot even be built
    // (e.g. a negative size) there is nothing to hand the kernel, and the case is INVALID as is.
    q.invalid = *why;
    // A layout that cannot hold (views of different dtypes in one buffer) cannot be handed to the
    // kernel either: there are no views to build. Nor can a reason no tensor shows (S % Q of an op
    // whose tensors come in whole chunks): the kernel would see a valid case.
    if (layout_reason(p) || unseen_invalid_reason(p)) {
      q.settled = CaseJudgement{};
      q.settled->problem = to_string(p);
      q.settled->verdict = Verdict::invalid;
      q.settled->message = *why;
      return q;
    }
    try {
      q.inputs = make_inputs_unchecked(p);
      output_shapes(p);
    } catch (const std::exception&) {
      q.settled = CaseJudgement{};
      q.settled->problem = to_string(p);
      q.settled->verdict = Verdict::invalid;
      q.settled->message = *why;
    }
    return q;
  }
  q.inputs = make_inputs(p);
  return q;
}

void CaseChecker::enqueue(const Problem& p) {
  const auto start = Clock::now();
  Queued q = prepare(p);
  if (!q.settled)
    worker_->process.send(wire::Request{0, to_string(p), encode_inputs(q.inputs)},
                          options_.case_timeout.value_or(default_case_timeout(p)));
  q.seconds = since(start);
  worker_->queued.push_back(std::move(q));
}

void CaseChecker::drop_queued() {
  if (!worker_) return;
  for (const Queued& q : worker_->queued) {
    if (q.settled || q.received) continue;  // no reply outstanding
    try {
      worker_->process.receive();  // waited out, so that its end is not taken for the next call's
    } catch (const std::exception&) {
      // A runner error on a call no one wants: the next call meets it again if it persists.
    }
  }
  worker_->queued.clear();
}

CaseJudgement CaseChecker::judge(Queued& q) {
  if (q.settled) return *q.settled;
  auto finish = [&] {
    if (q.received) return std::move(*q.received);
    return worker_ ? worker_->process.receive()
                   : WorkerProcess::Outcome{record_call(library_, q.problem, q.inputs, pool_.get()), {}};
  };
  const Problem& p = q.problem;
  if (q.invalid) {
    const WorkerProcess::Outcome outcome = finish();
    return outcome.record ? judge_invalid_call(p, *q.invalid, *outcome.record) : death_judgement(p, outcome.death);
  }
  // The oracle runs while the worker calls the kernel. Should it throw, the call's outcome is
  // still taken, so that the next reply goes to the next case.
  std::optional<Truth> truth;
  std::exception_ptr failure;
  try {
    truth = compute_truth(p, q.inputs);
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure && !worker_) std::rethrow_exception(failure);
  const WorkerProcess::Outcome outcome = finish();
  if (failure) std::rethrow_exception(failure);
  if (outcome.record && outcome.record->status == CallStatus::ok) q.outputs = outcome.record->outputs;
  if (!outcome.record) return death_judgement(p, outcome.death);
  CaseJudgement j = judge_valid_call(p, *truth, *outcome.record);
  q.truth = std::move(truth);
  return j;
}

CaseJudgement CaseChecker::check(const Problem& given, const Problem* next) {
  const auto start = Clock::now();
  const Problem p = library_.as_declared(given);  // a library that declares TF32 dots is judged so
  if (!worker_) {
    Queued q = prepare(p);
    const CaseJudgement j = with_invariance(q, judge(q));
    last_case_seconds_ = since(start);
    return j;
  }
  std::deque<Queued>& queued = worker_->queued;
  double earlier = 0;  // this case's share spent by the check that queued it
  if (queued.empty() || !(queued.front().problem == p)) {
    drop_queued();
    enqueue(p);
    queued.front().seconds = 0;  // counted in this check's own time
  } else {
    earlier = queued.front().seconds;
  }
  double lookahead = 0;
  if (next != nullptr && queued.size() == 1) {
    try {
      enqueue(library_.as_declared(*next));
      lookahead = queued.back().seconds;
    } catch (const std::exception&) {
      // Not queued: checked on its own turn, where the same error is reported for it.
    }
  }
  Queued q = std::move(queued.front());
  queued.pop_front();
  const CaseJudgement j = with_invariance(q, judge(q));
  last_case_seconds_ = since(start) - lookahead + earlier;
  return j;
}

std::optional<CallRecord> CaseChecker::call(const Problem& p, const InputSet& inputs, std::string& death) {
  if (!worker_) return record_call(library_, p, inputs, pool_.get());
  // Replies come in the order of the calls: the queued cases' replies are taken (and kept for
  // their turn) before this call's.
  for (Queued& q : worker_->queued)
    if (!q.settled && !q.received) q.received = worker_->process.receive();
  worker_->process.send(wire::Request{0, to_string(p), encode_inputs(inputs)},
                        options_.case_timeout.value_or(default_case_timeout(p)));
  WorkerProcess::Outcome outcome = worker_->process.receive();
  if (!outcome.record) death = std::string(verdict_name(outcome.death.verdict)) + ": " + outcome.death.message;
  return std::move(outcome.record);
}

CaseJudgement CaseChecker::with_invariance(const Queued& q, CaseJudgement j) {
  const bool judged_within_bounds =
      j.verdict == Verdict::passed || j.verdict == Verdict::suspect || j.verdict == Verdict::mistrusted;
  if (!options_.invariance || !judged_within_bounds || q.outputs.empty()) return j;
  std::optional<std::string> why;
  // A derived call that did not return ok: why, naming the relation and the call.
  auto refused = [](const std::string& what, const std::optional<CallRecord>& record, const std::string& death) {
    return what + (record ? " was refused (" + record->message + ")" : " did not return (" + death + ")");
  };
  // One derived call against the case: why it breaks its relation (`violation` of its outputs), or
  // nothing; `what` names the call when it does not return ok.
  auto compared = [&](const std::string& what, const Problem& p, const InputSet& in,
                      const auto& violation) -> std::optional<std::string> {
    std::string death;
    const std::optional<CallRecord> record = call(p, in, death);
    if (!record || record->status != CallStatus::ok) return refused(what, record, death);
    return violation(record->outputs);
  };
  if (invariance_applies(q.problem))
    if (const std::optional<RowAlone> alone = row_alone(q.problem, q.inputs))  // none when every row is padding
      why = compared("packing invariance: row " + std::to_string(alone->row) + " alone", alone->problem, alone->inputs,
                     [&](const auto& got) { return invariance_violation(q.problem, q.inputs, *alone, q.outputs, got); });
  if (!why && prefix_invariance_applies(q.problem)) {
    const TokenPrefix prefix = token_prefix(q.problem, q.inputs);
    why = compared("prefix invariance: the call cut to " + std::to_string(prefix.tokens) + " tokens", prefix.problem,
                   prefix.inputs,
                   [&](const auto& got) { return prefix_violation(q.problem, q.inputs, prefix, q.outputs, got); });
  }
  if (!why && q.truth && split_prefill_applies(q.problem)) {
    const PrefillSplit split = split_prefill(q.problem, q.inputs);
    const std::string k = std::to_string(split.tokens), rest = std::to_string(q.problem.s - split.tokens);
    std::string death;
    const std::optional<CallRecord> first = call(split.first, split.first_inputs, death);
    if (!first || first->status != CallStatus::ok) {
      why = refused("split prefill: the first " + k + " tokens", first, death);
    } else {
      const std::optional<CallRecord> second = call(split.rest, rest_inputs(q.inputs, split, first->outputs), death);
      if (!second || second->status != CallStatus::ok) {
        why = refused("split prefill: the other " + rest + " tokens from the first call's final states", second, death);
      } else {
        CallRecord joined;
        joined.outputs = joined_outputs(q.problem, first->outputs, second->outputs);
        const CaseJudgement whole = judge_valid_call(q.problem, *q.truth, joined);
        if (whole.verdict != Verdict::passed && whole.verdict != Verdict::suspect && whole.verdict != Verdict::mistrusted) {
          char max_r[32];
          std::snprintf(max_r, sizeof max_r, "%.3g", whole.max_r());
          why = "split prefill: the first " + k + " tokens, then the other " + rest + " from their final states, are " +
                std::string(verdict_name(whole.verdict)) + " against the whole call's bounds (max r " + max_r + ")";
        }
      }
    }
  }
  if (!why && q.truth && packed_invariance_applies(q.problem)) {
    const PackedCut prefix = packed_prefix(q.problem, q.inputs);
    why = compared("prefix invariance: the packed batch cut after sequence " + std::to_string(prefix.sequence),
                   prefix.problem, prefix.inputs,
                   [&](const auto& got) { return packed_prefix_violation(q.problem, prefix, q.outputs, got); });
  }
  if (!why && q.truth && packed_invariance_applies(q.problem)) {
    const PackedCut alone = packed_alone(q.problem, q.inputs);
    why = compared("packing invariance: sequence " + std::to_string(alone.sequence) + " alone at its place in its chunk",
                   alone.problem, alone.inputs,
                   [&](const auto& got) { return packed_alone_violation(q.problem, *q.truth, alone, q.outputs, got); });
  }
  if (why) {
    j.verdict = Verdict::variant;
    j.message = j.message.empty() ? *why : j.message + "; " + *why;
  }
  return j;
}

KernelRun CaseChecker::run(const Problem& p) { return run(p, make_inputs(p)); }

KernelRun CaseChecker::run(const Problem& p, const InputSet& inputs) {
  std::string death;
  const std::optional<CallRecord> record = call(p, inputs, death);
  KernelRun run;
  if (!record) {
    run.status = CallStatus::error;
    run.message = death;
    return run;
  }
  run.status = record->status;
  run.message = record->message;
  if (run.status == CallStatus::ok) run.outputs = decode_outputs(record->outputs);
  return run;
}

}  // namespace ssd
