// Every planted-bug library, loaded from its shared object through the kernel ABI, is FAILED (or
// VARIANT) or SUSPECT on the smoke problems, while the honest emulation passes them all. Prints the flaw x op
// table (FAILED cases, and SUSPECT ones after a '+').
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "ssd/emulation/emulation.h"
#include "ssd/reference/errors.h"
#include "ssd/harness/runner.h"

namespace {

// Every planted flaw the emulation knows; each must have its kernel library.
std::vector<std::string> flaws() {
  std::vector<std::string> list;
  for (ssd::Flaw f : ssd::kAllFlaws) list.emplace_back(ssd::flaw_name(f));
  return list;
}

// FAILED and SUSPECT cases per op over the smoke problems.
std::vector<std::pair<int, int>> failures_per_op(const ssd::KernelLibrary& library) {
  std::vector<std::pair<int, int>> caught;
  for (ssd::Op op : ssd::kAllOps) {
    int failed = 0, suspect = 0;
    for (const ssd::Problem& p : ssd::op_spec(op).smoke()) {
      const ssd::Verdict v = ssd::check_case(library, p).verdict;
      failed += ssd::is_failure(v) ? 1 : 0;  // FAILED, or VARIANT (packing invariance)
      suspect += v == ssd::Verdict::suspect ? 1 : 0;
    }
    caught.emplace_back(failed, suspect);
  }
  return caught;
}

TEST(Mutants, HonestEmulationPassesEverySmokeProblem) {
  for (const char* variant : {"emulation", "emulation-blocked"}) {
    const ssd::KernelLibrary honest = ssd::KernelLibrary::open(variant);
    for (ssd::Op op : ssd::kAllOps)
      for (const ssd::Problem& p : ssd::op_spec(op).smoke()) {
        const ssd::CaseJudgement j = ssd::check_case(honest, p);
        EXPECT_EQ(j.verdict, ssd::Verdict::passed) << variant << ": " << ssd::describe(j);
      }
  }
}

TEST(Mutants, EveryPlantedBugIsCaughtOnTheSmokeProblems) {
  std::printf("%-24s", "flaw \\ FAILED smoke cases");
  for (ssd::Op op : ssd::kAllOps) std::printf(" %9.9s", std::string(ssd::op_name(op)).c_str());
  std::printf("\n");
  const auto list = flaws();
  ASSERT_GE(list.size(), 12u);
  for (const std::string& flaw : list) {
    const ssd::KernelLibrary mutant = ssd::KernelLibrary::open("mutant-" + flaw);
    EXPECT_EQ(std::string(mutant.table().name), "mutant-" + flaw);
    const auto caught = failures_per_op(mutant);
    int total = 0;
    std::printf("%-24s", flaw.c_str());
    for (const auto& [failed, suspect] : caught) {
      if (suspect > 0) std::printf(" %6d+%-2d", failed, suspect);
      else std::printf(" %9d", failed);
      total += failed + suspect;
    }
    std::printf("\n");
    EXPECT_GT(total, 0) << "mutant " << flaw << " passed every smoke problem";
  }
}

TEST(Mutants, LoaderRejectsWhatIsNotAKernelLibrary) {
  EXPECT_THROW(ssd::KernelLibrary::open("/nonexistent/libnothing.so"), ssd::ArgumentError);
  EXPECT_THROW(ssd::KernelLibrary::open("no-such-table"), ssd::ArgumentError);
  // A shared object without the table symbol.
  EXPECT_THROW(ssd::KernelLibrary::open("libm.so.6"), ssd::ArgumentError);
}

}  // namespace

namespace {

// A case outside the contract is INVALID when the kernel rejects it (and FAILED if accepted).
TEST(Verdicts, InvalidCasesMustBeRejected) {
  const ssd::KernelLibrary honest = ssd::KernelLibrary::open("emulation");
  for (const char* line : {"mamba2:f32 b1 s8 h3 p2 g2 n2 q4 seed=1",              // H % G != 0
                           "chunk_scan:f32 b1 s8 h4 p2 g3 n2 q4 seed=1",          // H % G != 0
                           "mamba2:f32 b1 s8 h2 p2 g1 n2 q4 seq=0:3,3 seed=1"}) { // runs cover 6 of 8 tokens
    const ssd::CaseJudgement j = ssd::check_case(honest, ssd::parse_problem(line));
    EXPECT_EQ(j.verdict, ssd::Verdict::invalid) << line << ": " << j.message;
    EXPECT_NE(j.message.find("rejected"), std::string::npos) << line << ": " << j.message;
  }
}

}  // namespace
