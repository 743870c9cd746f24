// The suite's CUDA kernels against the oracle, through the kernel ABI: every golden problem, 200
// random problems per op, every full-size workload, and bit-identical repeated runs. Prints the
// verdict table (op x dtype: cases, PASSED, FAILED, max r). Exits 77 (SKIPPED) when the library
// finds no CUDA device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "ssd/harness/abi_buffer.h"
#include "ssd/fuzz/generators.h"
#include "ssd/harness/runner.h"
#include "ssd/reference/layout.h"
#include "ssd/reference/truth.h"

namespace {

std::string g_library_path;
std::string g_manifest = SSD_GOLDEN_MANIFEST;

const ssd::KernelLibrary& gpu() {
  static const ssd::KernelLibrary library = ssd::KernelLibrary::open(g_library_path);
  return library;
}

struct Row {
  int cases = 0, passed = 0, failed = 0, suspect = 0, other = 0;
  double max_r = 0, max_ratio = 0;  // max_ratio: the SUSPECT statistic (ssd/reference/suspicion.h)
};
std::map<std::string, Row>& table() {
  static std::map<std::string, Row> rows;
  return rows;
}

// Checks one case, records it in the verdict table, and returns the judgement.
ssd::CaseJudgement record(const std::string& group, const ssd::Problem& p) {
  const ssd::CaseJudgement j = ssd::check_case(gpu(), p);
  Row& row = table()[group + " " + std::string(ssd::op_name(p.op)) + " " + std::string(ssd::dtype_name(p.dtype))];
  ++row.cases;
  if (j.verdict == ssd::Verdict::passed) ++row.passed;
  else if (j.verdict == ssd::Verdict::failed) ++row.failed;
  else if (j.verdict == ssd::Verdict::suspect) ++row.suspect;
  else ++row.other;
  row.max_r = std::max(row.max_r, j.max_r());
  row.max_ratio = std::max(row.max_ratio, j.max_ratio());
  if (ssd::is_alarm(j.verdict)) std::printf("%s\n", ssd::describe(j).c_str());
  return j;
}

std::vector<ssd::Problem> golden_problems() {
  std::vector<ssd::Problem> list;
  std::ifstream in(g_manifest);
  for (std::string line; std::getline(in, line);) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    // A manifest line may carry the file name after the problem string, separated by " | ".
    const auto bar = line.find(" | ");
    if (bar != std::string::npos) line.resize(bar);
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    list.push_back(ssd::parse_problem(line));
  }
  return list;
}

// The contract extensions the CUDA library answers UNSUPPORTED (gpu/src/api/mamba2.cpp): a packed
// varlen batch and a state dtype; and the serving decode step of kernel ABI version 4 and the
// strided input views of version 5, which the library (version 3) is never sent. Such a case must come back SKIPPED, never computed without them.
bool declined_by_cuda(const ssd::Problem& p) {
  return p.varlen || (ssd::op_spec(p.op).takes_flag("state") && p.dtypes.contains("state")) ||
         ssd::op_spec(p.op).abi.version_needed(p) > 3;
}

bool verdict_expected(const ssd::Problem& p, ssd::Verdict v) {
  if (declined_by_cuda(p)) return v == ssd::Verdict::skipped;
  return v == ssd::Verdict::passed || v == ssd::Verdict::mistrusted;
}

TEST(Gpu, GoldenProblems) {
  const auto problems = golden_problems();
  ASSERT_FALSE(problems.empty()) << "no problems in " << g_manifest;
  for (const ssd::Problem& p : problems) {
    const ssd::CaseJudgement j = record("golden", p);
    EXPECT_TRUE(verdict_expected(p, j.verdict)) << ssd::describe(j);
  }
}

TEST(Gpu, SmokeProblems) {
  for (ssd::Op op : ssd::kAllOps)
    for (const ssd::Problem& p : ssd::op_spec(op).smoke()) {
      const ssd::CaseJudgement j = record("smoke", p);
      EXPECT_EQ(j.verdict, declined_by_cuda(p) ? ssd::Verdict::skipped : ssd::Verdict::passed) << ssd::describe(j);
    }
}

void random_case(ssd::Op op) {
  const ssd::Problem p = *ssd::gen_problem(op);
  const ssd::CaseJudgement j = record("random", p);
  RC_LOG() << ssd::describe(j) << '\n';
  RC_ASSERT(verdict_expected(p, j.verdict));
}
RC_GTEST_PROP(GpuRandom, Mamba2, ()) { random_case(ssd::Op::mamba2); }
RC_GTEST_PROP(GpuRandom, ChunkCumsum, ()) { random_case(ssd::Op::chunk_cumsum); }
RC_GTEST_PROP(GpuRandom, ChunkCoupling, ()) { random_case(ssd::Op::chunk_coupling); }
RC_GTEST_PROP(GpuRandom, ChunkState, ()) { random_case(ssd::Op::chunk_state); }
RC_GTEST_PROP(GpuRandom, StatePassing, ()) { random_case(ssd::Op::state_passing); }
RC_GTEST_PROP(GpuRandom, ChunkScan, ()) { random_case(ssd::Op::chunk_scan); }
RC_GTEST_PROP(GpuRandom, Recurrent, ()) { random_case(ssd::Op::recurrent); }
RC_GTEST_PROP(GpuRandom, DiscretizeSegsum, ()) { random_case(ssd::Op::discretize_segsum); }

TEST(Gpu, RepeatedRunsAreBitIdentical) {
  for (ssd::Op op : ssd::kAllOps)
    for (const ssd::Problem& p : ssd::op_spec(op).smoke()) {
      if (declined_by_cuda(p)) continue;  // nothing computed to compare
      const ssd::InputSet in = ssd::make_inputs(p);
      const ssd::KernelRun a = ssd::run_kernel(gpu(), p, in), b = ssd::run_kernel(gpu(), p, in);
      ASSERT_EQ(a.status, ssd::KernelRun::Status::ok) << ssd::to_string(p) << ": " << a.message;
      ASSERT_EQ(b.status, ssd::KernelRun::Status::ok) << ssd::to_string(p) << ": " << b.message;
      for (const ssd::Output& o : a.outputs.all())
        EXPECT_EQ(ssd::encode(o.value), ssd::encode(b.outputs.get(o.name).value)) << ssd::to_string(p) << " " << o.name;
    }
}

// Mamba2Fwd captured into a CUDA graph (its five stages become the graph's nodes, as when ssd-bench
// times it) gives the eager call's bits when the graph runs: two prepared calls on the same inputs,
// each output poisoned at the start, one called on a stream, the other captured and launched, so
// a graph that computed nothing, or ran a stage before its inputs were written, leaves poison or
// other bits behind.
TEST(Gpu, Mamba2CapturedGraphGivesTheEagerBits) {
  for (const char* text : {"mamba2:bf16 b2 s700 h4 p64 g2 n128 q256 +softplus +init seed=5",
                           "mamba2:f16 b1 s300 h2 p32 g1 n64 q64 +dt_bias +z seq=rand seed=6"}) {
    const ssd::Problem p = ssd::parse_problem(text);
    const ssd::InputSet in = ssd::make_inputs(p);
    const ssd::PreparedCall eager(gpu(), p, in), graphed(gpu(), p, in);
    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(eager.invoke(stream), SSD_STATUS_OK) << text << ": " << gpu().table().last_error();
    cudaGraph_t graph = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    const ssd_status captured = graphed.invoke(stream);
    ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess) << text;
    ASSERT_EQ(captured, SSD_STATUS_OK) << text << ": " << gpu().table().last_error();
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess) << text;
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess) << text;
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess) << text;
    const ssd::PreparedCall::Inspection a = eager.inspect(), b = graphed.inspect();
    ASSERT_EQ(a.outputs.size(), b.outputs.size()) << text;
    for (size_t i = 0; i < a.outputs.size(); ++i)
      EXPECT_TRUE(a.outputs[i].bytes == b.outputs[i].bytes) << text << ": output " << a.outputs[i].name;
    EXPECT_TRUE(a.damage.empty() && b.damage.empty()) << text;
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
  }
}

// The CUDA library speaks a kernel-ABI version older than strided views (5): the runner never
// sends it a layout= case (SKIPPED, naming the version), and a call made past the runner with
// views it cannot read is refused with an error status, never computed from the wrong elements.
TEST(Gpu, StridedViewsAreSkippedAndRefused) {
  for (ssd::Op op : ssd::kAllOps)
    for (ssd::Problem p : ssd::op_spec(op).smoke()) {
      if (p.layout == ssd::Layout::contiguous) p.layout = ssd::Layout::strided;
      if (p.far || p.farslots) continue;  // 4 to 16 GiB of device memory per buffer: not for a smoke run
      if (ssd::invalid_reason(p)) continue;
      const std::string text = ssd::to_string(p);
      const std::optional<std::string> reason = gpu().cannot_run(p);
      ASSERT_TRUE(reason.has_value()) << text;
      EXPECT_NE(reason->find("ABI version"), std::string::npos) << *reason;
      EXPECT_EQ(ssd::check_case(gpu(), p).verdict, ssd::Verdict::skipped) << text;
      // Past the runner: strides the library cannot read are an error; a layout whose drawn
      // pitches happen to be dense (extent-1 axes, zero padding) is an ordinary call.
      bool padded = false;
      for (const ssd::Placement& view : ssd::input_layout(p).placements)
        padded = padded || !ssd::is_contiguous(view.shape, view.strides);
      const ssd::PreparedCall call(gpu(), p, ssd::make_inputs(p));
      const ssd_status status = call.invoke();
      if (gpu().table().device_synchronize) gpu().table().device_synchronize();
      if (padded) EXPECT_NE(status, SSD_STATUS_OK) << text;
      else EXPECT_EQ(status, SSD_STATUS_OK) << text;
    }
}

// The wgmma scan's factored decay (gpu/src/chunk_scan_wgmma.cu) takes a slab's coefficients before
// its diagonal as round_f16(cb[i,k] u[k]), u[k] = exp(dA[i0]-dA[k]) dt[k]: up to exp(dA[i0]-dA[i])
// larger than the exact cb[i,k] exp(dA[i]-dA[k]) dt[k], so only f16 can overflow where the exact
// coefficient does not, and such a slab must be computed again, exact. No drawn fill reaches that
// (cb ~ N(0,1), dt < 0.5), so the inputs are set by hand: decays of 1 per token (finite, <= 0,
// non-increasing: the factored path), dt = 1/2, and one large cb per slab past the first, at a row
// of another warp than the slab's first row and at the token just before the slab:
//   slab 1 (i0 = 64):  cb[100, 63] = 1e6; factored 1e6 e^-1 / 2 = 1.84e5 > 65504 (f16's largest),
//                      exact 1e6 e^-(100-63) / 2 = 4.3e-11;
//   slab 3 (i0 = 192): cb[250, 191] = 1e6 (warpgroup 0's second slab; same figures, exact e^-59).
// Without the exact re-run those rows come out inf (inf times the row factor e^-36); with it, PASSED.
TEST(Gpu, ScanFactoredF16OverflowIsComputedExact) {
  for (const bool cb16 : {false, true}) {  // cb=f32, or cb in the primary dtype
    const ssd::Problem p =
        ssd::parse_problem(std::string("chunk_scan:f16 b1 s512 h2 p64 g1 n64 q256 ") + (cb16 ? "" : "cb=f32 ") + "seed=41");
    ssd::InputSet in = ssd::make_inputs(p);
    ssd::Tensor dA = in.at("dA_cumsum"), dt = in.at("dt"), cb = in.at("cb");  // [b,h,c,q] twice, [b,c,g,q,q]
    for (std::int64_t h = 0; h < p.h; ++h)
      for (std::int64_t c = 0; c < 2; ++c)
        for (std::int64_t t = 0; t < p.q; ++t) {
          dA.set(dA.offset({0, h, c, t}), -static_cast<double>(t));
          dt.set(dt.offset({0, h, c, t}), 0.5);
        }
    const struct {
      std::int64_t i, k, i0;
    } large[] = {{100, 63, 64}, {250, 191, 192}};
    // An f16 cb holds at most 65504, so there cb = 6e4 and dt[k] = 8: factored 6e4 e^-1 8 = 1.77e5,
    // exact 6e4 e^-37 8 = 4.1e-11.
    const double cb_large = cb16 ? 6e4 : 1e6, dt_at_k = cb16 ? 8.0 : 0.5;
    for (std::int64_t c = 0; c < 2; ++c)
      for (const auto& e : large) {
        cb.set(cb.offset({0, c, 0, e.i, e.k}), cb_large);
        for (std::int64_t h = 0; h < p.h; ++h) dt.set(dt.offset({0, h, c, e.k}), dt_at_k);
        // The premise, from the inputs themselves: factored past f16's range, exact far inside it.
        const double factored = cb_large * std::exp(dA.at({0, 0, c, e.i0}) - dA.at({0, 0, c, e.k})) * dt_at_k;
        const double exact = cb_large * std::exp(dA.at({0, 0, c, e.i}) - dA.at({0, 0, c, e.k})) * dt_at_k;
        ASSERT_GT(factored, 65504.0);
        ASSERT_LT(exact, 1e-6);
      }
    in.put("dA_cumsum", dA);
    in.put("dt", dt);
    in.put("cb", cb);
    const ssd::KernelRun run = ssd::run_kernel(gpu(), p, in);
    ASSERT_EQ(run.status, ssd::KernelRun::Status::ok) << ssd::to_string(p) << ": " << run.message;
    const ssd::CaseJudgement j = ssd::judge_against_oracle(p, in, run.outputs);
    EXPECT_EQ(j.verdict, ssd::Verdict::passed) << ssd::describe(j);
  }
}

// Full-size workloads of spec/workloads.md; the oracle runs on the host's CPU cores. Select with
// --gtest_filter=*Workloads* (and SSD_WORKLOAD_OPS=mamba2,chunk_scan to split a long run).
TEST(GpuWorkloads, FullSize) {
  const char* only = std::getenv("SSD_WORKLOAD_OPS");
  for (ssd::Op op : ssd::kAllOps) {
    if (only && std::string(only).find(ssd::op_name(op)) == std::string::npos) continue;
    for (const ssd::Problem& p : ssd::op_spec(op).workloads()) {
      const ssd::CaseJudgement j = record("workload", p);
      std::printf("%s\n", ssd::describe(j).c_str());
      std::fflush(stdout);
      EXPECT_EQ(j.verdict, ssd::Verdict::passed) << ssd::describe(j);
    }
  }
}

class VerdictTable : public ::testing::Environment {
 public:
  void TearDown() override {
    std::printf("\n| group op dtype | cases | PASSED | FAILED | SUSPECT | other | max r | max ratio |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const auto& [key, r] : table())
      std::printf("| %s | %d | %d | %d | %d | %d | %.3f | %.3f |\n", key.c_str(), r.cases, r.passed, r.failed, r.suspect,
                  r.other, r.max_r, r.max_ratio);
  }
};

}  // namespace

int main(int argc, char** argv) {
  // --library PATH (else SSD_GPU_LIBRARY), --manifest PATH; the rest goes to GoogleTest.
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--library") == 0 && i + 1 < argc) g_library_path = argv[++i];
    else if (std::strcmp(argv[i], "--manifest") == 0 && i + 1 < argc) g_manifest = argv[++i];
    else rest.push_back(argv[i]);
  }
  if (g_library_path.empty() && std::getenv("SSD_GPU_LIBRARY")) g_library_path = std::getenv("SSD_GPU_LIBRARY");
  if (g_library_path.empty()) {
    std::fprintf(stderr, "ssd_gpu_tests: give --library PATH or set SSD_GPU_LIBRARY\n");
    return 2;
  }
  try {
    // A one-byte allocation tells whether the library sees a device.
    const ssd_kernel_table& t = gpu().table();
    void* probe = nullptr;
    if (t.memory_kind != SSD_MEMORY_CUDA || t.device_alloc(&probe, 1) != SSD_STATUS_OK) {
      std::printf("no CUDA device visible to %s (%s): SKIPPED\n", t.name, t.last_error ? t.last_error() : "");
      return 77;
    }
    t.device_free(probe);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ssd_gpu_tests: %s\n", e.what());
    return 2;
  }
  int count = static_cast<int>(rest.size());
  ::testing::InitGoogleTest(&count, rest.data());
  ::testing::AddGlobalTestEnvironment(new VerdictTable);
  return RUN_ALL_TESTS();
}
