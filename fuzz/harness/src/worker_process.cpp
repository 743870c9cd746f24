// Starting, feeding, timing and burying worker processes.
#include "worker_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace ssd {
namespace {

constexpr const char* kWorkerName = "ssd-kernel-worker";
// Opening a library (a CUDA one initialises its context before saying hello) may take a while;
// the case's own time limit starts only once the worker is ready.
constexpr std::int64_t kStartupMs = 120'000;
// How long a worker that closed its connection gets to exit on its own before it is killed.
constexpr std::int64_t kExitGraceMs = 2'000;
// exec failed in the child: a runner problem, not a kernel's.
constexpr int kExecFailed = 127;

bool executable(const std::filesystem::path& p) { return !p.empty() && access(p.c_str(), X_OK) == 0; }

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* text = strsignal(sig);
  return "signal " + std::to_string(sig) + " (" + (abbrev ? "SIG" + std::string(abbrev) : std::string("?")) +
         (text ? ": " + std::string(text) : std::string()) + ")";
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}

// This process's environment, plus OMP_WAIT_POLICY=passive unless the user chose how OpenMP
// waits. The worker shares the cores with this process's oracle, and GNU OpenMP spins for a while
// after each parallel region by default: in the worker that spinning took CPU time the oracle
// needed (small cases on two busy cores ran up to 7 % faster isolated without it). Where the
// kernel's threads wait changes nothing it computes.
std::vector<std::string> worker_environment() {
  std::vector<std::string> env;
  bool chosen = false;
  for (char** e = environ; *e != nullptr; ++e) {
    env.emplace_back(*e);
    chosen = chosen || env.back().starts_with("OMP_WAIT_POLICY=") || env.back().starts_with("GOMP_SPINCOUNT=");
  }
  if (!chosen) env.emplace_back("OMP_WAIT_POLICY=passive");
  return env;
}

}  // namespace

std::string worker_program() {
  if (const char* env = std::getenv("SSD_KERNEL_WORKER"); env && *env) {
    if (!executable(env)) throw std::runtime_error(std::string("SSD_KERNEL_WORKER=") + env + " is not an executable");
    return env;
  }
  std::vector<std::filesystem::path> candidates;
  std::error_code ignored;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ignored);
  if (!self.empty()) candidates.push_back(self.parent_path() / kWorkerName);
#ifdef SSD_BUILD_WORKER
  candidates.emplace_back(SSD_BUILD_WORKER);
#endif
#ifdef SSD_INSTALL_WORKER
  candidates.emplace_back(SSD_INSTALL_WORKER);
#endif
  for (const auto& c : candidates)
    if (executable(c)) return c.string();
  throw std::runtime_error(std::string(kWorkerName) +
                           " not found (set SSD_KERNEL_WORKER, or run kernels in process with --isolation none)");
}

WorkerProcess::WorkerProcess(std::string library_file) : library_file_(std::move(library_file)) {}

WorkerProcess::~WorkerProcess() {
  // Closing the connection tells the worker to exit; calls still queued are wanted by no one,
  // and the worker is killed rather than left to run them.
  if (pid_ > 0) reap(!queue_.empty(), 0);
}

void WorkerProcess::start() {
  const std::string program = worker_program();
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw std::runtime_error(std::string("socketpair: ") + std::strerror(errno));
  // Everything the child needs is built before fork: between fork and exec it may only make
  // async-signal-safe calls (the parent may have other threads, e.g. OpenMP's).
  const std::string fd_text = std::to_string(sv[1]);
  std::vector<std::string> environment = worker_environment();
  std::vector<char*> envp;
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<char*> argv = {const_cast<char*>(program.c_str()), const_cast<char*>("--fd"), const_cast<char*>(fd_text.c_str()),
                             const_cast<char*>("--kernels"), const_cast<char*>(library_file_.c_str()), nullptr};
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(sv[0]);
    close(sv[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    fcntl(sv[1], F_SETFD, 0);  // the worker's end survives exec
    dup2(2, 1);                // a kernel's prints must not garble the runner's report on stdout
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // a hung worker dies with its runner
    if (getppid() != parent) _exit(kExecFailed);
    execve(argv[0], argv.data(), envp.data());
    _exit(kExecFailed);
  }
  close(sv[1]);
  pid_ = pid;
  fd_ = sv[0];
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);  // reads wait in poll, under a deadline
  reader_ = wire::FrameReader(fd_);
  broken_ = false;
  ++starts_;
  std::vector<std::uint8_t> payload;
  switch (reader_.read(wire::now_ms() + kStartupMs, payload)) {
    case wire::ReadOutcome::frame: {
      const wire::Hello hello = wire::decode_hello(payload);
      if (hello.ok) return;
      reap(false, 0);
      throw std::runtime_error("worker could not open the kernel library: " + hello.message);
    }
    case wire::ReadOutcome::eof: {
      WorkerDeath death = reap(false, 0);
      if (death.exit_status == kExecFailed)
        throw std::runtime_error(std::string("could not start ") + program + " (exit status 127)");
      death.message = "while opening the kernel library, " + death.message;
      early_death_ = death;
      return;
    }
    case wire::ReadOutcome::timeout:
      early_death_ = reap(true, static_cast<double>(kStartupMs) / 1000);
      early_death_->message = "the worker did not open the kernel library within " +
                              seconds_text(static_cast<double>(kStartupMs) / 1000);
      return;
  }
}

void WorkerProcess::send(wire::Request request, double timeout_s) {
  request.sequence = ++sequence_;
  queue_.push_back(Sent{request.sequence, wire::encode(request), timeout_s, std::nullopt});
  try {
    deliver(queue_.back());
  } catch (...) {
    queue_.pop_back();  // never sent: the caller has no request to receive
    throw;
  }
  forget_running_frame();
}

void WorkerProcess::deliver(Sent& sent) {
  if (pid_ < 0) {
    early_death_.reset();
    start();
    if (early_death_) {
      sent.death = std::move(early_death_);
      early_death_.reset();
      return;
    }
  }
  if (&sent == &queue_.front()) front_since_ms_ = wire::now_ms();
  // A worker that stopped reading is dead or dying: reading its end of the connection says how,
  // for the oldest request, and the rest go to the next worker.
  if (!broken_ && !wire::write_frame(fd_, sent.frame, &reader_)) broken_ = true;
}

void WorkerProcess::requeue() {
  for (Sent& sent : queue_)
    if (!sent.death) deliver(sent);
}

void WorkerProcess::forget_running_frame() {
  // The oldest request is the one the worker runs (or its death is decided): it is never sent
  // again, and a huge case's encoded inputs need not be held while the oracle runs.
  if (!queue_.empty() && !queue_.front().frame.empty()) std::vector<std::uint8_t>().swap(queue_.front().frame);
}

WorkerProcess::Outcome WorkerProcess::receive() {
  if (queue_.empty()) throw std::logic_error("WorkerProcess::receive with no request pending");
  std::string harness_error;
  Outcome outcome = take_front(harness_error);
  queue_.pop_front();
  front_since_ms_ = wire::now_ms();  // the worker goes on to the next request now
  // The worker is gone (dead, killed, or retired after a device error) with requests it never
  // started: a new one takes them.
  if (pid_ < 0 && !queue_.empty()) requeue();
  forget_running_frame();
  if (!harness_error.empty()) throw std::runtime_error("kernel worker: " + harness_error);
  return outcome;
}

WorkerProcess::Outcome WorkerProcess::take_front(std::string& harness_error) {
  const Sent& front = queue_.front();
  if (front.death) return {std::nullopt, *front.death};
  const std::int64_t deadline = front_since_ms_ + static_cast<std::int64_t>(std::ceil(front.timeout_s * 1000));
  std::vector<std::uint8_t> payload;
  for (;;) {
    switch (reader_.read(deadline, payload)) {
      case wire::ReadOutcome::eof: return {std::nullopt, reap(false, front.timeout_s)};
      case wire::ReadOutcome::timeout: return {std::nullopt, reap(true, front.timeout_s)};
      case wire::ReadOutcome::frame: break;
    }
    wire::Reply reply = wire::decode_reply(payload);
    if (reply.sequence != front.sequence) continue;  // not a reply to this request: ignored
    if (reply.retiring) reap(false, 0);              // it exits by itself; a new one takes what is queued
    harness_error = std::move(reply.harness_error);
    return {std::move(reply.record), {}};
  }
}

WorkerDeath WorkerProcess::reap(bool timed_out, double timeout_s) {
  if (timed_out) kill(pid_, SIGKILL);
  close(fd_);
  int status = 0;
  bool killed_by_us = timed_out;
  // A worker that closed the connection is exiting; one that does not within the grace period
  // stopped answering for another reason and is killed.
  for (const std::int64_t until = wire::now_ms() + kExitGraceMs;;) {
    const pid_t done = waitpid(pid_, &status, killed_by_us ? 0 : WNOHANG);
    if (done == pid_ || (done < 0 && errno != EINTR)) break;
    if (done == 0 && wire::now_ms() >= until) {
      kill(pid_, SIGKILL);
      killed_by_us = true;
    } else if (done == 0) {
      usleep(2000);
    }
  }
  pid_ = -1;
  fd_ = -1;
  WorkerDeath d;
  if (timed_out) {
    d.verdict = Verdict::timeout;
    d.message = "the kernel call was still running after " + seconds_text(timeout_s) +
                " (--case-timeout); its process was killed";
  } else if (killed_by_us) {
    d.message = "the worker closed its connection during the kernel call and did not exit; it was killed";
  } else if (WIFSIGNALED(status)) {
    d.message = "the kernel call killed its process with " + signal_text(WTERMSIG(status));
  } else {
    d.exit_status = WEXITSTATUS(status);
    d.message = "the process exited with status " + std::to_string(WEXITSTATUS(status)) +
                " during the kernel call (exit or _exit inside the kernel)";
  }
  return d;
}

}  // namespace ssd
