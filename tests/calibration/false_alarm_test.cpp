// Regression cases where the bound rule once failed an honest fp32 kernel (the emulation): each
// must now PASS on both honest emulations, and a planted wrong value in the same case must still
// FAIL, so the fix did not simply stop checking.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "ssd/reference/op_spec.h"
#include "ssd/harness/runner.h"

namespace {

// The emulation's outputs of a case, judged after `plant` may change one of them.
template <class Plant>
ssd::CaseJudgement judge_planted(const ssd::Problem& p, Plant plant) {
  const ssd::InputSet in = ssd::make_inputs(p);
  const ssd::Outputs oracle = ssd::op_spec(p.op).chunked(p, in);
  const ssd::Bounds bounds = ssd::compute_bounds(p, in, oracle);
  ssd::KernelRun run = ssd::run_kernel(ssd::KernelLibrary::open("emulation"), p, in);
  EXPECT_EQ(run.status, ssd::KernelRun::Status::ok) << run.message;
  ssd::Outputs got;
  for (const ssd::Output& o : run.outputs.all()) {
    ssd::Tensor t = o.value;
    plant(o.name, t, oracle, bounds);
    got.add(o.name, std::move(t));
  }
  return ssd::judge(p, oracle, bounds, got);
}

// Elements of `out` the contract defines (padding tokens are not compared).
std::int64_t oracle_defined_count(const ssd::Problem& p) {
  const ssd::Outputs oracle = ssd::op_spec(p.op).chunked(p, ssd::make_inputs(p));
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < oracle.get("out").value.numel(); ++i) n += oracle.get("out").is_defined(i) ? 1 : 0;
  return n;
}

void expect_honest_pass(const char* line) {
  const ssd::Problem p = ssd::parse_problem(line);
  for (const char* variant : {"emulation", "emulation-blocked"}) {
    const ssd::CaseJudgement j = ssd::check_case(ssd::KernelLibrary::open(variant), p);
    EXPECT_EQ(j.verdict, ssd::Verdict::passed) << variant << ": " << ssd::describe(j);
  }
}

// recurrent, no clamp, raw dt down to -40: A dt' reaches +108, and a state element passes fp32's
// largest value. `out` reads the unrounded fp32 state, so the emulation's out is inf there, while
// C[n] or silu(z) scales out's float64 shadow well below the overflow exemption.
constexpr const char* kRecurrentOverflow = "recurrent:bf16 b2 h2 p3 g2 n3 +Dhp fill=dt_edge seed=819788";

TEST(FalseAlarm, RecurrentOutReadingAnOverflowedStatePasses) {
  const ssd::Problem p = ssd::parse_problem(kRecurrentOverflow);
  // The premise, checked independently of the bound code: some state element's fp32 value is
  // infinite in the emulation while the oracle's out is finite everywhere.
  const ssd::InputSet in = ssd::make_inputs(p);
  const ssd::Outputs oracle = ssd::op_spec(p.op).chunked(p, in);
  const ssd::KernelRun run = ssd::run_kernel(ssd::KernelLibrary::open("emulation"), p, in);
  bool state_inf = false, out_inf = false;
  for (std::int64_t i = 0; i < run.outputs.get("state").value.numel(); ++i)
    state_inf = state_inf || std::isinf(run.outputs.get("state").value[i]);
  for (std::int64_t i = 0; i < run.outputs.get("out").value.numel(); ++i) {
    out_inf = out_inf || std::isinf(run.outputs.get("out").value[i]);
    EXPECT_TRUE(std::isfinite(oracle.get("out").value[i]));
  }
  EXPECT_TRUE(state_inf);
  EXPECT_TRUE(out_inf);
  expect_honest_pass(kRecurrentOverflow);
}

TEST(FalseAlarm, RecurrentOverflowCaseStillCatchesAWrongOut) {
  const ssd::Problem p = ssd::parse_problem(kRecurrentOverflow);
  // Off by 4 bounds at the first out element whose state did not overflow (finite bound).
  bool planted = false;
  const ssd::CaseJudgement j = judge_planted(p, [&](const std::string& name, ssd::Tensor& t, const ssd::Outputs& oracle,
                                                    const ssd::Bounds& bounds) {
    if (name != "out" || planted) return;
    const ssd::OutputBound& b = bounds.get("out");
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      if (!std::isfinite(b.bound[i]) || b.is_exact(i)) continue;
      t.set(i, oracle.get("out").value[i] + 4 * b.bound[i] + std::fabs(oracle.get("out").value[i]) * 0x1p-6);
      planted = true;
      return;
    }
  });
  ASSERT_TRUE(planted);
  EXPECT_EQ(j.verdict, ssd::Verdict::failed) << ssd::describe(j);
}

// chunk_cumsum with limit=0.001,1 and no softplus: a raw dt of exactly 0 (A = 0 regime) is
// clamped to 0.001, which fp32 cannot represent; the stored value is fl32(0.001).
constexpr const char* kClampedZero = "chunk_cumsum:f16 b2 s350 h2 q175 limit=0.001,1 A=f32 fill=A_zero seed=882128";

// Flat index into dt_out [b,h,NC,q] of the first raw dt that is exactly 0 (dt is [b,s,h]).
std::int64_t first_zero_dt(const ssd::Problem& p, const ssd::InputSet& in) {
  const ssd::Tensor& dt = in.at("dt");
  const std::int64_t NC = (p.s + p.q - 1) / p.q;
  for (std::int64_t i = 0; i < dt.numel(); ++i)
    if (dt[i] == 0.0) {
      const std::int64_t b = i / (p.s * p.h), t = (i / p.h) % p.s, h = i % p.h;
      return ((b * p.h + h) * NC + t / p.q) * p.q + t % p.q;
    }
  return -1;
}

TEST(FalseAlarm, ClampOfAZeroDtToAnUnrepresentableLimitPasses) {
  const ssd::Problem p = ssd::parse_problem(kClampedZero);
  const ssd::InputSet in = ssd::make_inputs(p);
  const std::int64_t at = first_zero_dt(p, in);
  ASSERT_GE(at, 0) << "the case has no raw dt of exactly 0";
  // Hand-worked: dt' = clamp(0, 0.001, 1) = 0.001 in float64; the fp32 kernel stores fl32(0.001).
  const ssd::Outputs oracle = ssd::op_spec(p.op).chunked(p, in);
  EXPECT_EQ(oracle.get("dt_out").value[at], 0.001);
  const ssd::KernelRun run = ssd::run_kernel(ssd::KernelLibrary::open("emulation"), p, in);
  EXPECT_EQ(run.outputs.get("dt_out").value[at], static_cast<double>(0.001f));
  EXPECT_NE(static_cast<double>(0.001f), 0.001);
  expect_honest_pass(kClampedZero);
}

TEST(FalseAlarm, ClampedZeroCaseStillCatchesAMissingClamp) {
  const ssd::Problem p = ssd::parse_problem(kClampedZero);
  const std::int64_t at = first_zero_dt(p, ssd::make_inputs(p));
  ASSERT_GE(at, 0);
  // A kernel that skips the clamp for this element stores the raw 0.
  const ssd::CaseJudgement j = judge_planted(p, [&](const std::string& name, ssd::Tensor& t, const ssd::Outputs&,
                                                    const ssd::Bounds&) {
    if (name == "dt_out") t.set(at, 0.0);
  });
  EXPECT_EQ(j.verdict, ssd::Verdict::failed) << ssd::describe(j);
  // And one that stores the limit rounded to bf16 (0.00100708) instead of fp32 is off by far more
  // than an fp32 rounding: FAILED too.
  const ssd::CaseJudgement k = judge_planted(p, [&](const std::string& name, ssd::Tensor& t, const ssd::Outputs&,
                                                    const ssd::Bounds&) {
    if (name == "dt_out") t.set(at, ssd::round_to(ssd::DType::bf16, 0.001));
  });
  EXPECT_EQ(k.verdict, ssd::Verdict::failed) << ssd::describe(k);
}

}  // namespace

namespace {

// mamba2 with limit=-1,... and no softplus: bench raw dt U(-3,-1) is clamped to dt' = -1, so with
// A down to -20 every step raises dA by up to 20. Chunk totals exp(dA[Q-1]) grow the carried state
// past fp32's range; a token that starts a new sequence multiplies it by 0 (a masked term), and
// inf x 0 is NaN in the emulation, while the float64 shadow, masked by seq_idx, is small there.
constexpr const char* kMamba2Growth[] = {
    "mamba2:bf16 b2 s75 h1 p6 g1 n5 q6 limit=-1,1 +Dhp seq=3:6,10,18,26,15 A=f16 fill=bench seed=182716",
    "mamba2:f16 b1 s14 h3 p1 g3 n1 q1 limit=-1,0.2 +Dhp +init seq=0:7,6,-1 x=f16 fill=bench seed=0",
};

TEST(FalseAlarm, Mamba2StateGrowingPastFp32Passes) {
  for (const char* line : kMamba2Growth) {
    const ssd::Problem p = ssd::parse_problem(line);
    // The premise: the emulation's out holds a non-finite value where the oracle's is finite.
    const ssd::InputSet in = ssd::make_inputs(p);
    const ssd::Outputs oracle = ssd::op_spec(p.op).chunked(p, in);
    const ssd::KernelRun run = ssd::run_kernel(ssd::KernelLibrary::open("emulation"), p, in);
    bool nonfinite_where_oracle_finite = false;
    for (std::int64_t i = 0; i < oracle.get("out").value.numel(); ++i)
      nonfinite_where_oracle_finite = nonfinite_where_oracle_finite || (oracle.get("out").is_defined(i) &&
                                      std::isfinite(oracle.get("out").value[i]) && !std::isfinite(run.outputs.get("out").value[i]));
    EXPECT_TRUE(nonfinite_where_oracle_finite) << line;
    expect_honest_pass(line);
  }
}

TEST(FalseAlarm, Mamba2GrowthCaseStillCatchesAWrongOut) {
  for (const char* line : kMamba2Growth) {
    const ssd::Problem p = ssd::parse_problem(line);
    std::int64_t checked = 0;
    bool planted = false;
    const ssd::CaseJudgement j = judge_planted(p, [&](const std::string& name, ssd::Tensor& t, const ssd::Outputs& oracle,
                                                      const ssd::Bounds& bounds) {
      if (name != "out") return;
      const ssd::OutputBound& b = bounds.get("out");
      for (std::int64_t i = 0; i < t.numel(); ++i) {
        if (!oracle.get("out").is_defined(i) || !std::isfinite(b.bound[i])) continue;
        ++checked;
        if (planted || b.is_exact(i)) continue;
        t.set(i, oracle.get("out").value[i] + 4 * b.bound[i] + std::fabs(oracle.get("out").value[i]) * 0x1p-6);
        planted = true;
      }
    });
    ASSERT_TRUE(planted) << line;
    EXPECT_GT(checked, 0) << line;
    std::printf("%s: %lld of %lld defined out elements keep a finite bound\n", line, static_cast<long long>(checked),
                static_cast<long long>(oracle_defined_count(p)));
    EXPECT_EQ(j.verdict, ssd::Verdict::failed) << ssd::describe(j);
  }
}

}  // namespace

namespace {

// mamba2 under fill=underflow (A down to -403) with limit=-0.1,...: dt' = -0.1 raises dA by up to
// 40 a token, so the float64 oracle itself overflows (out -inf) while the fp32 emulation, which
// overflows earlier and meets an inf x 0 or inf - inf, stores NaN there.
constexpr const char* kFloat64Overflow =
    "mamba2:bf16 b1 s24 h4 p1 g4 n2 q8 +dt_bias limit=-0.1,0.2 +init seq=0:24 fill=underflow seed=0";

TEST(FalseAlarm, OracleOverflowAcceptsAnyNonFiniteValue) {
  const ssd::Problem p = ssd::parse_problem(kFloat64Overflow);
  const ssd::InputSet in = ssd::make_inputs(p);
  const ssd::Outputs oracle = ssd::op_spec(p.op).chunked(p, in);
  const ssd::KernelRun run = ssd::run_kernel(ssd::KernelLibrary::open("emulation"), p, in);
  bool differs = false;  // non-finite in both, but not the same non-finite value
  for (std::int64_t i = 0; i < oracle.get("out").value.numel(); ++i) {
    const double want = oracle.get("out").value[i], got = run.outputs.get("out").value[i];
    differs = differs || (!std::isfinite(want) && !std::isfinite(got) && std::isnan(want) != std::isnan(got));
  }
  EXPECT_TRUE(differs);
  expect_honest_pass(kFloat64Overflow);
}

TEST(FalseAlarm, OracleOverflowStillRefusesAFiniteValue) {
  const ssd::Problem p = ssd::parse_problem(kFloat64Overflow);
  bool planted = false;
  const ssd::CaseJudgement j = judge_planted(p, [&](const std::string& name, ssd::Tensor& t, const ssd::Outputs& oracle,
                                                    const ssd::Bounds&) {
    if (name != "out" || planted) return;
    for (std::int64_t i = 0; i < t.numel() && !planted; ++i)
      if (!std::isfinite(oracle.get("out").value[i])) {
        t.set(i, 1.0);
        planted = true;
      }
  });
  ASSERT_TRUE(planted);
  EXPECT_EQ(j.verdict, ssd::Verdict::failed) << ssd::describe(j);
}

}  // namespace

namespace {

// mamba2 with limit=-1,1 and an f16 out: an element whose oracle value is +28770 has a bound of
// 1.35e8 (cancelling terms under a rising dA), and the emulation's fp32 value lies below -65520,
// so the f16 store is -inf: correctly rounded, on the other side of zero from the oracle.
constexpr const char* kF16OverflowOtherSign = "mamba2:f16 b1 s309 h8 p3 g8 n20 q103 +dt_bias limit=-1,1 seq=0:309 C=bf16 seed=1905";

TEST(FalseAlarm, StorageOverflowOnEitherSideOfAWideBoundPasses) {
  const ssd::Problem p = ssd::parse_problem(kF16OverflowOtherSign);
  const ssd::InputSet in = ssd::make_inputs(p);
  const ssd::Outputs oracle = ssd::op_spec(p.op).chunked(p, in);
  const ssd::KernelRun run = ssd::run_kernel(ssd::KernelLibrary::open("emulation"), p, in);
  bool other_sign = false;
  for (std::int64_t i = 0; i < oracle.get("out").value.numel(); ++i) {
    const double want = oracle.get("out").value[i], got = run.outputs.get("out").value[i];
    other_sign = other_sign || (std::isfinite(want) && std::isinf(got) && (got > 0) != (want > 0));
  }
  EXPECT_TRUE(other_sign);
  expect_honest_pass(kF16OverflowOtherSign);
}

TEST(FalseAlarm, StorageOverflowStillRefusedWhereTheBoundStaysInRange) {
  const ssd::Problem p = ssd::parse_problem(kF16OverflowOtherSign);
  bool planted = false;
  // +inf where y* + bound rounds to a finite f16: no honest value rounds to +inf there.
  const ssd::CaseJudgement j = judge_planted(p, [&](const std::string& name, ssd::Tensor& t, const ssd::Outputs& oracle,
                                                    const ssd::Bounds& bounds) {
    if (name != "out" || planted) return;
    for (std::int64_t i = 0; i < t.numel() && !planted; ++i) {
      const double y = oracle.get("out").value[i], b = bounds.get("out").bound[i];
      if (std::isfinite(b) && std::isfinite(ssd::round_to(ssd::DType::f16, y + b))) {
        t.set(i, std::numeric_limits<double>::infinity());
        planted = true;
      }
    }
  });
  ASSERT_TRUE(planted);
  EXPECT_EQ(j.verdict, ssd::Verdict::failed) << ssd::describe(j);
}

// chunk_cumsum, Q = 204, dt' of both signs (limit=-1,inf): the sequential f32 cumsum's roundings
// line up over a chunk (the running sum keeps its binade), so its error grows like Q u |y|, not
// like phi(Q) u |y|; the honest emulation's dA_cumsum was SUSPECT at ratio 1.53 while every element
// sat within its bound (max r 0.433). The statistic now charges a running sum n times.
constexpr const char* kLongCumsum = "chunk_cumsum:bf16 b1 s204 h8 q204 +dt_bias limit=-1,inf A=bf16 seed=787142";

TEST(FalseAlarm, LongSequentialCumsumIsNotSuspect) { expect_honest_pass(kLongCumsum); }

TEST(FalseAlarm, LongCumsumCaseStillCatchesAWrongValue) {
  const ssd::Problem p = ssd::parse_problem(kLongCumsum);
  bool planted = false;
  // One element of dA_cumsum moved by twice its bound.
  const ssd::CaseJudgement j = judge_planted(p, [&](const std::string& name, ssd::Tensor& t, const ssd::Outputs& oracle,
                                                    const ssd::Bounds& bounds) {
    if (name != "dA_cumsum" || planted) return;
    for (std::int64_t i = 0; i < t.numel() && !planted; ++i) {
      const double b = bounds.get("dA_cumsum").bound[i];
      if (std::isfinite(b) && b > 0) {
        t.set(i, oracle.get("dA_cumsum").value[i] + 2 * b);
        planted = true;
      }
    }
  });
  ASSERT_TRUE(planted);
  EXPECT_EQ(j.verdict, ssd::Verdict::failed) << ssd::describe(j);
}

}  // namespace

namespace {

// A packed f16 batch under fill=underflow, Q = 2: the second sequence starts at token 33, inside a
// chunk of the batch's global grid, on which the emulation cuts it; the oracle cuts it from its own
// start. Token 58's round_x(B w) lands in f16's subnormal range (an absolute error up to 2^-25), and
// on the global grid it reaches the final state undecayed (last chunk 58..59), while the
// per-sequence grid's floor charge decayed it by token 59's step (almost 0 under this fill): the
// emulation's final_states[0,19,1,2] was off by 1.85e-8 against a bound of 1.2e-8 (r 1.54). The
// floor is now also carried one chunk undecayed in a packed batch.
constexpr const char* kSubnormalFloorOnAnotherGrid =
    "mamba2:f16 b1 s60 h64 p3 g8 n4 q2 +softplus +varlen seq=0:33,27 state=f32 fill=underflow seed=970914";
// final_states [1,64,3,4] at (0,19,1,2): ((19 * 3 + 1) * 4 + 2 = 234.
constexpr std::int64_t kFloorElement = 234;

TEST(FalseAlarm, SubnormalFloorReachesAPackedSequenceOnTheGlobalGrid) { expect_honest_pass(kSubnormalFloorOnAnotherGrid); }

TEST(FalseAlarm, SubnormalFloorCaseStillCatchesAWrongState) {
  const ssd::Problem p = ssd::parse_problem(kSubnormalFloorOnAnotherGrid);
  // The element moved by 2.5e-7, about 13 times the emulation's own error there (1.85e-8) and
  // 8 half-spacings of f16's subnormals: far beyond any rounding of this case.
  const ssd::CaseJudgement j = judge_planted(p, [&](const std::string& name, ssd::Tensor& t, const ssd::Outputs& oracle,
                                                    const ssd::Bounds&) {
    if (name == "final_states") t.set(kFloorElement, oracle.get("final_states").value[kFloorElement] + 2.5e-7);
  });
  EXPECT_EQ(j.verdict, ssd::Verdict::failed) << ssd::describe(j);
}

}  // namespace
