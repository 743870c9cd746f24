// Problem sizes: element and byte counts of a case worked by hand, int64 overflow as a contract
// violation naming the sizes, and the memory limit refusing a case before anything is allocated.
#include <gtest/gtest.h>

#include <limits>

#include "ssd/reference/errors.h"
#include "ssd/reference/op_spec.h"

namespace {

std::string reason(const char* line, std::int64_t max_bytes = ssd::kDefaultMaxCaseBytes) {
  return ssd::size_reason(ssd::parse_problem(line), max_bytes).value_or("fits");
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// chunk_cumsum b2 s37 h3 q16: dt [2,37,3] = 222, A [3] = 3, dA_cumsum and dt_out [2,3,3,16] = 288
// each (NC = ceil(37/16) = 3): 801 elements, 6408 bytes as float64.
constexpr const char* kSmall = "chunk_cumsum:f32 b2 s37 h3 q16 seed=1";

TEST(ProblemSize, CountsByHand) {
  const auto size = ssd::case_size(ssd::parse_problem(kSmall));
  ASSERT_TRUE(size.has_value());
  EXPECT_EQ(size->elements, 801);
  EXPECT_EQ(size->bytes, 6408);
  EXPECT_EQ(size->largest, "dA_cumsum [2,3,3,16]");
  // Optional tensors count only when present: +dt_bias adds [3].
  EXPECT_EQ(ssd::case_size(ssd::parse_problem("chunk_cumsum:f32 b2 s37 h3 q16 +dt_bias seed=1"))->elements, 804);
  // recurrent +sbi: state and its output are [slots,h,p,n] = 5*2*3*4 = 120 each; x, dt, z, out
  // [b,h,p] = 12 each without z: x dt out = 36; A [h,p,n] = 24; B, C [b,g,n] = 8 each;
  // state_batch_indices [b] = 2.  120*2 + 36 + 24 + 16 + 2 = 318.
  EXPECT_EQ(ssd::case_size(ssd::parse_problem("recurrent:f32 b2 h2 p3 g1 n4 +sbi slots=5 seed=1"))->elements, 318);
}

TEST(ProblemSize, LimitIsInclusive) {
  EXPECT_EQ(reason(kSmall, 6408), "fits");
  const std::string over = reason(kSmall, 6407);
  EXPECT_TRUE(contains(over, "sizes b2 s37 h3 q16")) << over;
  EXPECT_TRUE(contains(over, "801 elements (the largest dA_cumsum [2,3,3,16]), 6408 bytes")) << over;
  EXPECT_TRUE(contains(over, "over the limit of 6407 bytes")) << over;
}

TEST(ProblemSize, OverflowIsOutsideTheContract) {
  // b = s = 2^62: x alone has 2^124 elements.
  const char* line = "chunk_scan:f32 b4611686018427387904 s4611686018427387904 h1 p1 g1 n1 q1 seed=1";
  const std::string why = ssd::invalid_reason(ssd::parse_problem(line)).value_or("valid");
  EXPECT_TRUE(contains(why, "sizes b4611686018427387904 s4611686018427387904")) << why;
  EXPECT_TRUE(contains(why, "overflows int64")) << why;
  // Each factor fits, the product of two 2^32 sizes does not fit twice over: 2^32 * 2^32 * 8 bytes.
  EXPECT_TRUE(contains(reason("chunk_cumsum:f32 b4294967296 s4294967296 h1 q1 seed=1",
                              std::numeric_limits<std::int64_t>::max()), "overflows int64"));
  // Beyond 2^62 a size cannot even give the chunk count (s + q - 1) / q.
  const std::string beyond = reason("chunk_cumsum:f32 b1 s9223372036854775807 h1 q9223372036854775807 seed=1");
  EXPECT_TRUE(contains(beyond, "size s = 9223372036854775807 is beyond 2^62")) << beyond;
  // seq runs whose lengths overflow when summed.
  const std::string runs = ssd::invalid_reason(ssd::parse_problem(
      "mamba2:f32 b1 s4 h1 p1 g1 n1 q4 seq=0:9223372036854775807,9223372036854775807,9223372036854775807 seed=1")).value_or("valid");
  EXPECT_TRUE(contains(runs, "seq runs cover more than 2^64 tokens")) << runs;
  const std::string min_run = ssd::invalid_reason(ssd::parse_problem(
      "mamba2:f32 b1 s4 h1 p1 g1 n1 q4 seq=0:4,-9223372036854775808 seed=1")).value_or("valid");
  EXPECT_TRUE(contains(min_run, "seq runs cover 9223372036854775812 tokens")) << min_run;
}

TEST(ProblemSize, MakeInputsRefusesBeforeAllocating) {
  // 10^12 tokens: 22 TiB as float64. Without the check this ends in std::bad_alloc.
  const ssd::Problem p = ssd::parse_problem("chunk_cumsum:f32 b1 s1000000000000 h1 q1 seed=1");
  EXPECT_FALSE(ssd::invalid_reason(p).has_value());  // inside the contract, only too large here
  try {
    ssd::make_inputs(p);
    FAIL() << "no error";
  } catch (const ssd::ArgumentError& e) {
    EXPECT_EQ(e.argument(), "problem");
    EXPECT_TRUE(contains(e.what(), "sizes b1 s1000000000000 h1 q1")) << e.what();
    EXPECT_TRUE(contains(e.what(), "over the limit of 16.0 GiB")) << e.what();
  }
  EXPECT_THROW(ssd::make_inputs_unchecked(p), ssd::ArgumentError);
}

TEST(ProblemSize, LimitCanBeRaisedAndRestored) {
  const ssd::Problem p = ssd::parse_problem(kSmall);
  EXPECT_EQ(ssd::max_case_bytes(), ssd::kDefaultMaxCaseBytes);
  ssd::set_max_case_bytes(6407);
  EXPECT_THROW(ssd::make_inputs(p), ssd::ArgumentError);
  ssd::set_max_case_bytes(6408);
  EXPECT_EQ(ssd::make_inputs(p).at("dt").numel(), 222);
  ssd::set_max_case_bytes(ssd::kDefaultMaxCaseBytes);
  EXPECT_THROW(ssd::set_max_case_bytes(0), ssd::ArgumentError);
  EXPECT_THROW(ssd::set_max_case_bytes(-1), ssd::ArgumentError);
  EXPECT_EQ(ssd::max_case_bytes(), ssd::kDefaultMaxCaseBytes);
}

TEST(ProblemSize, DefaultLimitAdmitsEveryListedProblem) {
  std::int64_t largest = 0;
  std::string which;
  for (ssd::Op op : ssd::kAllOps)
    for (const auto& list : {ssd::op_spec(op).smoke(), ssd::op_spec(op).workloads()})
      for (const ssd::Problem& p : list) {
        EXPECT_EQ(ssd::size_reason(p), std::nullopt) << ssd::to_string(p);
        if (ssd::case_size(p)->bytes > largest) {
          largest = ssd::case_size(p)->bytes;
          which = ssd::to_string(p);
        }
      }
  std::printf("largest listed case: %.2f GiB as float64: %s\n", static_cast<double>(largest) / (1 << 30), which.c_str());
  EXPECT_LE(largest, ssd::kDefaultMaxCaseBytes / 2);  // room to spare on the default
}

}  // namespace
