// The committed golden set: regen reproduces it byte for byte, verify passes, and the manifest
// covers every op, dtype, option and value regime of the contract within the size budget.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "ssd/golden/verify.h"
#include "support.h"

namespace {

using namespace golden_test;

TEST(GoldenSet, RegenCheckReproducesTheCommittedFiles) {
  const ToolRun run = run_tool({"regen", "--check", "--data", SSD_GOLDEN_DATA});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_EQ(run.out.find("note:"), std::string::npos) << "stray files or non-canonical manifest lines:\n" << run.out;
}

TEST(GoldenSet, VerifyPasses) {
  const ToolRun run = run_tool({"verify", "--data", SSD_GOLDEN_DATA});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.err, "");
}

// The library's verification, called directly: a committed case verifies, and one changed bound
// element, a changed input or a manifest line naming another problem is reported.
TEST(GoldenSet, VerificationFromTheLibraryCatchesEachKindOfChange) {
  const auto entries = ssd::read_manifest(fs::path(SSD_GOLDEN_DATA) / "manifest.txt");
  ASSERT_FALSE(entries.empty());
  const ssd::ManifestEntry& e = entries.front();
  const ssd::CaseFile original = ssd::read_case(fs::path(SSD_GOLDEN_DATA) / e.file_name);
  EXPECT_NO_THROW(ssd::verify_golden_case(original, e.text));

  auto rejection = [&](const ssd::CaseFile& c, std::string_view listed) {
    try {
      ssd::verify_golden_case(c, listed);
    } catch (const std::runtime_error& x) {
      return std::string(x.what());
    }
    return std::string("(accepted)");
  };
  ssd::CaseFile bound_changed = original;
  ssd::OutputBound& b = bound_changed.bounds.get(bound_changed.bounds.all().front().name);
  b.bound.data()[0] = std::nextafter(b.bound[0], 1e300);
  EXPECT_NE(rejection(bound_changed, e.text).find("/bounds/" + b.name + " differs at " + ssd::index_string(b.bound.shape(), 0)),
            std::string::npos) << rejection(bound_changed, e.text);

  ssd::CaseFile input_changed = original;
  const std::string input = input_changed.inputs.all().begin()->first;
  ssd::Tensor t = input_changed.inputs.at(input);
  t.data()[0] = t[0] == 1.0 ? 2.0 : 1.0;
  input_changed.inputs.put(input, t);
  EXPECT_NE(rejection(input_changed, e.text).find("/inputs/" + input + " is not make_inputs(problem)"), std::string::npos)
      << rejection(input_changed, e.text);

  EXPECT_NE(rejection(original, entries.back().text).find("the manifest lists"), std::string::npos);
}

TEST(GoldenSet, ManifestCoversEveryOpDtypeAndOption) {
  const auto entries = ssd::read_manifest(fs::path(SSD_GOLDEN_DATA) / "manifest.txt");
  std::set<std::string> seen;  // "op:dtype", "op+option"
  for (const auto& e : entries) {
    const ssd::Problem& p = e.problem;
    const std::string op(ssd::op_name(p.op));
    seen.insert(op + ":" + std::string(ssd::dtype_name(p.dtype)));
    seen.insert(op + " fill=" + p.fill);
    auto mark = [&](bool on, const char* option) {
      if (on) seen.insert(op + "+" + option);
    };
    mark(p.dt_bias, "dt_bias");
    mark(p.softplus, "softplus");
    mark(p.dt_limit.has_value(), "limit");
    mark(p.dots == ssd::DotPrecision::tf32, "dots");
    mark(p.D == ssd::DMode::per_head, "D");
    mark(p.D == ssd::DMode::per_head_dim, "Dhp");
    mark(p.z, "z");
    mark(p.init, "init");
    mark(p.seq.kind != ssd::SeqSpec::Kind::none, "seq");
    mark(p.causal, "causal");
    mark(p.sbi, "sbi");
    mark(p.sbi, "slots");
    mark(p.tie, "tie");
    mark(p.varlen, "varlen");
    mark(p.tokens > 0, "tokens");
    mark(!p.rows.empty(), "rows");
    mark(p.dst, "dst");
    mark(p.spec, "spec");
    mark(p.accepted, "accepted");
    mark(p.nowrite, "nowrite");
    mark(p.inter, "inter");
    mark(p.pad != -1, "pad");
    mark(p.farslots, "farslots");
    mark(p.dtypes.count("state") > 0, "state");
    mark(p.dtypes.count("out") > 0, "out");
    for (const auto& [role, dtype] : p.dtypes)
      if (role != "out" && !(role == "state" && ssd::op_spec(p.op).takes_flag("state"))) seen.insert(op + "=" + role);
  }
  for (ssd::Op op : ssd::kAllOps) {
    const ssd::OpSpec& spec = ssd::op_spec(op);
    const std::string name(spec.name);
    for (ssd::DType d : spec.primary_dtypes)
      EXPECT_TRUE(seen.count(name + ":" + std::string(ssd::dtype_name(d)))) << name << " lacks dtype " << ssd::dtype_name(d);
    for (std::string_view fill : spec.fills)
      EXPECT_TRUE(seen.count(name + " fill=" + std::string(fill))) << name << " lacks value regime " << fill;
    for (std::string_view flag : spec.flags)
      EXPECT_TRUE(seen.count(name + "+" + std::string(flag))) << name << " lacks option " << flag;
    for (const ssd::InputRole& role : spec.inputs) {
      if (role.overridable) {
        EXPECT_TRUE(seen.count(name + "=" + role.name)) << name << " never overrides " << role.name;
      }
    }
  }
}

TEST(GoldenSet, EveryListedFileExistsWithinTheSizeBudget) {
  const fs::path data(SSD_GOLDEN_DATA);
  const auto entries = ssd::read_manifest(data / "manifest.txt");
  std::uintmax_t total = 0;
  for (const auto& e : entries) {
    ASSERT_TRUE(fs::exists(data / e.file_name)) << e.text;
    total += fs::file_size(data / e.file_name);
  }
  EXPECT_LT(total, 20u << 20) << "the golden set must stay under 20 MB";
  EXPECT_GE(entries.size(), 100u);
}

}  // namespace
