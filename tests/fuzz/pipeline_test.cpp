// The checker with the next case's call queued in the worker: judgements come back for the case
// asked about, in order; a crash or a hang is charged to the case that was running, never to the
// one queued behind it, which then runs in a new worker; a queued call that is not wanted after
// all is dropped without its end being charged to anyone.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "planted_cases.h"
#include "ssd/harness/case_checker.h"

namespace {

using ssd::CaseJudgement;
using ssd::Verdict;

using namespace planted_cases;  // the planted libraries misbehave in chunk_cumsum only

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(Pipeline, CrashIsChargedToTheRunningCaseNotTheQueuedOne) {
  const ssd::KernelLibrary library = planted("segv");
  ssd::CaseChecker checker(library);
  const CaseJudgement crashed = checker.check(kCumsum, &kState);  // kState waits behind the crash
  EXPECT_EQ(crashed.verdict, Verdict::crashed) << ssd::describe(crashed);
  EXPECT_EQ(crashed.problem, ssd::to_string(kCumsum));
  const CaseJudgement next = checker.check(kState);
  EXPECT_EQ(next.verdict, Verdict::passed) << ssd::describe(next);
  EXPECT_EQ(next.problem, ssd::to_string(kState));
  EXPECT_EQ(checker.worker_starts(), 2);  // the queued case ran in the second worker
}

TEST(Pipeline, CrashOfTheQueuedCaseIsItsOwn) {
  const ssd::KernelLibrary library = planted("segv");
  ssd::CaseChecker checker(library);
  const CaseJudgement first = checker.check(kState, &kCumsum);
  EXPECT_EQ(first.verdict, Verdict::passed) << ssd::describe(first);
  const CaseJudgement crashed = checker.check(kCumsum, &kCoupling);
  EXPECT_EQ(crashed.verdict, Verdict::crashed) << ssd::describe(crashed);
  EXPECT_EQ(crashed.problem, ssd::to_string(kCumsum));
  const CaseJudgement last = checker.check(kCoupling);
  EXPECT_EQ(last.verdict, Verdict::passed) << ssd::describe(last);
  EXPECT_EQ(checker.worker_starts(), 2);
}

TEST(Pipeline, HangIsChargedToTheRunningCaseAndTheQueuedOneRunsAfter) {
  const ssd::KernelLibrary library = planted("hang");
  ssd::CaseChecker checker(library, {ssd::Isolation::process, 0.5});
  const auto start = std::chrono::steady_clock::now();
  const CaseJudgement hung = checker.check(kCumsum, &kState);
  EXPECT_EQ(hung.verdict, Verdict::timeout) << ssd::describe(hung);
  EXPECT_TRUE(has(hung.message, "still running after 0.5 s")) << hung.message;
  const CaseJudgement next = checker.check(kState);
  const double seconds = seconds_since(start);
  EXPECT_EQ(next.verdict, Verdict::passed) << ssd::describe(next);
  EXPECT_GE(seconds, 0.5);
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(checker.worker_starts(), 2);
}

TEST(Pipeline, DroppedQueuedCrashIsChargedToNobody) {
  const ssd::KernelLibrary library = planted("segv");
  ssd::CaseChecker checker(library);
  EXPECT_EQ(checker.check(kState, &kCumsum).verdict, Verdict::passed);
  // Not the queued case: the queued call (which crashes its worker) is waited out and dropped.
  const CaseJudgement other = checker.check(kCoupling);
  EXPECT_EQ(other.verdict, Verdict::passed) << ssd::describe(other);
  EXPECT_EQ(other.problem, ssd::to_string(kCoupling));
  EXPECT_EQ(checker.worker_starts(), 2);
}

TEST(Pipeline, DroppedQueuedHangIsChargedToNobody) {
  const ssd::KernelLibrary library = planted("hang");
  ssd::CaseChecker checker(library, {ssd::Isolation::process, 0.5});
  EXPECT_EQ(checker.check(kState, &kCumsum).verdict, Verdict::passed);
  const CaseJudgement other = checker.check(kCoupling);
  EXPECT_EQ(other.verdict, Verdict::passed) << ssd::describe(other);
  // run() (what a dump stores) drops a queued call too.
  EXPECT_EQ(checker.check(kState, &kCumsum).verdict, Verdict::passed);
  EXPECT_EQ(checker.run(kCoupling).status, ssd::CallStatus::ok);
}

TEST(Pipeline, StickyDeviceErrorRetiresTheWorkerAndTheQueuedCaseRunsInAnother) {
  const ssd::KernelLibrary library = planted("device-sticky_error");
  ssd::CaseChecker checker(library);
  const CaseJudgement failed = checker.check(kCumsum, &kState);
  EXPECT_EQ(failed.verdict, Verdict::failed) << ssd::describe(failed);
  EXPECT_TRUE(has(failed.message, "error: planted: illegal memory access")) << failed.message;
  const CaseJudgement next = checker.check(kState);
  EXPECT_EQ(next.verdict, Verdict::passed) << ssd::describe(next);
  EXPECT_EQ(checker.worker_starts(), 2);
}

// Every op's smoke problems, each checked with the following one queued: the same judgements, in
// the same order, as one by one in process, all from one worker.
TEST(Pipeline, JudgementsComeBackInOrderForTheCaseAskedAbout) {
  const ssd::KernelLibrary honest = ssd::KernelLibrary::open("emulation");
  std::vector<ssd::Problem> problems;
  for (ssd::Op op : ssd::kAllOps)
    for (const ssd::Problem& p : ssd::op_spec(op).smoke()) problems.push_back(p);
  problems.push_back(ssd::parse_problem("mamba2:f32 b1 s8 h3 p2 g2 n2 q4 seed=1"));  // INVALID, rejected in the worker
  ssd::CaseChecker isolated(honest);
  ssd::CaseChecker in_process(honest, {ssd::Isolation::none, std::nullopt});
  for (std::size_t i = 0; i < problems.size(); ++i) {
    const ssd::Problem* next = i + 1 < problems.size() ? &problems[i + 1] : nullptr;
    const CaseJudgement a = isolated.check(problems[i], next);
    const CaseJudgement b = in_process.check(problems[i]);
    EXPECT_EQ(a.problem, ssd::to_string(problems[i]));
    EXPECT_EQ(ssd::describe(a), ssd::describe(b));
    EXPECT_GE(isolated.last_case_seconds(), 0.0);
  }
  EXPECT_EQ(isolated.worker_starts(), 1);
}

}  // namespace
