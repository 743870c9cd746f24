// The runner's side of a worker process: started on demand (fork and exec of ssd-kernel-worker,
// which opens the kernel library itself, so no CUDA or OpenMP state crosses a fork), sent cases
// that it answers one at a time and in order (the runner may queue the next before the last is
// answered, so the worker never waits on the runner), and replaced when a call kills it, outlives
// its time, or leaves the device in an error state.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <deque>
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

  // Queues the request behind those not yet answered, starting a worker if none is running. Its
  // call may run `timeout_s` seconds, counted from when the worker can start it: the send, or
  // the receipt of the reply before it. A worker that dies while opening the library makes that
  // the request's outcome.
  void send(wire::Request request, double timeout_s);
  // The outcome of the oldest request not yet answered. The worker runs requests strictly in
  // order, so a death (CRASHED) or a time limit passed (TIMEOUT) belongs to that request: the
  // worker is killed and reaped, and the requests queued behind it, which it never started, go
  // to a new worker. Throws std::runtime_error when the runner itself fails (the worker reports
  // a harness error, the library cannot be opened, the program is missing).
  struct Outcome {
    std::optional<CallRecord> record;
    WorkerDeath death;  // when there is no record
  };
  Outcome receive();
  std::size_t pending() const { return queue_.size(); }  // requests sent and not yet answered

  int starts() const { return starts_; }  // processes started so far

 private:
  struct Sent {
    std::uint64_t sequence = 0;
    std::vector<std::uint8_t> frame;  // kept until answered: a new worker is sent it again
    double timeout_s = 0;
    std::optional<WorkerDeath> death;  // settled without an answer (the worker died opening the library)
  };
  void start();
  void deliver(Sent& sent);  // to the running worker, starting one when there is none
  void requeue();            // every unanswered request, to a new worker
  Outcome take_front(std::string& harness_error);  // the oldest request's, waiting under its time limit
  void forget_running_frame();
  WorkerDeath reap(bool timed_out, double timeout_s);
  std::string library_file_;
  pid_t pid_ = -1;
  int fd_ = -1;
  bool broken_ = false;  // a write failed: the worker is gone, its death comes to the oldest request
  wire::FrameReader reader_;
  int starts_ = 0;
  std::uint64_t sequence_ = 0;
  std::deque<Sent> queue_;       // sent and not yet answered, oldest first
  std::int64_t front_since_ms_ = 0;  // when the oldest could start running (its time limit counts from here)
  std::optional<WorkerDeath> early_death_;  // start(): died before it could take a request
};

// The ssd-kernel-worker program: $SSD_KERNEL_WORKER, else next to the running program, else the
// build tree's, else the installed one. Throws std::runtime_error when none exists.
std::string worker_program();

}  // namespace ssd
