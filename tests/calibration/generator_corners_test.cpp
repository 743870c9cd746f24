// How often a campaign's generator draws each corner where real kernels broke, judged from the
// case's inputs (not from its problem string): raw dt where fp32 exp overflows under softplus, dA
// rising inside a chunk, more than 4 heads, G other than 1, H/2 and H, and 64 heads in 8 groups.
// Every corner an op can have must be drawn in at least 1% of its cases, and the honest emulation
// must pass the first cases of each corner. The fractions are printed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>

#include "ssd/fuzz/generators.h"
#include "ssd/reference/helpers.h"
#include "ssd/harness/runner.h"

namespace {

constexpr int kCases = 3000;           // per op
constexpr double kMinFraction = 0.01;  // every applicable corner at least this often
constexpr int kHonestChecks = 25;      // corner cases per op and corner run through the emulation

enum Corner { exp_overflow, dA_rising, many_heads, odd_groups, heads64_groups8, kCorners };
const char* const kCornerNames[] = {"dt past fp32 exp range", "dA rises in a chunk", "H > 4",
                                    "G not in {1,H/2,H}", "H = 64, G = 8"};

// Draw k of a campaign's small-shape generator (as fuzz/src/campaign.cpp seeds it).
ssd::Problem draw(ssd::Op op, std::uint64_t k) {
  const rc::Random::Key key{0x9E3779B97F4A7C15ull * (k + 1), k ^ 0xD1B54A32D192ED03ull, k + 7, static_cast<std::uint64_t>(op)};
  return ssd::gen_problem(op, ssd::campaign_gen_options(false))(rc::Random(key), rc::kNominalSize).value();
}

// fp32 exp(x) overflows: a softplus evaluated as log(exp(x) + 1) without its threshold is inf.
bool fp32_exp_overflows(double x) { return std::isinf(std::exp(static_cast<float>(x))); }

bool has_corner(Corner c, const ssd::Problem& p, const ssd::InputSet& in) {
  const ssd::Op op = p.op;
  switch (c) {
    case exp_overflow: {
      const bool softplus = op == ssd::Op::discretize_segsum || p.softplus;
      if (!softplus || !in.find("dt")) return false;
      const ssd::Tensor& dt = in.at("dt");
      const ssd::Tensor* bias = in.find("dt_bias");
      for (std::int64_t i = 0; i < dt.numel(); ++i) {
        // Bias per head [H] (prefill) or per head and channel [H,P] (recurrent, dt [B,H,P]).
        const double b = bias == nullptr ? 0.0 : op == ssd::Op::recurrent ? (*bias)[i % bias->numel()] : (*bias)[i % p.h];
        if (fp32_exp_overflows(dt[i] + b)) return true;
      }
      return false;
    }
    case dA_rising: {
      if (op == ssd::Op::chunk_state || op == ssd::Op::chunk_scan) {
        const ssd::Tensor& dA = in.at("dA_cumsum");  // [b,h,NC,q]
        const ssd::ChunkGrid grid{p.s, p.q};
        for (std::int64_t row = 0; row < dA.numel() / p.q; ++row)
          for (std::int64_t i = 1; i < grid.length(row % grid.count()); ++i)
            if (dA[row * p.q + i] > dA[row * p.q + i - 1]) return true;
        return false;
      }
      if (op != ssd::Op::mamba2 && op != ssd::Op::chunk_cumsum) return false;
      // A step A dt' > 0: dt' < 0 through a negative lower limit (A < 0), the cumsum rises there.
      const ssd::Tensor& dt = in.at("dt");  // [b,s,h]
      const ssd::Tensor* bias = in.find("dt_bias");
      const ssd::DtLimit limit = p.dt_limit.value_or(ssd::DtLimit{});
      for (std::int64_t i = 0; i < dt.numel(); ++i) {
        const std::int64_t h = i % p.h;
        if (in.at("A")[h] * ssd::process_dt(dt[i], bias ? (*bias)[h] : 0.0, p.softplus, limit) > 0) return true;
      }
      return false;
    }
    case many_heads: return op == ssd::Op::chunk_coupling ? p.g > 4 : p.h > 4;
    case odd_groups: return p.h > 0 && p.g > 0 && p.g != 1 && 2 * p.g != p.h && p.g != p.h;
    case heads64_groups8: return p.h == 64 && p.g == 8;
    default: return false;
  }
}

bool applies(Corner c, ssd::Op op) {
  const ssd::OpSpec& spec = ssd::op_spec(op);
  switch (c) {
    case exp_overflow: return op == ssd::Op::mamba2 || op == ssd::Op::chunk_cumsum || op == ssd::Op::recurrent ||
                              op == ssd::Op::discretize_segsum;
    case dA_rising: return op == ssd::Op::mamba2 || op == ssd::Op::chunk_cumsum || op == ssd::Op::chunk_state ||
                           op == ssd::Op::chunk_scan;
    case many_heads: return spec.takes_dim('h') || spec.takes_dim('g');
    case odd_groups:
    case heads64_groups8: return spec.takes_dim('h') && spec.takes_dim('g');
    default: return false;
  }
}

std::map<ssd::Op, std::array<int, kCorners>>& counts() {
  static std::map<ssd::Op, std::array<int, kCorners>> c;
  return c;
}

void measure(ssd::Op op) {
  const ssd::KernelLibrary emulation = ssd::KernelLibrary::open("emulation");
  std::array<int, kCorners> found{};
  for (int k = 0; k < kCases; ++k) {
    const ssd::Problem p = draw(op, static_cast<std::uint64_t>(k));
    const ssd::InputSet in = ssd::make_inputs(p);
    for (int c = 0; c < kCorners; ++c) {
      if (!applies(Corner(c), op) || !has_corner(Corner(c), p, in)) continue;
      if (found[static_cast<std::size_t>(c)]++ < kHonestChecks) {
        const ssd::CaseJudgement j = ssd::check_case(emulation, p);
        EXPECT_TRUE(j.verdict == ssd::Verdict::passed || j.verdict == ssd::Verdict::mistrusted)
            << kCornerNames[c] << ": " << ssd::describe(j);
      }
    }
  }
  counts()[op] = found;
  for (int c = 0; c < kCorners; ++c) {
    if (!applies(Corner(c), op)) continue;
    EXPECT_GE(found[static_cast<std::size_t>(c)], kMinFraction * kCases)
        << ssd::op_name(op) << ": corner '" << kCornerNames[c] << "' drawn in " << found[static_cast<std::size_t>(c)]
        << " of " << kCases << " cases";
  }
}

#define CORNERS(Name, op) \
  TEST(GeneratorCorners, Name) { measure(ssd::Op::op); }
CORNERS(Mamba2, mamba2)
CORNERS(ChunkCumsum, chunk_cumsum)
CORNERS(ChunkCoupling, chunk_coupling)
CORNERS(ChunkState, chunk_state)
CORNERS(StatePassing, state_passing)
CORNERS(ChunkScan, chunk_scan)
CORNERS(Recurrent, recurrent)
CORNERS(DiscretizeSegsum, discretize_segsum)

// Runs last: the table of fractions (percent of an op's cases; "-" where the op has no such corner).
TEST(GeneratorCorners, Table) {
  std::printf("%-18s", "op");
  for (const char* name : kCornerNames) std::printf(" | %22s", name);
  std::printf("\n");
  for (const auto& [op, found] : counts()) {
    std::printf("%-18s", std::string(ssd::op_name(op)).c_str());
    for (int c = 0; c < kCorners; ++c) {
      if (applies(Corner(c), op))
        std::printf(" | %21.2f%%", 100.0 * found[static_cast<std::size_t>(c)] / kCases);
      else
        std::printf(" | %22s", "-");
    }
    std::printf("\n");
  }
}

}  // namespace
