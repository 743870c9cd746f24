// The runner's side of a worker process: started on demand (fork and exec of ssd-kernel-worker,
// which opens the kernel library itself, so no CUDA or OpenMP state crosses a fork), sent one
// case at a time, and replaced when a call kills it, outlives its time, or leaves the device in
// an error state.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "ssd/reference/verdict.h"
#include "wire.h"

namespace ssd {

// How a call ended without a reply: CRASHED (a signal, or the process exited) or TIMEOUT.
struct WorkerDeath {
  Verdict verdict = Verdict::crashed;
  std::string message;
  int exit_status = -1;  // when the process exited (rather than being killed)
};

class WorkerProcess {
 public:
  // `library_file` is what the worker passes to dlopen (KernelLibrary::file()).
  explicit WorkerProcess(std::string library_file);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Starts a worker if none is running, and sends the request. A worker that dies while opening
  // the library makes that the request's outcome (receive returns it).
  void send(wire::Request request);
  // The reply to the last request sent, waiting at most `timeout_s` seconds from the send; a
  // worker that dies or runs out of time is killed and reaped, and the next send starts another.
  // Throws std::runtime_error when the runner itself fails (the worker reports a harness error,
  // the library cannot be opened, the program is missing).
  struct Outcome {
    std::optional<CallRecord> record;
    WorkerDeath death;  // when there is no record
  };
  Outcome receive(double timeout_s);

  int starts() const { return starts_; }  // processes started so far

 private:
  void start();
  WorkerDeath reap(bool timed_out, double timeout_s);
  std::string library_file_;
  pid_t pid_ = -1;
  int fd_ = -1;
  wire::FrameReader reader_;
  int starts_ = 0;
  std::uint64_t sequence_ = 0;
  std::int64_t sent_ms_ = 0;
  std::optional<WorkerDeath> early_death_;  // died before the request could be sent
};

// The ssd-kernel-worker program: $SSD_KERNEL_WORKER, else next to the running program, else the
// build tree's, else the installed one. Throws std::runtime_error when none exists.
std::string worker_program();

}  // namespace ssd
