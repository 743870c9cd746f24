// Case files as a library: round trips, identical bytes for the same case (twice, any thread
// count, any heap contents), file names, the manifest reader, and writes that fail cleanly.
#include <gtest/gtest.h>
#include <omp.h>
#include <sys/resource.h>

#include <csignal>
#include <cstring>

#include "ssd/reference/errors.h"
#include "support.h"

namespace {

using namespace golden_test;

bool same_bits(const ssd::Tensor& a, const ssd::Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.numel())) == 0;
}

// Small cases covering every op, 16-bit dtypes, masks (seq padding, causal) and optional outputs.
const char* const kCases[] = {
    "mamba2:bf16 b2 s37 h4 p4 g2 n8 q16 +dt_bias +softplus +Dhp +z +init seq=0:20,9,-8 seed=1",
    "chunk_cumsum:f16 b2 s37 h3 q16 +dt_bias +softplus limit=0.01,0.2 seed=2",
    "chunk_coupling:bf16 b1 s40 g1 n8 q8 +causal seq=0:8,9,7,-16 C=f32 seed=3",
    "chunk_state:f16 b2 s37 h4 p4 g2 n8 q16 seq=rand out=bf16 seed=4",
    "state_passing:bf16 b2 s37 q16 h4 d8 +init seq=rand seed=5",
    "chunk_scan:f32 b2 s37 h4 p4 g2 n8 q16 +Dhp +z seq=rand seed=6",
    "recurrent:bf16 b6 h4 p4 g2 n8 +dt_bias +softplus +Dhp +z +sbi +tie slots=8 seed=7",
    "discretize_segsum:f16 b1 s16 q8 h2 p2 g1 n4 seed=8",
};

TEST(CaseFile, GoldenRoundTripIsExact) {
  TempDir dir;
  for (const char* line : kCases) {
    const ssd::Problem p = ssd::parse_problem(line);
    const ssd::CaseFile written = ssd::make_golden_case(p);
    const fs::path path = dir / ssd::case_file_name(p);
    EXPECT_EQ(ssd::write_case(path, written), ssd::WriteOutcome::created) << line;
    const ssd::CaseFile read = ssd::read_case(path);
    EXPECT_EQ(read.kind, ssd::CaseKind::golden);
    EXPECT_EQ(read.problem, p) << line;
    EXPECT_EQ(read.contract_version, ssd::kContractVersion);
    EXPECT_EQ(read.generator_version, ssd::kGeneratorVersion);
    EXPECT_EQ(read.oracle_version, ssd::kOracleVersion);
    ASSERT_EQ(read.inputs.all().size(), written.inputs.all().size()) << line;
    for (const auto& [name, tensor] : written.inputs.all())
      EXPECT_TRUE(same_bits(read.inputs.at(name), tensor)) << line << " input " << name;
    for (const ssd::Output& o : written.oracle.all()) {
      const ssd::Output& back = read.oracle.get(o.name);
      EXPECT_TRUE(same_bits(back.value, o.value)) << line << " oracle " << o.name;
      for (std::int64_t i = 0; i < o.value.numel(); ++i)
        ASSERT_EQ(back.is_defined(i), o.is_defined(i)) << line << " defined mask of " << o.name;
      const ssd::OutputBound& b = written.bounds.get(o.name);
      const ssd::OutputBound& b_back = read.bounds.get(o.name);
      EXPECT_TRUE(same_bits(b_back.bound, b.bound)) << line << " bound " << o.name;
      EXPECT_EQ(b_back.reduction_length, b.reduction_length);
      for (std::int64_t i = 0; i < b.bound.numel(); ++i) ASSERT_EQ(b_back.is_exact(i), b.is_exact(i)) << line;
    }
  }
}

TEST(CaseFile, InputsAndResultsRoundTrip) {
  const ssd::Problem p = ssd::parse_problem("chunk_coupling:f16 b2 s37 g2 n8 q16 seq=rand out=bf16 seed=9");
  const ssd::CaseFile inputs = ssd::make_inputs_case(p);
  const ssd::CaseFile read_inputs = ssd::decode_case(ssd::encode_case(inputs), "inputs image");
  EXPECT_EQ(read_inputs.kind, ssd::CaseKind::inputs);
  EXPECT_TRUE(read_inputs.oracle.all().empty());

  ssd::CaseFile results = inputs;
  results.kind = ssd::CaseKind::results;
  const ssd::Outputs oracle = ssd::op_spec(p.op).chunked(p, inputs.inputs);
  const ssd::Output& cb = oracle.get("CB");
  results.outputs.add("CB", ssd::Tensor(ssd::DType::bf16, cb.value.shape(), cb.value.values()));
  const ssd::CaseFile back = ssd::decode_case(ssd::encode_case(results), "results image");
  EXPECT_EQ(back.kind, ssd::CaseKind::results);
  EXPECT_TRUE(same_bits(back.outputs.get("CB").value, results.outputs.get("CB").value));

  // The writer refuses what the reader would reject: CB stored in the wrong dtype.
  ssd::CaseFile wrong = inputs;
  wrong.kind = ssd::CaseKind::results;
  wrong.outputs.add("CB", ssd::Tensor(ssd::DType::f32, cb.value.shape(), cb.value.values()));
  EXPECT_THROW(ssd::encode_case(wrong), ssd::ArgumentError);
}

// A results file whose output has the wrong shape is the kernel's failure, not an unreadable
// file: ssd-golden check judges it FAILED (exit 1) and names the output and both shapes.
TEST(CaseFile, MisShapedOutputIsFailedNamingIt) {
  TempDir dir;
  const ssd::Problem p = ssd::parse_problem("chunk_coupling:f32 b1 s16 g1 n4 q8 seed=3");
  ssd::CaseFile results = ssd::make_inputs_case(p);
  results.kind = ssd::CaseKind::results;
  // The oracle's CB is [1,2,1,8,8]; store the right values as [1,2,1,64], a flattened last pair.
  const ssd::Outputs oracle = ssd::op_spec(p.op).chunked(p, results.inputs);
  const ssd::Output& cb = oracle.get("CB");
  results.outputs.add("CB", ssd::Tensor(ssd::DType::f32, {1, 2, 1, 64}, cb.value.values()));
  const fs::path path = dir / "misshaped.h5";
  ssd::write_case(path, results);
  const ToolRun run = run_tool({"check", path.string()});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("=> FAILED: output 'CB' has shape [1,2,1,64], expected [1,2,1,8,8]"), std::string::npos) << run.out;
  EXPECT_EQ(run.err, "");

  // The same values in the right shape pass: only the shape was wrong.
  ssd::CaseFile right = ssd::make_inputs_case(p);
  right.kind = ssd::CaseKind::results;
  right.outputs.add("CB", ssd::Tensor(ssd::DType::f32, cb.value.shape(), cb.value.values()));
  ssd::write_case(dir / "right.h5", right);
  const ToolRun ok = run_tool({"check", (dir / "right.h5").string()});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
}

TEST(CaseFile, SameCaseGivesTheSameBytes) {
  TempDir dir;
  for (const char* line : kCases) {
    const ssd::Problem p = ssd::parse_problem(line);
    const auto first = ssd::encode_case(ssd::make_golden_case(p));
    const auto second = ssd::encode_case(ssd::make_golden_case(p));
    EXPECT_TRUE(first == second) << line;
    const fs::path path = dir / "case.h5";
    ssd::write_case(path, ssd::make_golden_case(p));
    EXPECT_TRUE(ssd::read_file_bytes(path) == first) << line;
    EXPECT_EQ(ssd::write_case(path, ssd::make_golden_case(p)), ssd::WriteOutcome::unchanged) << line;
    fs::remove(path);
  }
}

TEST(CaseFile, ThreadCountDoesNotChangeTheBytes) {
  // Big enough that the oracle's parallel regions really split the work.
  const char* lines[] = {
      "mamba2:bf16 b2 s300 h8 p8 g2 n16 q32 +dt_bias +softplus +D +z +init seq=rand seed=11",
      "chunk_scan:f16 b2 s300 h8 p8 g2 n16 q32 +Dhp +z seq=rand seed=12",
      "discretize_segsum:bf16 b2 s128 q32 h8 p4 g2 n16 seed=13",
  };
  const int saved = omp_get_max_threads();
  for (const char* line : lines) {
    const ssd::Problem p = ssd::parse_problem(line);
    omp_set_num_threads(1);
    const auto one = ssd::encode_case(ssd::make_golden_case(p));
    omp_set_num_threads(2);
    const auto two = ssd::encode_case(ssd::make_golden_case(p));
    omp_set_num_threads(5);
    const auto five = ssd::encode_case(ssd::make_golden_case(p));
    EXPECT_TRUE(one == two) << line;
    EXPECT_TRUE(one == five) << line;
  }
  omp_set_num_threads(saved);
}

TEST(CaseFile, RegenGivesTheSameBytesForAnyThreadCountAndHeap) {
  // Separate processes: OMP_NUM_THREADS 1 and 2, and glibc filling fresh heap memory with a
  // pattern (MALLOC_PERTURB_), which would show any uninitialised byte reaching a file.
  TempDir one, two;
  const std::string manifest =
      "mamba2:f16 b2 s300 h8 p8 g2 n16 q32 +dt_bias +softplus +Dhp +z +init seq=rand seed=21\n"
      "chunk_state:bf16 b2 s300 h8 p8 g2 n16 q32 seq=rand seed=22\n"
      "recurrent:f32 b8 h8 p8 g2 n16 +dt_bias +softplus +Dhp +z +sbi slots=11 seed=23\n";
  for (const TempDir* dir : {&one, &two}) {
    std::ofstream(dir->path() / "manifest.txt") << manifest;
  }
  const ToolRun a = run_tool({"regen", "--data", one.path().string()}, "OMP_NUM_THREADS=1");
  const ToolRun b = run_tool({"regen", "--data", two.path().string()}, "OMP_NUM_THREADS=2 MALLOC_PERTURB_=165");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto files_one = case_files(one.path()), files_two = case_files(two.path());
  ASSERT_EQ(files_one.size(), 3u);
  EXPECT_TRUE(files_one == files_two) << "regen bytes depend on the thread count or on heap contents";
}

TEST(CaseFile, FileNameComesFromTheCanonicalString) {
  const ssd::Problem canonical = ssd::parse_problem("chunk_coupling:bf16 b1 s24 g3 n8 q7 B=f32 out=f32 seed=6");
  const ssd::Problem shuffled = ssd::parse_problem("SSDChunkCouplingFwd:bf16 q7 n8 g3 s24 b1 out=f32 B=f32 seed=6");
  EXPECT_EQ(ssd::case_file_name(canonical), ssd::case_file_name(shuffled));
  const std::string name = ssd::case_file_name(canonical);
  EXPECT_EQ(name.rfind("chunk_coupling-bf16-", 0), 0u) << name;
  EXPECT_EQ(name.size(), std::string("chunk_coupling-bf16-").size() + 16 + 3) << name;
  EXPECT_NE(name, ssd::case_file_name(ssd::parse_problem("chunk_coupling:bf16 b1 s24 g3 n8 q7 B=f32 out=f32 seed=7")));
}

TEST(CaseFile, ManifestReportsBadLines) {
  TempDir dir;
  const fs::path manifest = dir / "manifest.txt";
  std::ofstream(manifest) << "# comment\n\nchunk_cumsum:f32 b1 s16 h2 q8 seed=1   # trailing comment\n"
                          << "chunk_cumsum:f32 s16 b1 h2 q8 seed=1\n";
  try {
    ssd::read_manifest(manifest);
    FAIL() << "a problem listed twice was accepted";
  } catch (const ssd::ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("line 4: the same problem as line 3"), std::string::npos) << e.what();
  }
  std::ofstream(manifest) << "chunk_cumsum:f32 b1 s16 h2 q8 seed=1\nchunk_scan:f32 b1 s16 h3 p4 g2 n4 q8 seed=1\n";
  try {
    ssd::read_manifest(manifest);
    FAIL() << "an invalid problem was accepted";
  } catch (const ssd::ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("line 2: invalid problem: H % G != 0"), std::string::npos) << e.what();
  }
  std::ofstream(manifest) << "chunk_cumsum:f32 b1 s16 h2 q8 +causal seed=1\n";
  EXPECT_THROW(ssd::read_manifest(manifest), ssd::ArgumentError);
}

// Temporaries left in a directory by a failed write (there must be none).
std::size_t leftovers(const fs::path& dir) {
  std::size_t count = 0;
  for (const auto& item : fs::directory_iterator(dir))
    if (item.path().filename().string().find(".tmp-") != std::string::npos) ++count;
  return count;
}

TEST(CaseFile, FailedWriteLeavesNoFileAndThePreviousFileIntact) {
  TempDir dir;
  const fs::path path = dir / "case.h5";
  const auto first = ssd::encode_case(ssd::make_golden_case(ssd::parse_problem(kCases[1])));
  const auto second = ssd::encode_case(ssd::make_golden_case(ssd::parse_problem(kCases[2])));
  auto crash = [](const fs::path& tmp) {
    fs::resize_file(tmp, 100);  // as if cut short
    throw std::runtime_error("simulated crash");
  };

  // No previous file: nothing appears.
  EXPECT_THROW(ssd::write_file_if_changed(path, first, crash), std::runtime_error);
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(leftovers(dir.path()), 0u);

  // A previous file: it keeps its bytes.
  ASSERT_EQ(ssd::write_file_if_changed(path, first), ssd::WriteOutcome::created);
  EXPECT_THROW(ssd::write_file_if_changed(path, second, crash), std::runtime_error);
  EXPECT_TRUE(ssd::read_file_bytes(path) == first);
  EXPECT_EQ(leftovers(dir.path()), 0u);
  EXPECT_EQ(ssd::write_file_if_changed(path, second), ssd::WriteOutcome::replaced);
  EXPECT_TRUE(ssd::read_file_bytes(path) == second);
}

TEST(CaseFile, WriteThatRunsOutOfSpaceFailsCleanly) {
  // A real failing write(2): a child process limited to files of 4 KiB (EFBIG).
  TempDir dir;
  const fs::path path = dir / "case.h5";
  const auto small = ssd::encode_case(ssd::make_golden_case(ssd::parse_problem(kCases[1])));
  const auto large = ssd::encode_case(ssd::make_golden_case(ssd::parse_problem(kCases[0])));
  ASSERT_GT(large.size(), 8192u);
  ssd::write_file_if_changed(path, small);
  for (const fs::path& target : {path, dir / "new.h5"}) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      std::signal(SIGXFSZ, SIG_IGN);
      const rlimit limit{4096, 4096};
      setrlimit(RLIMIT_FSIZE, &limit);
      try {
        ssd::write_file_if_changed(target, large);
      } catch (const ssd::ArgumentError& e) {
        const bool one_line = std::string(e.what()).find('\n') == std::string::npos;
        const bool named = std::string(e.what()).find(target.string()) != std::string::npos;
        _exit(one_line && named ? 3 : 4);
      }
      _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 3) << "the write did not fail with a one-line error naming the file";
  }
  EXPECT_TRUE(ssd::read_file_bytes(path) == small);
  EXPECT_FALSE(fs::exists(dir / "new.h5"));
  EXPECT_EQ(leftovers(dir.path()), 0u);
}

TEST(CaseFile, ExportOfAnInvalidProblemWritesNothing) {
  TempDir dir;
  const ToolRun run = run_tool({"export", "chunk_cumsum:f32 b1 s16 h2 q8 seed=1", "chunk_scan:f32 b1 s16 h3 p4 g2 n4 q8 seed=1",
                                "--out", dir.path().string()});
  EXPECT_NE(run.exit_code, 0);
  ASSERT_EQ(run.error_lines().size(), 1u) << run.err;
  EXPECT_EQ(run.err.rfind("ssd-golden: ", 0), 0u) << run.err;
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

}  // namespace
