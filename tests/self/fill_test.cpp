// Input fills: a pure function of the problem string (same values for any thread count), within
// the OpSpec's ranges, rounded to each tensor's dtype, and with the structure the contract needs
// (monotone flat-tailed cumsums, zero dt tails, well-formed seq_idx, distinct state slots).
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <set>

#include "ssd/reference/errors.h"
#include "ssd/reference/helpers.h"
#include "ssd/reference/op_spec.h"

namespace {

ssd::InputSet inputs_with_threads(const std::string& line, int threads) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  ssd::InputSet in = ssd::make_inputs(ssd::parse_problem(line));
  omp_set_num_threads(saved);
  return in;
}

TEST(Fill, SameValuesForAnyThreadCount) {
  std::vector<std::string> lines;
  for (ssd::Op op : ssd::kAllOps)
    for (const ssd::Problem& p : ssd::op_spec(op).smoke()) lines.push_back(ssd::to_string(p));
  // Large enough that the fills run in parallel (many blocks of elements, many chunk rows).
  lines.push_back("mamba2:bf16 b2 s512 h8 p16 g2 n16 q64 +dt_bias +z +init seq=rand seed=3");
  lines.push_back("chunk_scan:f16 b2 s1024 h8 p8 g1 n8 q64 +Dhp seed=4");
  {
    for (const std::string& line : lines) {
      const ssd::InputSet one = inputs_with_threads(line, 1), three = inputs_with_threads(line, 3);
      ASSERT_EQ(one.all().size(), three.all().size()) << line;
      for (const auto& [name, t] : one.all()) {
        const ssd::Tensor& u = three.at(name);
        ASSERT_EQ(t.shape(), u.shape()) << line << " " << name;
        ASSERT_EQ(t.dtype(), u.dtype()) << line << " " << name;
        for (std::int64_t i = 0; i < t.numel(); ++i)
          ASSERT_EQ(std::memcmp(&t.data()[i], &u.data()[i], sizeof(double)), 0) << line << " " << name << "[" << i << "]";
      }
    }
  }
}

TEST(Fill, SeedAndTensorNameChangeTheValues) {
  const ssd::InputSet a = ssd::make_inputs(ssd::parse_problem("mamba2:f32 b1 s64 h2 p4 g1 n4 q16 +z seed=1"));
  const ssd::InputSet b = ssd::make_inputs(ssd::parse_problem("mamba2:f32 b1 s64 h2 p4 g1 n4 q16 +z seed=2"));
  EXPECT_NE(a.at("x").values(), b.at("x").values());
  EXPECT_NE(a.at("x").values(), a.at("z").values());  // same shape and rule, different stream
}

TEST(Fill, ValuesAreRepresentableInTheirDtypeAndWithinRange) {
  const ssd::Problem p = ssd::parse_problem("mamba2:bf16 b2 s300 h4 p8 g2 n8 q64 +dt_bias +softplus +D +init seed=5");
  const ssd::InputSet in = ssd::make_inputs(p);
  for (const auto& [name, t] : in.all())
    for (double v : t.values()) ASSERT_EQ(ssd::round_to(t.dtype(), v), v) << name;
  for (double v : in.at("A").values()) EXPECT_TRUE(v <= -std::exp(-2.0) * (1 + 1e-6) && v >= -std::exp(1.0) * (1 + 1e-6));
  for (double v : in.at("dt").values()) EXPECT_TRUE(v >= -4.0 && v < 1.0);
  for (double v : in.at("dt_bias").values()) EXPECT_TRUE(v >= -0.5 && v < 0.5);
  // N(0,1) draws: sample mean and variance of 19200 values of x (bf16-rounded).
  double sum = 0, sum2 = 0;
  for (double v : in.at("x").values()) {
    sum += v;
    sum2 += v * v;
  }
  const double n = static_cast<double>(in.at("x").numel()), mean = sum / n;
  EXPECT_NEAR(mean, 0.0, 0.05);
  EXPECT_NEAR(sum2 / n - mean * mean, 1.0, 0.05);
}

TEST(Fill, ChunkMajorDtAndCumsumHaveTheContractsTail) {
  const ssd::Problem p = ssd::parse_problem("chunk_scan:f32 b1 s37 h2 p2 g1 n2 q16 seed=3");
  const ssd::InputSet in = ssd::make_inputs(p);
  const ssd::Tensor& dt = in.at("dt");
  const ssd::Tensor& dA = in.at("dA_cumsum");
  const ssd::ChunkGrid grid{37, 16};
  for (std::int64_t h = 0; h < 2; ++h)
    for (std::int64_t c = 0; c < grid.count(); ++c)
      for (std::int64_t i = 0; i < 16; ++i) {
        const double d = dt.at({0, h, c, i}), a = dA.at({0, h, c, i});
        if (i >= grid.length(c)) {
          EXPECT_EQ(d, 0.0);
          EXPECT_EQ(a, dA.at({0, h, c, i - 1}));  // flat tail
        } else {
          EXPECT_TRUE(d >= 0.0 && d < 0.5);
          EXPECT_LE(a, i ? dA.at({0, h, c, i - 1}) : 0.0);  // monotone non-increasing
        }
      }
}

TEST(Fill, ExplicitSeqRunsAreLaidOutAsWritten) {
  const ssd::InputSet in = ssd::make_inputs(ssd::parse_problem("chunk_coupling:f32 b2 s10 g1 n2 q4 seq=2:3,4,-3 seed=1"));
  const std::vector<double> row{2, 2, 2, 3, 3, 3, 3, -1, -1, -1};
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t t = 0; t < 10; ++t) EXPECT_EQ(in.at("seq_idx").at({b, t}), row[static_cast<std::size_t>(t)]);
}

TEST(Fill, RandomSeqIdxIsWellFormed) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const ssd::InputSet in = ssd::make_inputs(
        ssd::parse_problem("chunk_state:f32 b3 s23 h1 p1 g1 n1 q8 seq=rand seed=" + std::to_string(seed)));
    EXPECT_NO_THROW(ssd::check_seq_idx("test", in.at("seq_idx"), 3, 23)) << seed;
    for (std::int64_t b = 0; b < 3; ++b) {
      const double first = in.at("seq_idx").at({b, 0});
      EXPECT_TRUE(first == 0.0 || first == 1.0) << seed;
    }
  }
}

TEST(Fill, StateBatchIndicesAreDistinctSlotsOrPadding) {
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    const ssd::InputSet in = ssd::make_inputs(ssd::parse_problem(
        "recurrent:f32 b6 h1 p1 g1 n1 +sbi slots=8 seed=" + std::to_string(seed)));
    std::set<double> used;
    for (double v : in.at("state_batch_indices").values()) {
      EXPECT_LT(v, 8.0);
      if (v >= 0) {
        EXPECT_TRUE(used.insert(v).second) << "slot " << v << " used twice, seed " << seed;
      }
    }
  }
}

TEST(Fill, TiedRecurrentTensorsAreConstantAlongTheirTrailingAxes) {
  const ssd::InputSet in = ssd::make_inputs(ssd::parse_problem("recurrent:f32 b2 h3 p4 g1 n5 +dt_bias +tie seed=9"));
  for (std::int64_t h = 0; h < 3; ++h)
    for (std::int64_t q = 0; q < 4; ++q) {
      EXPECT_EQ(in.at("dt_bias").at({h, q}), in.at("dt_bias").at({h, 0}));
      for (std::int64_t n = 0; n < 5; ++n) EXPECT_EQ(in.at("A").at({h, q, n}), in.at("A").at({h, 0, 0}));
      for (std::int64_t b = 0; b < 2; ++b) EXPECT_EQ(in.at("dt").at({b, h, q}), in.at("dt").at({b, h, 0}));
    }
  EXPECT_NE(in.at("A").at({0, 0, 0}), in.at("A").at({1, 0, 0}));
}

// dt_overflow: raw dt in [80, 88.7) or [88.8, 400), both bands well represented, so a softplus
// without its threshold overflows fp32's exp on about half of the elements; the other roles are
// the default fills (x identical to the same problem under fill=default).
TEST(Fill, DtOverflowReachesPastFp32ExpRange) {
  for (const char* head : {"mamba2:f32 b2 s200 h3 p2 g1 n2 q16", "chunk_cumsum:bf16 b2 s200 h3 q16",
                           "recurrent:f16 b20 h3 p10 g1 n2", "discretize_segsum:bf16 b1 s192 q16 h3 p2 g1 n2"}) {
    const std::string line = std::string(head) + " fill=dt_overflow seed=5";
    const ssd::Problem p = ssd::parse_problem(line);
    EXPECT_EQ(ssd::to_string(p), line);
    EXPECT_EQ(ssd::parse_problem(ssd::to_string(p)), p);
    const ssd::InputSet in = ssd::make_inputs(p);
    std::int64_t low = 0, high = 0;
    for (double v : in.at("dt").values()) {
      EXPECT_TRUE(v >= 80.0 && v <= 400.0) << line << ": " << v;
      (std::isinf(std::exp(static_cast<float>(v))) ? high : low) += 1;
    }
    const std::int64_t n = in.at("dt").numel();
    EXPECT_GT(high, n / 3) << line;
    EXPECT_GT(low, n / 3) << line;
    ssd::Problem plain = p;
    plain.fill = "default";
    const char* other = p.op == ssd::Op::discretize_segsum ? "B" : p.op == ssd::Op::chunk_cumsum ? "A" : "x";
    EXPECT_EQ(ssd::make_inputs(plain).at(other).values(), in.at(other).values()) << line;
  }
}

// dA_rise: steps -U(-0.25, 0.5) at valid positions (so about a third rise), flat padded tail.
TEST(Fill, DaRiseStepsRiseAboutAThirdOfTheTime) {
  for (const char* line : {"chunk_scan:f32 b2 s300 h3 p2 g1 n2 q16 fill=dA_rise seed=4",
                           "chunk_state:f32 b2 s300 h3 p2 g1 n2 q16 fill=dA_rise seed=4"}) {
    const ssd::Problem p = ssd::parse_problem(line);
    EXPECT_EQ(ssd::to_string(p), line);
    const ssd::InputSet in = ssd::make_inputs(p);
    const ssd::Tensor& dA = in.at("dA_cumsum");
    const ssd::ChunkGrid grid{p.s, p.q};
    std::int64_t steps = 0, rising = 0;
    for (std::int64_t row = 0; row < dA.numel() / p.q; ++row)
      for (std::int64_t i = 0; i < p.q; ++i) {
        const double step = dA[row * p.q + i] - (i ? dA[row * p.q + i - 1] : 0.0);
        if (i >= grid.length(row % grid.count())) {
          EXPECT_EQ(step, 0.0);
          continue;
        }
        // A step of the f32-rounded running sum: U's range plus the rounding of the sums.
        EXPECT_TRUE(step >= -0.5 - 1e-5 && step <= 0.25 + 1e-5) << step;
        ++steps;
        rising += step > 0 ? 1 : 0;
      }
    EXPECT_NEAR(static_cast<double>(rising) / static_cast<double>(steps), 1.0 / 3, 0.05) << line;
  }
  // A regime the op does not list is refused by the parser.
  EXPECT_THROW(ssd::parse_problem("mamba2:f32 b1 s4 h1 p1 g1 n1 q4 fill=dA_rise seed=1"), ssd::ArgumentError);
  EXPECT_THROW(ssd::parse_problem("chunk_scan:f32 b1 s4 h1 p1 g1 n1 q4 fill=dt_overflow seed=1"), ssd::ArgumentError);
}

}  // namespace
