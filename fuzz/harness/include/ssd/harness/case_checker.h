// Checking cases one after another against one kernel library, with the kernel calls isolated in
// a worker process (the default) or made in this process. In a worker, a kernel that crashes,
// calls exit, hangs, or leaves a device error behind costs its case a verdict (CRASHED, TIMEOUT,
// FAILED) and the worker a restart, never the campaign. The worker calls the kernel while this
// process computes the oracle and bounds; told which case comes next, the checker queues that
// call too, so the worker goes on to it while this process judges the last one.
#pragma once
#include <memory>
#include <optional>
#include <string_view>

#include "ssd/harness/call_record.h"
#include "ssd/harness/kernel_library.h"
#include "ssd/harness/runner.h"

namespace ssd {

enum class Isolation { none, process };
Isolation parse_isolation(std::string_view text);  // "none" | "process"; ArgumentError('isolation')
std::string_view isolation_name(Isolation isolation);

struct CheckOptions {
  Isolation isolation = Isolation::process;
  // Seconds a call may run before its worker is killed (TIMEOUT); nullopt = default_case_timeout.
  // Only an isolated call can be stopped: in process there is no time limit.
  std::optional<double> case_timeout;
  // Check the decode step's packing and prefix invariance too (ssd/harness/invariance.h): one more
  // call per relation that applies (a row alone, the first k tokens), which must match its part of
  // the whole bit for bit (VARIANT).
  bool invariance = true;
};

// The time limit of a case when none is given: 5 s plus 1 s per million elements of its tensors
// (inputs and outputs), so small cases hang up quickly and large ones have room on a slow CPU.
double default_case_timeout(const Problem& problem);

class CaseChecker {
 public:
  // Throws ArgumentError('isolation') when the library was not loaded from a file (a worker opens
  // the file itself) and the isolation is `process`.
  explicit CaseChecker(const KernelLibrary& library, CheckOptions options = {});
  ~CaseChecker();
  CaseChecker(const CaseChecker&) = delete;
  CaseChecker& operator=(const CaseChecker&) = delete;

  // The verdict on one case (as ssd::check_case, plus CRASHED and TIMEOUT). `next`, when given,
  // is the case the caller will check after this one: in a worker its call is queued behind this
  // one's now. A later check of another case first waits out and drops the queued call (its
  // outcome, a crash or a hang included, is charged to nobody).
  CaseJudgement check(const Problem& problem, const Problem* next = nullptr);
  // The kernel's outputs on a valid case (what a dumped case file stores); a call that did not
  // return has status error and the death in the message.
  KernelRun run(const Problem& problem);
  // The same on given inputs (a call the oracle need not know, e.g. one row of a case alone).
  KernelRun run(const Problem& problem, const InputSet& inputs);

  // Seconds the last check spent on its own case: the building and sending of its call when an
  // earlier check queued it included, the queueing of `next` left out (it is the next case's).
  double last_case_seconds() const { return last_case_seconds_; }

  const CheckOptions& options() const { return options_; }
  const KernelLibrary& library() const { return library_; }
  int worker_starts() const;  // worker processes started so far (0 in process)

 private:
  struct Queued;  // a case with its inputs built, and its call on its way to a worker
  Queued prepare(const Problem& declared) const;
  void enqueue(const Problem& declared);
  CaseJudgement judge(Queued& queued);
  CaseJudgement with_invariance(const Queued& queued, CaseJudgement judgement);
  // One call outside the queue (the queued calls' replies are taken first and kept for their
  // turn): its record, or none and `death` saying how the call ended.
  std::optional<CallRecord> call(const Problem& problem, const InputSet& inputs, std::string& death);
  void drop_queued();
  const KernelLibrary& library_;
  CheckOptions options_;
  std::unique_ptr<MemoryPool> pool_;   // in process: buffers reused across cases
  struct Worker;
  std::unique_ptr<Worker> worker_;     // isolated: the process and the cases queued for it
  double last_case_seconds_ = 0;
};

}  // namespace ssd
