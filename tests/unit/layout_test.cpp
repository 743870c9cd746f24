// The input layouts of layout= and +far: hand-worked zxbcdt offsets and strides, the properties of
// the seed-drawn pitches, the problem-string tokens and their errors, and the gather that reads
// a strided view back (against values picked by hand from a numbered buffer).
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

#include "ssd/reference/abi_views.h"
#include "ssd/reference/errors.h"
#include "ssd/reference/layout.h"
#include "ssd/reference/op_spec.h"

namespace {

using ssd::Shape;
using Strides = std::vector<std::int64_t>;

const ssd::Placement& view(const ssd::InputLayout& l, const char* role) {
  const ssd::Placement* v = l.find(role);
  EXPECT_NE(v, nullptr) << role;
  return *v;
}

std::string reason(const std::string& text) { return ssd::invalid_reason(ssd::parse_problem(text)).value_or(""); }

TEST(Layout, ContiguousHasNoViews) {
  const ssd::InputLayout l = ssd::input_layout(ssd::parse_problem("mamba2:f32 b2 s3 h2 p2 g1 n2 q2 +z seed=1"));
  EXPECT_TRUE(l.buffers.empty());
  EXPECT_TRUE(l.placements.empty());
}

// mamba2 b2 s3 h2 p2 g1 n2 +z: HP = 4, GN = 2, so a row of the projection is
// W = 2*4 + 2*2 + 2 = 14 wide: z at column 0, x at 4, B at 8, C at 8 + 2 = 10, dt at 8 + 4 = 12.
// Rows are (b, s): 2 * 3 = 6 of them, so the buffer holds 6 * 14 = 84 elements; token axes step
// by s: 14 and b: 3 * 14 = 42.
TEST(Layout, ZxbcdtHandWorked) {
  const ssd::Problem p = ssd::parse_problem("mamba2:f32 b2 s3 h2 p2 g1 n2 q2 +z layout=zxbcdt seed=1");
  EXPECT_EQ(ssd::zxbcdt_width(p), 14);
  const ssd::InputLayout l = ssd::input_layout(p);
  ASSERT_EQ(l.buffers.size(), 1u);
  EXPECT_EQ(l.buffers[0].name, "zxbcdt");
  EXPECT_EQ(l.buffers[0].extent, 84);
  EXPECT_EQ(l.placements.size(), 5u);
  EXPECT_EQ(view(l, "z").offset, 0);
  EXPECT_EQ(view(l, "x").offset, 4);
  EXPECT_EQ(view(l, "B").offset, 8);
  EXPECT_EQ(view(l, "C").offset, 10);
  EXPECT_EQ(view(l, "dt").offset, 12);
  EXPECT_EQ(view(l, "x").strides, (Strides{42, 14, 2, 1}));
  EXPECT_EQ(view(l, "z").strides, (Strides{42, 14, 2, 1}));
  EXPECT_EQ(view(l, "B").strides, (Strides{42, 14, 2, 1}));
  EXPECT_EQ(view(l, "dt").strides, (Strides{42, 14, 1}));
  EXPECT_EQ(view(l, "dt").shape, (Shape{2, 3, 2}));
  // dt's last element [1,2,1]: 12 + 42 + 2*14 + 1 = 83, the buffer's last element.
  EXPECT_EQ(view(l, "dt").last(), 83);
  EXPECT_EQ(l.find("A"), nullptr);  // parameters stay contiguous
}

// Without +z the z columns stay in the row (W is still 14) as a gap.
TEST(Layout, ZxbcdtWithoutZKeepsItsColumns) {
  const ssd::InputLayout l =
      ssd::input_layout(ssd::parse_problem("mamba2:f32 b2 s3 h2 p2 g1 n2 q2 layout=zxbcdt seed=1"));
  EXPECT_EQ(l.find("z"), nullptr);
  EXPECT_EQ(view(l, "x").offset, 4);
  EXPECT_EQ(l.buffers[0].extent, 84);
}

// +far adds 2^31 to the batch stride: 42 + 2^31. dt's last element is then
// 12 + (42 + 2^31) + 28 + 1 = 2^31 + 83, so the buffer holds 2^31 + 84 elements.
TEST(Layout, FarRaisesTheBatchStridePast2To31) {
  const ssd::InputLayout l =
      ssd::input_layout(ssd::parse_problem("mamba2:f32 b2 s3 h2 p2 g1 n2 q2 +z +far layout=zxbcdt seed=1"));
  EXPECT_EQ(view(l, "x").strides, (Strides{42 + ssd::kFarStride, 14, 2, 1}));
  EXPECT_EQ(view(l, "dt").strides[0], 42 + ssd::kFarStride);
  EXPECT_EQ(l.buffers[0].extent, ssd::kFarStride + 84);
  EXPECT_GT(view(l, "x").last(), std::int64_t{1} << 31);
}

// recurrent b2 h2 p3 g1 n2 +tie: HP = 6, GN = 2, W = 12 + 4 + 2 = 18; dt [2,2,3] is the projection's
// one dt per head at column 12 + 4 = 16, expanded along P: strides (18, 1, 0).
TEST(Layout, ZxbcdtRecurrentDtIsExpandedWithStrideZero) {
  const ssd::InputLayout l =
      ssd::input_layout(ssd::parse_problem("recurrent:f32 b2 h2 p3 g1 n2 +tie layout=zxbcdt seed=1"));
  EXPECT_EQ(view(l, "dt").offset, 16);
  EXPECT_EQ(view(l, "dt").strides, (Strides{18, 1, 0}));
  EXPECT_EQ(view(l, "x").strides, (Strides{18, 3, 1}));
  EXPECT_EQ(view(l, "B").offset, 12);
  EXPECT_EQ(l.find("state"), nullptr);  // updated in place: contiguous
}

// recurrent b2 h2 p3 g1 n2 +dt_bias +Dhp +tie: A [2,3,2] and dt_bias [2,3] hold one value per head,
// so each gets a buffer of H = 2 elements and strides (1, 0, 0) and (1, 0): element [h,p,n] of A is
// element h of its buffer, the view's last element [1,2,1] is element 1. D is drawn per (h, p)
// even with +tie: it stays a dense input of its own, not laid out.
TEST(Layout, ZxbcdtRecurrentPerHeadParametersAreStrideZeroViews) {
  const ssd::InputLayout l =
      ssd::input_layout(ssd::parse_problem("recurrent:f32 b2 h2 p3 g1 n2 +dt_bias +Dhp +tie layout=zxbcdt seed=1"));
  ASSERT_EQ(l.buffers.size(), 3u);
  EXPECT_EQ(l.buffers[0].name, "zxbcdt");
  EXPECT_EQ(l.buffers[0].extent, 36);  // 2 rows of W = 18
  EXPECT_EQ(l.buffers[1].name, "A");
  EXPECT_EQ(l.buffers[1].extent, 2);
  EXPECT_EQ(l.buffers[2].name, "dt_bias");
  EXPECT_EQ(l.buffers[2].extent, 2);
  EXPECT_EQ(view(l, "A").buffer, "A");
  EXPECT_EQ(view(l, "A").shape, (Shape{2, 3, 2}));
  EXPECT_EQ(view(l, "A").strides, (Strides{1, 0, 0}));
  EXPECT_EQ(view(l, "A").offset, 0);
  EXPECT_EQ(view(l, "A").last(), 1);
  EXPECT_EQ(view(l, "dt_bias").shape, (Shape{2, 3}));
  EXPECT_EQ(view(l, "dt_bias").strides, (Strides{1, 0}));
  EXPECT_EQ(view(l, "dt_bias").last(), 1);
  EXPECT_EQ(view(l, "dt").strides, (Strides{18, 1, 0}));  // unchanged: the projection's column
  EXPECT_EQ(l.find("D"), nullptr);
  EXPECT_EQ(l.placements.size(), 6u);  // x, B, C, dt of the projection, then A and dt_bias
  EXPECT_EQ(l.placements[4].role, "A");
  EXPECT_EQ(l.placements[5].role, "dt_bias");
  // Without +tie there is no zxbcdt form; without +dt_bias no dt_bias view.
  EXPECT_EQ(ssd::input_layout(ssd::parse_problem("recurrent:f32 b2 h2 p3 g1 n2 +tie layout=zxbcdt seed=1")).find("dt_bias"),
            nullptr);
}

// Under layout=strided a +tie case expands A and dt_bias for the seeds whose draw says so: then
// the head axis takes the strided draws' innermost stride (1 or 2) and offset (0..3), the other
// axes stride 0, and the buffer ends 0..3 elements after the last head; else both are padded
// dense views like every other input. Both forms occur within a few seeds, and A and dt_bias
// always take the same one. Untied cases never expand.
TEST(Layout, StridedRecurrentTieExpandsPerSeed) {
  int expanded = 0, padded = 0;
  for (int seed = 1; seed <= 24; ++seed) {
    const std::string text = "recurrent:f32 b2 h3 p2 g1 n2 +dt_bias +tie layout=strided seed=" + std::to_string(seed);
    const ssd::InputLayout l = ssd::input_layout(ssd::parse_problem(text));
    const ssd::Placement& a = view(l, "A");
    const ssd::Placement& bias = view(l, "dt_bias");
    const bool zero = a.strides[1] == 0;
    EXPECT_EQ(zero, bias.strides[1] == 0) << text;
    if (zero) {
      ++expanded;
      EXPECT_TRUE(a.strides[0] == 1 || a.strides[0] == 2) << text;
      EXPECT_EQ(a.strides, (Strides{a.strides[0], 0, 0})) << text;
      EXPECT_EQ(bias.strides, (Strides{bias.strides[0], 0})) << text;
      EXPECT_LE(a.offset, 3) << text;
      for (const ssd::LayoutBuffer& b : l.buffers)
        if (b.name == "A") {
          EXPECT_EQ(a.last(), a.offset + 2 * a.strides[0]) << text;  // head 2 of 3
          EXPECT_GE(b.extent - a.last() - 1, 0) << text;
          EXPECT_LE(b.extent - a.last() - 1, 3) << text;
        }
    } else {
      ++padded;
      EXPECT_GT(a.strides[1], 0) << text;
      EXPECT_GT(a.strides[2], 0) << text;
    }
    const ssd::InputLayout untied = ssd::input_layout(
        ssd::parse_problem("recurrent:f32 b2 h3 p2 g1 n2 +dt_bias layout=strided seed=" + std::to_string(seed)));
    EXPECT_GT(view(untied, "A").strides[2], 0) << seed;
  }
  EXPECT_GT(expanded, 0);
  EXPECT_GT(padded, 0);
}

// chunk_scan takes x, C and z from the projection (its dt is chunk-major, not a view of it).
TEST(Layout, ZxbcdtRolesOfTheStageOps) {
  const ssd::InputLayout scan =
      ssd::input_layout(ssd::parse_problem("chunk_scan:f32 b1 s4 h2 p2 g1 n2 q2 +z layout=zxbcdt seed=1"));
  EXPECT_EQ(scan.placements.size(), 3u);
  EXPECT_EQ(view(scan, "C").offset, 2 * 4 + 2);
  EXPECT_EQ(scan.find("dt"), nullptr);
  const ssd::InputLayout state =
      ssd::input_layout(ssd::parse_problem("chunk_state:f32 b1 s4 h2 p2 g1 n2 q2 layout=zxbcdt seed=1"));
  EXPECT_EQ(state.placements.size(), 2u);
}

// Every strided view: not dense, its elements at distinct offsets inside its buffer, and the
// same layout for the same problem.
TEST(Layout, StridedViewsArePaddedDistinctAndDeterministic) {
  for (ssd::Op op : ssd::kAllOps)
    for (ssd::Problem p : ssd::op_spec(op).smoke()) {
      if (p.varlen || p.far) continue;
      p.layout = ssd::Layout::strided;
      const ssd::InputLayout l = ssd::input_layout(p);
      EXPECT_EQ(l.placements.size(), l.buffers.size()) << ssd::to_string(p);
      for (std::size_t i = 0; i < l.placements.size(); ++i) {
        const ssd::Placement& v = l.placements[i];
        if (ssd::element_count(v.shape) > 1) {
          EXPECT_FALSE(ssd::is_contiguous(v.shape, v.strides)) << v.role;
        }
        EXPECT_LT(v.last(), l.buffers[i].extent) << v.role;
        // An expanded view (recurrent +tie's A and dt_bias) repeats its elements along its
        // stride-0 axes: its distinct offsets are those of the other axes.
        std::int64_t distinct = 1;
        for (std::size_t axis = 0; axis < v.shape.size(); ++axis)
          if (v.strides[axis] != 0) distinct *= v.shape[axis];
        std::set<std::int64_t> offsets;
        std::vector<std::int64_t> index(v.shape.size(), 0);
        for (std::int64_t e = 0; e < ssd::element_count(v.shape); ++e) {
          std::int64_t at = v.offset, rest = e;
          for (std::size_t axis = v.shape.size(); axis-- > 0;) {
            at += rest % v.shape[axis] * v.strides[axis];
            rest /= v.shape[axis];
          }
          offsets.insert(at);
        }
        EXPECT_EQ(static_cast<std::int64_t>(offsets.size()), distinct) << v.role << " aliases";
      }
      EXPECT_EQ(ssd::input_layout(p).placements[0].strides, l.placements[0].strides);
    }
}

TEST(Layout, TokensPrintCanonicallyAndRoundTrip) {
  const std::string text = "mamba2:bf16 b2 s3 h2 p2 g1 n2 q2 +z +far layout=zxbcdt dt=bf16 seed=1";
  EXPECT_EQ(ssd::to_string(ssd::parse_problem("mamba2:bf16 layout=zxbcdt b2 s3 h2 p2 g1 n2 q2 dt=bf16 +far +z seed=1")), text);
  EXPECT_EQ(ssd::to_string(ssd::parse_problem(text)), text);
  EXPECT_EQ(ssd::to_string(ssd::parse_problem("chunk_cumsum:f32 b1 s4 h1 q2 layout=contiguous seed=1")),
            "chunk_cumsum:f32 b1 s4 h1 q2 seed=1");
  EXPECT_EQ(ssd::parse_problem("chunk_cumsum:f32 b1 s4 h1 q2 layout=strided seed=1").layout, ssd::Layout::strided);
}

void expect_parse_error(const std::string& text, const std::string& part) {
  try {
    ssd::parse_problem(text);
    ADD_FAILURE() << text << " parsed";
  } catch (const ssd::ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("problem"), std::string::npos) << e.what();
  }
}

TEST(Layout, BadTokensAreNamed) {
  expect_parse_error("chunk_cumsum:f32 b1 s4 h1 q2 layout=zxbcdt seed=1", "chunk_cumsum takes no zxbcdt views");
  expect_parse_error("chunk_cumsum:f32 b1 s4 h1 q2 layout=rows seed=1", "expected layout=contiguous, layout=zxbcdt or layout=strided");
  expect_parse_error("chunk_cumsum:f32 b1 s4 h1 q2 layout=strided layout=strided seed=1", "given twice");
  expect_parse_error("chunk_cumsum:f32 b1 s4 h1 q2 +far +far layout=strided seed=1", "given twice");
}

TEST(Layout, InvalidCombinationsSayWhy) {
  EXPECT_NE(reason("chunk_cumsum:f32 b2 s4 h1 q2 +far seed=1").find("+far needs layout=zxbcdt or layout=strided"), std::string::npos);
  EXPECT_NE(reason("chunk_cumsum:f32 b1 s4 h1 q2 +far layout=strided seed=1").find("+far needs b >= 2"), std::string::npos);
  EXPECT_NE(reason("mamba2:f32 b1 s4 h1 p2 g1 n2 q2 +varlen +far layout=strided seq=0:4 seed=1").find("no +varlen"),
            std::string::npos);
  EXPECT_NE(reason("mamba2:bf16 b1 s4 h1 p2 g1 n2 q2 layout=zxbcdt seed=1").find("dt is f32, x bf16 (give dt=bf16)"),
            std::string::npos);
  EXPECT_NE(reason("recurrent:f32 b1 h1 p2 g1 n2 layout=zxbcdt seed=1").find("needs +tie"), std::string::npos);
  EXPECT_EQ(reason("mamba2:bf16 b1 s4 h1 p2 g1 n2 q2 layout=zxbcdt dt=bf16 seed=1"), "");
  EXPECT_EQ(reason("recurrent:f32 b2 h1 p2 g1 n2 +tie +far layout=zxbcdt seed=1"), "");
}

// A numbered f32 buffer 0, 1, ..., 11 read through views picked by hand.
TEST(Layout, GatherReadsAnyStrides) {
  std::vector<float> numbers(12);
  for (int i = 0; i < 12; ++i) numbers[static_cast<std::size_t>(i)] = static_cast<float>(i);
  auto read = [&](std::int64_t offset, Shape shape, Strides strides) {
    ssd_tensor v{};
    v.data = numbers.data() + offset;
    v.dtype = SSD_DTYPE_F32;
    v.rank = static_cast<std::int32_t>(shape.size());
    for (std::size_t a = 0; a < shape.size(); ++a) v.shape[a] = shape[a], v.strides[a] = strides[a];
    return ssd::tensor_from_view(v, "op", "x").values();
  };
  // [2,3] at offset 1, strides (5, 2): rows 1 3 5 and 6 8 10.
  EXPECT_EQ(read(1, {2, 3}, {5, 2}), (std::vector<double>{1, 3, 5, 6, 8, 10}));
  // [2,2] strides (3, 0): each row's first element twice (an expanded axis).
  EXPECT_EQ(read(0, {2, 2}, {3, 0}), (std::vector<double>{0, 0, 3, 3}));
  // An expanded A [2,2,2] of one value per head at offset 1, head stride 2 (1, 0, 0 scaled):
  // head 0 reads element 1 four times, head 1 element 3.
  EXPECT_EQ(read(1, {2, 2, 2}, {2, 0, 0}), (std::vector<double>{1, 1, 1, 1, 3, 3, 3, 3}));
  // [3] stride -4 from element 8: 8 4 0.
  EXPECT_EQ(read(8, {3}, {-4}), (std::vector<double>{8, 4, 0}));
  // Dense strides read as before.
  EXPECT_EQ(read(2, {2, 2}, {2, 1}), (std::vector<double>{2, 3, 4, 5}));
}

TEST(Layout, OutputsMustStayDense) {
  std::vector<float> out(4);
  ssd_tensor v{};
  v.data = out.data();
  v.dtype = SSD_DTYPE_F32;
  v.rank = 1;
  v.shape[0] = 2;
  v.strides[0] = 2;
  EXPECT_THROW(ssd::write_view(v, ssd::Tensor(ssd::DType::f32, {2}), "op", "out"), ssd::ArgumentError);
}

}  // namespace
