// recurrent +tie's per-head parameters as stride-0 views (contract §1.1, "Input views"): their
// buffers hold one value per head, the honest emulation passes them, a kernel that indexes them as
// dense arrays (params_assumed_dense) fails them, and an input that is not constant along a
// stride-0 axis is refused rather than laid out wrong.
#include <gtest/gtest.h>

#include <cstring>

#include "ssd/harness/kernel_library.h"
#include "ssd/harness/runner.h"
#include "ssd/harness/view_buffer.h"
#include "ssd/reference/abi_views.h"
#include "ssd/reference/layout.h"
#include "runner_helpers.h"

namespace {

// h2 p2 n4: A [2,2,4] and dt_bias [2,2] from buffers of 2 values each. Read as dense, A's 16
// elements reach 56 bytes past its 8, inside the 256-byte guard band after it (NaN patterns).
const char* kCase = "recurrent:f32 b2 h2 p2 g1 n4 +dt_bias +softplus +tie layout=zxbcdt seed=3";

using ssd_test::view_buffer_of;

TEST(ExpandedParameters, BufferHoldsOneValuePerHead) {
  const ssd::Problem p = ssd::parse_problem(kCase);
  const ssd::KernelLibrary honest = ssd::KernelLibrary::open("emulation");
  ssd::MemoryPool pool{honest.table()};
  const ssd::InputSet in = ssd::make_inputs(p);
  const std::vector<ssd::RawTensor> raw = ssd::encode_inputs(in);
  const auto a = view_buffer_of(pool, p, raw, "A");
  ASSERT_TRUE(a);
  const ssd_tensor v = a->view("A");
  EXPECT_EQ(v.strides[0], 1);
  EXPECT_EQ(v.strides[1], 0);
  EXPECT_EQ(v.strides[2], 0);
  // Element h of the buffer is A[h, p, n] for every (p, n): A[0,0,0] and A[1,0,0] of the input.
  float heads[2];
  std::memcpy(heads, v.data, sizeof heads);
  EXPECT_EQ(heads[0], static_cast<float>(in.at("A").at({0, 0, 0})));
  EXPECT_EQ(heads[1], static_cast<float>(in.at("A").at({1, 0, 0})));
  EXPECT_EQ(ssd::tensor_from_view(v, "recurrent", "A").values(), in.at("A").values());
  EXPECT_TRUE(a->damage().empty());
}

TEST(ExpandedParameters, HonestEmulationPassesAndTheDenseReaderFails) {
  const ssd::Problem p = ssd::parse_problem(kCase);
  ssd::Problem contiguous = p;
  contiguous.layout = ssd::Layout::contiguous;
  const ssd::KernelLibrary honest = ssd::KernelLibrary::open("emulation");
  const ssd::KernelLibrary mutant = ssd::KernelLibrary::open("mutant-params_assumed_dense");
  const ssd::CaseJudgement ok = ssd::check_case(honest, p);
  EXPECT_EQ(ok.verdict, ssd::Verdict::passed) << ssd::describe(ok);
  // The mutant's indexing is right for dense parameters: it fails only for the views.
  const ssd::CaseJudgement dense = ssd::check_case(mutant, contiguous);
  EXPECT_EQ(dense.verdict, ssd::Verdict::passed) << ssd::describe(dense);
  const ssd::CaseJudgement caught = ssd::check_case(mutant, p);
  EXPECT_TRUE(caught.verdict == ssd::Verdict::failed || caught.verdict == ssd::Verdict::crashed) << ssd::describe(caught);
}

TEST(ExpandedParameters, AnInputNotConstantAlongAZeroStrideIsRefused) {
  const ssd::Problem p = ssd::parse_problem(kCase);
  const ssd::KernelLibrary honest = ssd::KernelLibrary::open("emulation");
  ssd::MemoryPool pool{honest.table()};
  ssd::InputSet in = ssd::make_inputs(p);
  ssd::Tensor A = in.at("A");
  A.set(1, A[1] + 1.0);  // A[0,0,1] no longer equals A[0,0,0]
  in.put("A", A);
  const std::vector<ssd::RawTensor> raw = ssd::encode_inputs(in);
  try {
    view_buffer_of(pool, p, raw, "A");
    ADD_FAILURE() << "a non-constant A was laid out";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("input A is not constant along the stride-0 axes"), std::string::npos) << e.what();
  }
}

}  // namespace
