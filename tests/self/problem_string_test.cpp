// The problem string: parse(print(p)) == p for generated problems of every op, the canonical form
// of the OpSpec lists, and a one-line error naming the token for every malformed string.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "ssd/reference/decode_plan.h"
#include "ssd/reference/errors.h"
#include "ssd/fuzz/generators.h"
#include "ssd/reference/op_spec.h"

namespace {

using ssd::Op;

RC_GTEST_PROP(ProblemString, ParsePrintRoundTripsForEveryOp, ()) {
  const Op op = *rc::gen::elementOf(ssd::kAllOps);
  const ssd::Problem p = *ssd::gen_problem(op);
  const std::string line = ssd::to_string(p);
  RC_ASSERT(ssd::parse_problem(line) == p);
  ssd::Problem with_big_seed = p;
  with_big_seed.seed = ~std::uint64_t{0} - *rc::gen::inRange<std::uint64_t>(0, 1000);
  RC_ASSERT(ssd::parse_problem(ssd::to_string(with_big_seed)) == with_big_seed);
  RC_ASSERT(ssd::to_string(ssd::parse_problem(line)) == line);
}

TEST(ProblemString, OpSpecListsAreCanonicalAndValid) {
  for (Op op : ssd::kAllOps) {
    const ssd::OpSpec& spec = ssd::op_spec(op);
    for (const auto& list : {spec.smoke(), spec.workloads()}) {
      EXPECT_FALSE(list.empty()) << spec.name;
      for (const ssd::Problem& p : list) {
        const std::string line = ssd::to_string(p);
        EXPECT_EQ(ssd::parse_problem(line), p) << line;
        EXPECT_EQ(ssd::to_string(ssd::parse_problem(line)), line);
        EXPECT_FALSE(ssd::invalid_reason(p).has_value()) << line << ": " << ssd::invalid_reason(p).value_or("");
      }
    }
  }
}

TEST(ProblemString, ReadsAFullExample) {
  const ssd::Problem p = ssd::parse_problem(
      "mamba2:bf16 b2 s1000 h8 p64 g2 n128 q256 +dt_bias +softplus limit=0.001,inf +Dhp +z +init "
      "seq=1:400,500,-100 C=f32 fill=bench seed=7");
  EXPECT_EQ(p.op, Op::mamba2);
  EXPECT_EQ(p.dtype, ssd::DType::bf16);
  EXPECT_EQ(p.b, 2);
  EXPECT_EQ(p.s, 1000);
  EXPECT_EQ(p.h, 8);
  EXPECT_EQ(p.p, 64);
  EXPECT_EQ(p.g, 2);
  EXPECT_EQ(p.n, 128);
  EXPECT_EQ(p.q, 256);
  EXPECT_TRUE(p.dt_bias && p.softplus && p.z && p.init);
  EXPECT_EQ(p.D, ssd::DMode::per_head_dim);
  ASSERT_TRUE(p.dt_limit.has_value());
  EXPECT_EQ(p.dt_limit->lo, 0.001);
  EXPECT_TRUE(std::isinf(p.dt_limit->hi));
  EXPECT_EQ(p.seq.kind, ssd::SeqSpec::Kind::runs);
  EXPECT_EQ(p.seq.first_id, 1);
  EXPECT_EQ(p.seq.runs, (std::vector<std::int64_t>{400, 500, -100}));
  EXPECT_EQ(ssd::role_dtype(p, "C"), ssd::DType::f32);
  EXPECT_EQ(ssd::role_dtype(p, "B"), ssd::DType::bf16);  // follows the primary dtype
  EXPECT_EQ(ssd::role_dtype(p, "dt"), ssd::DType::f32);  // fixed by the OpSpec
  EXPECT_EQ(p.fill, "bench");
  EXPECT_EQ(p.seed, 7u);
  EXPECT_FALSE(ssd::invalid_reason(p).has_value());
}

TEST(ProblemString, AcceptsBenchmarkNamesAndAnyTokenOrder) {
  EXPECT_EQ(ssd::parse_problem("SSDChunkScanFwd:f16 seed=3 q16 b1 s20 h2 p4 g1 n8 +z"),
            ssd::parse_problem("chunk_scan:f16 b1 s20 h2 p4 g1 n8 q16 +z seed=3"));
}

void expect_rejected(const std::string& line, const std::string& fragment) {
  try {
    ssd::parse_problem(line);
    ADD_FAILURE() << "accepted: " << line;
  } catch (const ssd::ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_EQ(e.argument(), "problem");
  }
}

TEST(ProblemString, RejectsMalformedStringsNamingTheToken) {
  expect_rejected("", "empty");
  expect_rejected("mamba3:f32 seed=1", "unknown op 'mamba3'");
  expect_rejected("mamba2 b1 seed=1", "<op>:<dtype>");
  expect_rejected("mamba2:f8 b1 seed=1", "unknown dtype 'f8'");
  expect_rejected("mamba2:f32 b1 s4 h1 p1 g1 n1 q4", "missing seed");
  expect_rejected("mamba2:f32 b1 s4 h1 p1 g1 n1 q4 +gate seed=1", "'+gate'");
  expect_rejected("chunk_cumsum:f32 b1 s4 h1 q4 +z seed=1", "'+z': chunk_cumsum does not take this option");
  expect_rejected("recurrent:f32 b2 h1 p1 g1 n1 +D seed=1", "'+D': recurrent does not take this option");
  expect_rejected("chunk_cumsum:f32 b1 s4 h1 q4 p3 seed=1", "'p3': chunk_cumsum has no size 'p'");
  expect_rejected("mamba2:f32 b1 b2 s4 h1 p1 g1 n1 q4 seed=1", "'b2': given twice");
  expect_rejected("mamba2:f32 b1 sX h1 p1 g1 n1 q4 seed=1", "'sX'");
  expect_rejected("mamba2:f32 b1 s4 h1 p1 g1 n1 q4 limit=0.1 seed=1", "limit=<lo>,<hi>");
  expect_rejected("mamba2:f32 b1 s4 h1 p1 g1 n1 q4 seq=0:2,0,2 seed=1", "run length of 0");
  expect_rejected("mamba2:f32 b1 s4 h1 p1 g1 n1 q4 seq=0:2,-1,1 seed=1", "sequence after padding");
  expect_rejected("mamba2:f32 b1 s4 h1 p1 g1 n1 q4 seq_idx=f32 seed=1", "fixed by the contract");
  expect_rejected("mamba2:f32 b1 s4 h1 p1 g1 n1 q4 cb=f32 seed=1", "unknown key 'cb'");
  expect_rejected("mamba2:f32 b1 s4 h1 p1 g1 n1 q4 fill=wild seed=1", "unknown fill regime");
  expect_rejected("mamba2:f32 b1 s4 h1 p1 g1 n1 q4 seed=-1", "unsigned 64-bit");
  expect_rejected("mamba2:f32 b1 s4 h1 p1 g1 n1 q4 limit=nan,1 seed=1", "'nan' is not a number");
  expect_rejected("mamba2:f32 b1 s4 h1 p1 g1 n1 q4 out=f32 seed=1", "'out=f32': mamba2 does not take this option");
  // Slot-table keys without the slot table: no tensor would show them (state has b rows).
  expect_rejected("recurrent:f16 b7 h4 p8 g1 n64 slots=9 seed=49", "'slots=9': slots= needs +sbi");
  expect_rejected("recurrent:f16 b2 h1 p1 g1 n1 pad=0 seed=1", "'pad=0': pad= needs +sbi");
  expect_rejected("recurrent:f16 b2 h1 p1 g1 n1 tokens=2 rows=1,2 seed=1", "'rows=1,2': rows= needs +varlen");
  expect_rejected("recurrent:f16 b2 h1 p1 g1 n1 +varlen tokens=2 rows=1,-2 seed=1", "non-negative");
  expect_rejected("recurrent:f16 b2 h1 p1 g1 n1 +varlen tokens=2 rows=1, seed=1", "is not an integer");
  expect_rejected("mamba2:f32 b1 s4 h1 p1 g1 n1 q4 rows=4 seed=1", "mamba2 does not take this option");
}

TEST(ProblemString, RowsGiveAVarlenCallsRowLengths) {
  // rows=2,0,3: cu_seqlens 0, 2, 2, 5 and x [5,H,P]; printed after tokens=, round-tripping.
  const char* text = "recurrent:f32 b3 h1 p2 g1 n2 +varlen tokens=3 rows=2,0,3 seed=4";
  const ssd::Problem p = ssd::parse_problem(text);
  EXPECT_EQ(p.rows, (std::vector<std::int64_t>{2, 0, 3}));
  EXPECT_EQ(ssd::to_string(p), text);
  EXPECT_EQ(ssd::decode_row_lengths(p), (std::vector<std::int64_t>{2, 0, 3}));
  const ssd::InputSet in = ssd::make_inputs(p);
  EXPECT_EQ(in.at("cu_seqlens").values(), (std::vector<double>{0, 2, 2, 5}));
  EXPECT_EQ(in.at("x").shape(), (ssd::Shape{5, 1, 2}));
}

TEST(ProblemString, PrintsSlotsWheneverTheStructHoldsThem) {
  // A problem built in code with slots but no +sbi prints its slots, so the string that names
  // a judged case is the case (the parser then refuses it, naming the token).
  ssd::Problem p = ssd::parse_problem("recurrent:f16 b7 h4 p8 g1 n64 seed=49");
  p.slots = 9;
  EXPECT_NE(ssd::to_string(p).find(" slots=9"), std::string::npos) << ssd::to_string(p);
  expect_rejected(ssd::to_string(p), "slots= needs +sbi");
}

TEST(ProblemString, InvalidCasesSayWhy) {
  auto why = [](const char* line) { return ssd::invalid_reason(ssd::parse_problem(line)).value_or("valid"); };
  EXPECT_NE(why("mamba2:f32 b1 s4 h3 p1 g2 n1 q4 seed=1").find("H % G"), std::string::npos);
  EXPECT_NE(why("mamba2:f32 b1 s0 h1 p1 g1 n1 q4 seed=1").find("size s"), std::string::npos);
  EXPECT_NE(why("mamba2:f32 b1 s5 h1 p1 g1 n1 q4 seq=0:2,2 seed=1").find("cover 4 tokens"), std::string::npos);
  EXPECT_NE(why("mamba2:f32 b1 s5 h1 p1 g1 n1 q4 z=f16 seed=1").find("absent input 'z'"), std::string::npos);
  EXPECT_NE(why("mamba2:f32 b1 s5 h1 p1 g1 n1 q4 limit=1,0 seed=1").find("lo <= hi"), std::string::npos);
  EXPECT_NE(why("recurrent:f32 b4 h1 p1 g1 n1 +sbi slots=3 seed=1").find("slots"), std::string::npos);
  EXPECT_NE(why("discretize_segsum:bf16 b1 s10 q4 h1 p1 g1 n1 seed=1").find("multiple of Q"), std::string::npos);
  EXPECT_NE(why("recurrent:f32 b3 h1 p1 g1 n1 +varlen tokens=2 rows=1,2 seed=1").find("gives 2 row lengths, b = 3"),
            std::string::npos);
  EXPECT_NE(why("recurrent:f32 b2 h1 p1 g1 n1 +varlen tokens=2 rows=1,3 seed=1").find("more than tokens = 2"),
            std::string::npos);
  EXPECT_NE(why("recurrent:f32 b2 h1 p1 g1 n1 +varlen tokens=2 rows=0,0 seed=1").find("at least one token"),
            std::string::npos);
  EXPECT_THROW(ssd::make_inputs(ssd::parse_problem("mamba2:f32 b1 s4 h3 p1 g2 n1 q4 seed=1")), ssd::ArgumentError);
}

}  // namespace

namespace {

// The OpSpec's output shapes are what the oracle produces.
TEST(OpSpec, OutputShapesMatchTheOracle) {
  for (ssd::Op op : ssd::kAllOps)
    for (const ssd::Problem& p : ssd::op_spec(op).smoke()) {
      const ssd::Outputs out = ssd::op_spec(op).chunked(p, ssd::make_inputs(p));
      const auto shapes = ssd::output_shapes(p);
      ASSERT_EQ(shapes.size(), out.all().size()) << ssd::to_string(p);
      for (const auto& [name, shape] : shapes) EXPECT_EQ(out.get(name).value.shape(), shape) << ssd::to_string(p) << " " << name;
    }
}

}  // namespace
