// Strided input views through the harness: a view buffer holds each view's values where its
// strides say and poison in its gaps, reports a changed gap or view element by name, and the honest
// emulation's outputs are bit for bit those of the contiguous layout of the same problem.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstring>

#include "ssd/fuzz/generators.h"
#include "ssd/harness/kernel_library.h"
#include "ssd/harness/poison.h"
#include "ssd/harness/runner.h"
#include "ssd/harness/view_buffer.h"
#include "ssd/reference/abi_views.h"
#include "ssd/reference/layout.h"
#include "runner_helpers.h"

namespace {

bool contains(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& l : lines)
    if (l.find(part) != std::string::npos) return true;
  return false;
}

// The view buffer of one role of a strided problem, filled from the problem's inputs.
struct OneBuffer {
  ssd::Problem p;
  ssd::KernelLibrary honest = ssd::KernelLibrary::open("emulation");
  ssd::MemoryPool pool{honest.table()};
  std::vector<ssd::RawTensor> raw;
  std::unique_ptr<ssd::ViewBuffer> buffer;
  OneBuffer(const std::string& text, const std::string& name) : p(ssd::parse_problem(text)) {
    raw = ssd::encode_inputs(ssd::make_inputs(p));
    buffer = ssd_test::view_buffer_of(pool, p, raw, name);
  }
};

TEST(ViewBuffer, ViewsReadBackTheirValuesAndGapsHoldPoison) {
  OneBuffer b("mamba2:f32 b2 s3 h2 p2 g1 n2 q2 layout=zxbcdt seed=4", "zxbcdt");
  ASSERT_TRUE(b.buffer);
  for (const ssd::Placement& v : b.buffer->views()) {
    const ssd::Tensor back = ssd::tensor_from_view(b.buffer->view(v.role), "mamba2", v.role.c_str());
    EXPECT_EQ(back.values(), ssd::make_inputs(b.p).at(v.role).values()) << v.role;
  }
  // Without +z, columns 0..3 of every row are a gap: element 0 of the buffer is poison.
  const auto* base = static_cast<const std::uint8_t*>(b.buffer->view("x").data) - 4 * sizeof(float);
  EXPECT_TRUE(ssd::is_poison(ssd::DType::f32, base));
  EXPECT_TRUE(b.buffer->damage().empty());
}

TEST(ViewBuffer, AWriteIntoAGapIsNamed) {
  OneBuffer b("mamba2:f32 b2 s3 h2 p2 g1 n2 q2 layout=zxbcdt seed=4", "zxbcdt");
  auto* x = static_cast<std::uint8_t*>(b.buffer->view("x").data);
  const float stray = 1.0f;
  std::memcpy(x - sizeof(float), &stray, sizeof stray);  // column 3 of row 0: z's columns, absent
  EXPECT_TRUE(contains(b.buffer->damage(), "wrote into a gap of zxbcdt (1 poisoned elements between its views changed, "
                                           "the first at element 3 of 84)"));
}

TEST(ViewBuffer, AChangedViewElementIsInputModified) {
  OneBuffer b("chunk_cumsum:f32 b2 s5 h2 q4 +dt_bias layout=strided seed=3", "dt");
  const ssd::Placement& dt = b.buffer->views().front();
  auto* at = static_cast<std::uint8_t*>(b.buffer->view("dt").data) + (dt.strides[0] + dt.strides[1]) * 4;  // dt[1,1,0]
  const float other = 123.0f;
  std::memcpy(at, &other, sizeof other);
  EXPECT_TRUE(contains(b.buffer->damage(), "input modified: dt[1,1,0] changed by the call"));
}

TEST(ViewBuffer, GuardBandsAroundTheBuffer) {
  OneBuffer b("chunk_cumsum:f32 b2 s5 h2 q4 layout=strided seed=3", "dt");
  const ssd::Placement& dt = b.buffer->views().front();
  auto* start = static_cast<std::uint8_t*>(b.buffer->view("dt").data) - dt.offset * 4;
  start[-1] ^= 1;
  EXPECT_TRUE(contains(b.buffer->damage(), "wrote before the start of dt"));
}

// The spans of a far view: row 0 and row 1, 2^31 elements apart, are filled; nothing between.
TEST(ViewBuffer, FarViewsFillOnlyTheirSpans) {
  const ssd::InputLayout l = ssd::input_layout(ssd::parse_problem("chunk_cumsum:bf16 b2 s5 h2 q4 +far layout=strided seed=3"));
  const auto spans = ssd::view_spans({*l.find("dt")}, 1 << 20);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_GE(spans[1].first, ssd::kFarStride);
  EXPECT_LT(spans[0].second - spans[0].first, 100);
}

// The honest emulation gives the same bytes whatever the layout: only memory changed.
void expect_same_outputs(const ssd::KernelLibrary& honest, const ssd::Problem& contiguous, ssd::Layout layout) {
  ssd::Problem strided = contiguous;
  strided.layout = layout;
  if (ssd::invalid_reason(strided)) return;
  const ssd::InputSet inputs = ssd::make_inputs(contiguous);
  const ssd::CallRecord a = ssd::record_call(honest, contiguous, inputs);
  const ssd::CallRecord b = ssd::record_call(honest, strided, inputs);
  ASSERT_EQ(a.status, ssd::CallStatus::ok) << ssd::to_string(contiguous) << ": " << a.message;
  ASSERT_EQ(b.status, ssd::CallStatus::ok) << ssd::to_string(strided) << ": " << b.message;
  EXPECT_TRUE(b.damage.empty()) << ssd::to_string(strided) << ": " << b.damage.front();
  ASSERT_EQ(a.outputs.size(), b.outputs.size());
  for (std::size_t i = 0; i < a.outputs.size(); ++i)
    EXPECT_TRUE(a.outputs[i].bytes == b.outputs[i].bytes) << ssd::to_string(strided) << ": " << a.outputs[i].name;
}

TEST(StridedViews, EmulationIsBitIdenticalToTheContiguousLayout) {
  const ssd::KernelLibrary honest = ssd::KernelLibrary::open("emulation");
  int compared = 0;
  for (ssd::Op op : ssd::kAllOps)
    for (ssd::Problem p : ssd::op_spec(op).smoke()) {
      p.layout = ssd::Layout::contiguous;
      p.far = false;
      expect_same_outputs(honest, p, ssd::Layout::strided);
      expect_same_outputs(honest, p, ssd::Layout::zxbcdt);
      ++compared;
    }
  EXPECT_GT(compared, 50);
}

// The same over generated problems of every op (both layouts, +far where the batch allows).
RC_GTEST_PROP(StridedViews, GeneratedCasesAreBitIdenticalAcrossLayouts, ()) {
  static const ssd::KernelLibrary honest = ssd::KernelLibrary::open("emulation");
  const ssd::Op op = *rc::gen::elementOf(std::vector<ssd::Op>(ssd::kAllOps.begin(), ssd::kAllOps.end()));
  ssd::GenOptions o;
  o.layouts = false;
  ssd::Problem p = *ssd::gen_problem(op, o);
  const ssd::Layout layout = *rc::gen::element(ssd::Layout::strided, ssd::Layout::zxbcdt);
  ssd::Problem strided = p;
  strided.layout = layout;
  strided.far = p.b >= 2 && !p.varlen && *rc::gen::inRange(0, 4) == 0;
  RC_PRE(!ssd::invalid_reason(strided));
  RC_TAG(ssd::layout_name(layout));
  const ssd::InputSet inputs = ssd::make_inputs(p);
  const ssd::CallRecord a = ssd::record_call(honest, p, inputs), b = ssd::record_call(honest, strided, inputs);
  RC_ASSERT(a.status == ssd::CallStatus::ok);
  RC_ASSERT(b.status == ssd::CallStatus::ok);
  RC_ASSERT(b.damage.empty());
  RC_ASSERT(a.outputs.size() == b.outputs.size());
  for (std::size_t i = 0; i < a.outputs.size(); ++i) RC_ASSERT(a.outputs[i].bytes == b.outputs[i].bytes);
}

TEST(StridedViews, FarViewsAreReadPast2To31) {
  const ssd::KernelLibrary honest = ssd::KernelLibrary::open("emulation");
  const ssd::Problem near = ssd::parse_problem("recurrent:f32 b2 h2 p4 g1 n4 +z +tie layout=zxbcdt seed=5");
  ssd::Problem far = near;
  far.far = true;
  const ssd::InputSet inputs = ssd::make_inputs(near);
  const ssd::CallRecord a = ssd::record_call(honest, near, inputs), b = ssd::record_call(honest, far, inputs);
  ASSERT_EQ(b.status, ssd::CallStatus::ok) << b.message;
  EXPECT_TRUE(b.damage.empty());
  for (std::size_t i = 0; i < a.outputs.size(); ++i) EXPECT_TRUE(a.outputs[i].bytes == b.outputs[i].bytes) << a.outputs[i].name;
}

TEST(StridedViews, OlderLibrariesAreNotSentStridedViews) {
  const ssd::Problem p = ssd::parse_problem("chunk_cumsum:f32 b2 s5 h2 q4 layout=strided seed=3");
  EXPECT_EQ(ssd::op_spec(p.op).abi.version_needed(p), ssd::kStridedViewsVersion);
}

}  // namespace
