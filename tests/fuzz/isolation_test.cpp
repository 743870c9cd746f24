// The runner against the planted libraries (tests/fuzz/planted): a kernel that crashes, exits,
// hangs, writes outside its buffers, leaves outputs unwritten, changes an input or returns NaN gets
// its own verdict and a message naming the argument; the checker then goes on with a fresh worker;
// and the honest emulation gets the same verdicts isolated as in process.
#include <gtest/gtest.h>

#include <chrono>
#include <ostream>
#include <string>

#include "ssd/harness/case_checker.h"
#include "planted_cases.h"
#include "ssd/reference/errors.h"

namespace ssd {
// Found by GoogleTest through the argument's namespace: "process" rather than the enum's bytes.
void PrintTo(Isolation isolation, std::ostream* os) { *os << isolation_name(isolation); }
}  // namespace ssd

namespace {

using ssd::CaseJudgement;
using ssd::Verdict;

using namespace planted_cases;

CaseJudgement check(const ssd::KernelLibrary& library, const ssd::Problem& p, ssd::Isolation isolation) {
  return ssd::CaseChecker(library, {isolation, std::nullopt}).check(p);
}

// A crash is CRASHED with its signal, and the next case runs in a new worker and passes.
void expect_crash(const std::string& flaw, const std::string& how) {
  const ssd::KernelLibrary library = planted(flaw);
  ssd::CaseChecker checker(library);
  const CaseJudgement crashed = checker.check(kCumsum);
  EXPECT_EQ(crashed.verdict, Verdict::crashed) << ssd::describe(crashed);
  EXPECT_TRUE(has(crashed.message, how)) << crashed.message;
  EXPECT_TRUE(has(ssd::describe(crashed), "CRASHED")) << ssd::describe(crashed);
  EXPECT_TRUE(has(ssd::describe(crashed), "repro: " + ssd::to_string(kCumsum))) << ssd::describe(crashed);
  const CaseJudgement next = checker.check(kState);
  EXPECT_EQ(next.verdict, Verdict::passed) << ssd::describe(next);
  EXPECT_EQ(checker.worker_starts(), 2);
}

// AddressSanitizer catches a segfault itself, prints its report and exits with status 1.
#if defined(__SANITIZE_ADDRESS__)
TEST(Isolation, SegfaultIsCrashedWithItsSignal) { expect_crash("segv", "exited with status 1 during the kernel call"); }
#else
TEST(Isolation, SegfaultIsCrashedWithItsSignal) { expect_crash("segv", "signal 11 (SIGSEGV"); }
#endif
TEST(Isolation, AbortIsCrashedWithItsSignal) { expect_crash("abort_call", "signal 6 (SIGABRT"); }
TEST(Isolation, ExitInsideTheKernelIsCrashed) { expect_crash("exit_call", "exited with status 0 during the kernel call"); }

TEST(Isolation, HangIsTimeoutAfterTheCaseTimeout) {
  const ssd::KernelLibrary library = planted("hang");
  ssd::CaseChecker checker(library, {ssd::Isolation::process, 0.5});
  const auto start = std::chrono::steady_clock::now();
  const CaseJudgement hung = checker.check(kCumsum);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(hung.verdict, Verdict::timeout) << ssd::describe(hung);
  EXPECT_TRUE(has(hung.message, "still running after 0.5 s")) << hung.message;
  EXPECT_GE(seconds, 0.5);
  EXPECT_LT(seconds, 5.0);
  const CaseJudgement next = checker.check(kState);
  EXPECT_EQ(next.verdict, Verdict::passed) << ssd::describe(next);
}

TEST(Isolation, DefaultTimeoutGrowsWithTheCase) {
  const double small = ssd::default_case_timeout(kCumsum);
  EXPECT_GE(small, 5.0);
  EXPECT_LT(small, 6.0);
  const ssd::Problem large = ssd::parse_problem("mamba2:f32 b8 s8192 h32 p64 g1 n128 q256 seed=1");
  EXPECT_GT(ssd::default_case_timeout(large), 100.0);
}

// Memory findings, in both isolation modes and for host and (emulated) device memory.
struct MemoryCase {
  std::string flaw;
  const ssd::Problem* problem;
  std::string message;
};

// Names the case in test listings (GoogleTest would print the struct's bytes).
void PrintTo(const MemoryCase& c, std::ostream* os) { *os << c.flaw << " on " << ssd::to_string(*c.problem); }

class Memory : public ::testing::TestWithParam<std::tuple<MemoryCase, ssd::Isolation>> {};

TEST_P(Memory, FailsNamingTheArgument) {
  const auto& [c, isolation] = GetParam();
  const CaseJudgement j = check(planted(c.flaw), *c.problem, isolation);
  EXPECT_EQ(j.verdict, Verdict::failed) << ssd::describe(j);
  EXPECT_TRUE(has(j.message, c.message)) << ssd::describe(j);
}

const std::string kX1 = "input modified: x" + ssd::index_string({2, 37, 4, 4}, 1) + " changed by the call";

INSTANTIATE_TEST_SUITE_P(
    Planted, Memory,
    ::testing::Combine(
        ::testing::Values(MemoryCase{"overrun", &kPassing, "wrote past the end of out (4 of "},
                          MemoryCase{"overrun", &kPassingBf16, "wrote past the end of out (2 of "},
                          MemoryCase{"underrun", &kPassing, "wrote before the start of final_states (4 of 256"},
                          MemoryCase{"unwritten", &kCumsum, "never written: dt_out[0,0,2,5] (and 65 more of 288 defined elements)"},
                          MemoryCase{"input_modified", &kState, kX1},
                          MemoryCase{"device-overrun", &kPassing, "wrote past the end of out (4 of "},
                          MemoryCase{"device-underrun", &kPassing, "wrote before the start of final_states"},
                          MemoryCase{"device-unwritten", &kCumsum, "never written: dt_out[0,0,2,5]"},
                          MemoryCase{"device-input_modified", &kState, kX1}),
        ::testing::Values(ssd::Isolation::process, ssd::Isolation::none)),
    [](const auto& param_info) {
      std::string name = std::get<0>(param_info.param).flaw + "_" + std::to_string(param_info.index) + "_" +
                         std::string(ssd::isolation_name(std::get<1>(param_info.param)));
      for (char& c : name)
        if (c == '-') c = '_';
      return name;
    });

TEST(Memory, UnwrittenElementsOutsideTheContractPass) {
  // The unwritten library leaves only the padded tail; without a tail it writes everything.
  EXPECT_EQ(check(planted("unwritten"), kCumsumWhole, ssd::Isolation::process).verdict, Verdict::passed);
  // The upper triangle of a causal coupling is undefined: left as poison, it is no failure.
  for (ssd::Isolation isolation : {ssd::Isolation::process, ssd::Isolation::none}) {
    const CaseJudgement j = check(planted("undefined_skipped"), kCausal, isolation);
    EXPECT_EQ(j.verdict, Verdict::passed) << ssd::describe(j);
  }
}

TEST(Memory, NanIsNotFiniteWithInfiniteR) {
  const CaseJudgement j = check(planted("nan"), kCoupling, ssd::Isolation::process);
  ASSERT_EQ(j.verdict, Verdict::failed) << ssd::describe(j);
  ASSERT_EQ(j.outputs.size(), 1u);
  EXPECT_EQ(j.outputs[0].not_finite, 1);
  const std::string text = ssd::describe(j);
  EXPECT_TRUE(has(text, "FAILED     max r inf (CB inf)")) << text;
  EXPECT_TRUE(has(text, "r inf  not finite")) << text;
  EXPECT_FALSE(has(text, "max r 0")) << text;
}

TEST(Isolation, StickyDeviceErrorRestartsTheWorker) {
  const ssd::KernelLibrary library = planted("device-sticky_error");
  ssd::CaseChecker checker(library);
  const CaseJudgement failed = checker.check(kCumsum);
  EXPECT_EQ(failed.verdict, Verdict::failed) << ssd::describe(failed);
  EXPECT_TRUE(has(failed.message, "error: planted: illegal memory access")) << failed.message;
  // The worker that saw the error is gone: the next case starts another and passes.
  const CaseJudgement next = checker.check(kState);
  EXPECT_EQ(next.verdict, Verdict::passed) << ssd::describe(next);
  EXPECT_EQ(checker.worker_starts(), 2);
}

TEST(Isolation, HonestEmulationSameVerdictsInOneWorker) {
  const ssd::KernelLibrary honest = ssd::KernelLibrary::open("emulation");
  ssd::CaseChecker isolated(honest);
  ssd::CaseChecker in_process(honest, {ssd::Isolation::none, std::nullopt});
  for (ssd::Op op : ssd::kAllOps)
    for (const ssd::Problem& p : ssd::op_spec(op).smoke()) {
      const CaseJudgement a = isolated.check(p), b = in_process.check(p);
      EXPECT_EQ(a.verdict, Verdict::passed) << ssd::describe(a);
      EXPECT_EQ(ssd::describe(a), ssd::describe(b));
    }
  // An invalid case goes to the worker too, and is rejected there.
  const CaseJudgement invalid = isolated.check(ssd::parse_problem("mamba2:f32 b1 s8 h3 p2 g2 n2 q4 seed=1"));
  EXPECT_EQ(invalid.verdict, Verdict::invalid) << invalid.message;
  EXPECT_TRUE(has(invalid.message, "rejected")) << invalid.message;
  // A layout that cannot hold (an f32 dt in the bf16 buffer of x) has no views to hand over:
  // INVALID with its reason in both modes, without a kernel call.
  const ssd::Problem unlaid = ssd::parse_problem("mamba2:bf16 b1 s5 h2 p4 g1 n4 q16 +softplus layout=zxbcdt seed=5");
  for (ssd::CaseChecker* checker : {&isolated, &in_process}) {
    const CaseJudgement j = checker->check(unlaid);
    EXPECT_EQ(j.verdict, Verdict::invalid) << j.message;
    EXPECT_TRUE(has(j.message, "dt is f32, x bf16")) << j.message;
  }
  // S = 300 with Q = 200 for discretize_segsum, whose tensors are [b, c, Q, ...]: nothing a kernel
  // is handed shows S, so the case is INVALID with its reason, without a call (not "accepted a case
  // outside the contract"). With H % G broken too, or an int32 dt, that reason shows and the kernel is called.
  const ssd::Problem ragged = ssd::parse_problem("discretize_segsum:f16 b1 s300 q200 h16 p8 g1 n64 seed=7");
  for (ssd::CaseChecker* checker : {&isolated, &in_process}) {
    const CaseJudgement j = checker->check(ragged);
    EXPECT_EQ(j.verdict, Verdict::invalid) << j.message;
    EXPECT_TRUE(has(j.message, "S must be a multiple of Q")) << j.message;
  }
  EXPECT_EQ(isolated.worker_starts(), 1);
  for (const char* visible : {"discretize_segsum:f16 b1 s300 q200 h16 p8 g3 n64 seed=7",
                              "discretize_segsum:f16 b1 s300 q200 h16 p8 g1 n64 dt=i32 seed=7"}) {
    const CaseJudgement both = isolated.check(ssd::parse_problem(visible));
    EXPECT_EQ(both.verdict, Verdict::invalid) << both.message;
    EXPECT_TRUE(has(both.message, "rejected")) << visible << ": " << both.message;
  }
}

TEST(Isolation, OptionsAreParsedAndChecked) {
  EXPECT_EQ(ssd::parse_isolation("none"), ssd::Isolation::none);
  EXPECT_EQ(ssd::parse_isolation("process"), ssd::Isolation::process);
  EXPECT_THROW(ssd::parse_isolation("thread"), ssd::ArgumentError);
  // A table that was not loaded from a file cannot be opened by a worker.
  const ssd::KernelLibrary honest = ssd::KernelLibrary::open("emulation");
  const ssd::KernelLibrary wrapped = ssd::KernelLibrary::from_table(&honest.table(), "in memory");
  EXPECT_THROW(ssd::CaseChecker checker(wrapped), ssd::ArgumentError);
  EXPECT_NO_THROW(ssd::CaseChecker checker(wrapped, {ssd::Isolation::none, std::nullopt}));
}

}  // namespace
