// Declared TF32 dot products (dots=tf32): the bound grows by exactly the operand roundings it
// charges, the honest TF32 emulation passes under it and fails under IEEE, and the token is only
// taken by the ops with dot products.
#include <gtest/gtest.h>

#include <cmath>

#include "ssd/harness/runner.h"
#include "ssd/reference/errors.h"
#include "ssd/reference/truth.h"

namespace {

// chunk_coupling in f32: CB[i][j] = sum_n C_in B_jn. Declared TF32 rounds both operands, each by
// less than 2^-10 relative, so the bound gains rounding * (2 * 2^-10) * S with S = sum_n |C_in||B_jn|,
// computed here by hand from the inputs.
TEST(Tf32Dots, CouplingBoundGainsTheTwoOperandRoundings) {
  const ssd::Problem ieee = ssd::parse_problem("chunk_coupling:f32 b1 s6 g1 n3 q3 seed=4");
  ssd::Problem tf32 = ieee;
  tf32.dots = ssd::DotPrecision::tf32;
  const ssd::InputSet in = ssd::make_inputs(ieee);
  const ssd::Tensor& C = in.at("C");
  const ssd::Tensor& B = in.at("B");
  const double rounding = ssd::op_spec(ssd::Op::chunk_coupling).output("CB").tolerance.rounding;
  const ssd::Truth truth_ieee = ssd::compute_truth(ieee, in), truth_tf32 = ssd::compute_truth(tf32, in);
  const ssd::Tensor& b_ieee = truth_ieee.bounds.get("CB").bound;
  const ssd::Tensor& b_tf32 = truth_tf32.bounds.get("CB").bound;
  // CB [1, 2 chunks, 1, 3, 3]; chunk c holds tokens 3c..3c+2.
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double S = 0;
        for (int n = 0; n < 3; ++n) S += std::fabs(C[(3 * c + i) * 3 + n]) * std::fabs(B[(3 * c + j) * 3 + n]);
        const int flat = (c * 3 + i) * 3 + j;
        EXPECT_NEAR(b_tf32[flat] - b_ieee[flat], rounding * 2 * 0x1p-10 * S, 1e-12 * S) << "c " << c << " i " << i << " j " << j;
      }
}

// 16-bit operands are exact in TF32: the declaration changes nothing.
TEST(Tf32Dots, SixteenBitOperandsAreNotCharged) {
  const ssd::Problem ieee = ssd::parse_problem("chunk_scan:bf16 b1 s20 h2 p4 g1 n4 q8 seed=2");
  ssd::Problem tf32 = ieee;
  tf32.dots = ssd::DotPrecision::tf32;
  const ssd::InputSet in = ssd::make_inputs(ieee);
  EXPECT_EQ(ssd::compute_truth(ieee, in).bounds.get("out").bound.values(),
            ssd::compute_truth(tf32, in).bounds.get("out").bound.values());
}

// The honest TF32 emulation, judged as IEEE, fails the f32 cases of every op with dot products
// (an honest kernel run with TF32 must declare it), and passes them when the problem declares TF32.
TEST(Tf32Dots, TheTf32EmulationFailsUnderIeeeAndPassesUnderTf32) {
  // The library declares TF32 (ABI version 2); a copy of its table that declares nothing is judged as IEEE.
  const auto declared = ssd::KernelLibrary::open("emulation-tf32");
  EXPECT_EQ(declared.f32_dots(), ssd::DotPrecision::tf32);
  static ssd_kernel_table undeclared{};
  undeclared = declared.table();
  undeclared.f32_dot_precision = SSD_DOTS_IEEE;
  const auto library = ssd::KernelLibrary::from_table(&undeclared, "emulation-tf32, undeclared");
  for (const char* line : {"chunk_coupling:f32 b2 s40 g2 n16 q16 seed=1", "chunk_state:f32 b1 s40 h2 p8 g1 n16 q16 seed=1",
                           "chunk_scan:f32 b1 s40 h2 p8 g1 n16 q16 seed=1",
                           "mamba2:f32 b1 s40 h2 p8 g1 n16 q16 +softplus +init seed=1"}) {
    ssd::Problem p = ssd::parse_problem(line);
    EXPECT_EQ(ssd::check_case(library, p).verdict, ssd::Verdict::failed) << line;
    // Judged as it declares: the same problem string, dots=tf32 added by the declaration.
    const ssd::CaseJudgement as_declared = ssd::check_case(declared, p);
    EXPECT_EQ(as_declared.verdict, ssd::Verdict::passed) << ssd::describe(as_declared);
    EXPECT_NE(as_declared.problem.find("dots=tf32"), std::string::npos) << as_declared.problem;
    p.dots = ssd::DotPrecision::tf32;
    const ssd::CaseJudgement j = ssd::check_case(library, p);
    EXPECT_EQ(j.verdict, ssd::Verdict::passed) << ssd::describe(j);
    EXPECT_LE(j.max_r(), 0.5) << ssd::describe(j);
  }
}

// A version-1 table (it ends before f32_dot_precision) still loads and is judged as IEEE.
TEST(Tf32Dots, VersionOneTablesLoadAndDeclareNothing) {
  static const auto emulation = ssd::KernelLibrary::open("emulation");  // keeps the entries loaded
  static ssd_kernel_table v1{};
  v1 = emulation.table();
  v1.abi_version = 1;
  v1.f32_dot_precision = SSD_DOTS_TF32;  // beyond a version-1 table: must not be read
  const auto library = ssd::KernelLibrary::from_table(&v1, "version 1");
  EXPECT_EQ(library.f32_dots(), ssd::DotPrecision::ieee);
  EXPECT_EQ(ssd::check_case(library, ssd::parse_problem("chunk_scan:f32 b1 s16 h2 p4 g1 n4 q8 seed=1")).problem,
            "chunk_scan:f32 b1 s16 h2 p4 g1 n4 q8 seed=1");
  static ssd_kernel_table future{};
  future = v1;
  future.abi_version = SSD_KERNEL_ABI_VERSION + 1;  // newer than this runner
  EXPECT_THROW(ssd::KernelLibrary::from_table(&future, "a newer version"), ssd::ArgumentError);
}

TEST(Tf32Dots, TheTokenRoundTripsAndOnlyOpsWithDotsTakeIt) {
  const ssd::Problem p = ssd::parse_problem("chunk_state:f32 b1 s8 h2 p2 g1 n2 q4 dots=tf32 seed=1");
  EXPECT_EQ(p.dots, ssd::DotPrecision::tf32);
  EXPECT_EQ(ssd::to_string(p), "chunk_state:f32 b1 s8 h2 p2 g1 n2 q4 dots=tf32 seed=1");
  EXPECT_EQ(ssd::to_string(ssd::parse_problem("chunk_state:f32 b1 s8 h2 p2 g1 n2 q4 dots=ieee seed=1")),
            "chunk_state:f32 b1 s8 h2 p2 g1 n2 q4 seed=1");
  EXPECT_THROW(ssd::parse_problem("chunk_cumsum:f32 b1 s8 h2 q4 dots=tf32 seed=1"), ssd::ArgumentError);
  EXPECT_THROW(ssd::parse_problem("chunk_state:f32 b1 s8 h2 p2 g1 n2 q4 dots=bf16 seed=1"), ssd::ArgumentError);
}

}  // namespace
