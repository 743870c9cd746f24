// ssd-suite: the suite in one command, on its own kernels. It verifies the golden set, judges a
// kernel library on every golden case and on a short fuzz campaign (the CUDA kernels where a GPU is
// visible, the fp32 emulation otherwise), runs the planted-bug self-test (each planted bug must fail
// somewhere), and prints one table, op x dtype. Exit status 0 when everything holds, 1 otherwise.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ssd/emulation/emulation.h"
#include "ssd/fuzz/campaign.h"
#include "ssd/golden/case_file.h"
#include "ssd/golden/verify.h"
#include "ssd/reference/errors.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Key = std::pair<ssd::Op, ssd::DType>;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The CUDA kernels when they load and can allocate device memory (a GPU is visible), else the
// fp32 emulation.
ssd::KernelLibrary default_library() {
  try {
    ssd::KernelLibrary cuda = ssd::KernelLibrary::open("cuda");
    void* probe = nullptr;
    const ssd_kernel_table& t = cuda.table();
    if (t.device_alloc && t.device_alloc(&probe, 1) == SSD_STATUS_OK) {
      t.device_free(probe);
      return cuda;
    }
  } catch (const std::exception&) {
    // not built here, or no CUDA driver: the emulation it is
  }
  return ssd::KernelLibrary::open("emulation");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Runs the suite on its own kernels: golden set, a fuzz campaign and the planted-bug self-test."};
  std::string kernels, data = SSD_GOLDEN_DATA_DIR;
  double seconds = 30;
  std::uint64_t seed = 1;
  app.add_option("--kernels", kernels, "kernel library (default: cuda where a GPU is visible, else emulation)");
  app.add_option("--time", seconds, "seconds of fuzzing (default 30)")->check(CLI::Range(0.1, 86400.0));
  app.add_option("--seed", seed, "fuzz campaign seed (default 1)");
  app.add_option("--data", data, "golden data folder (default: the source tree's golden/data)");
  CLI11_PARSE(app, argc, argv);

  try {
    const auto start = Clock::now();
    const ssd::KernelLibrary library = kernels.empty() ? default_library() : ssd::KernelLibrary::open(kernels);
    std::printf("ssd-suite: judging %s (%s)\n", library.table().name, library.origin().c_str());
    std::map<Key, ssd::OpTally> table;
    bool ok = true;

    // 1. The golden set: every file is what this build computes, and the library passes every case.
    ssd::pin_eigen_cache_sizes();
    const auto entries = ssd::read_manifest(fs::path(data) / "manifest.txt");
    std::size_t golden_bad = 0;
    for (const ssd::ManifestEntry& e : entries) {
      try {
        ssd::verify_golden_case(ssd::read_case(fs::path(data) / e.file_name), e.text);
      } catch (const std::exception& x) {
        ++golden_bad;
        std::printf("golden file FAILED verification: %s: %s\n", e.file_name.c_str(), x.what());
      }
      const auto case_start = Clock::now();
      const ssd::CaseJudgement j = ssd::check_case(library, e.problem);
      table[{e.problem.op, e.problem.dtype}].record(j, since(case_start));
      if (j.verdict == ssd::Verdict::failed) std::printf("%s\n", ssd::describe(j).c_str());
    }
    ok = ok && golden_bad == 0;
    std::printf("[1/3] golden set: %zu files verified, %zu differ; %zu cases judged (%.1f s)\n", entries.size(),
                golden_bad, entries.size(), since(start));

    // 2. A fuzz campaign: every op until time runs out or its first failure.
    ssd::CampaignOptions o;
    o.seconds = seconds;
    o.seed = seed;
    o.shrink_seconds = 5;
    const auto fuzz_start = Clock::now();
    const ssd::CampaignResult fuzz = ssd::run_campaign(library, o);
    for (const auto& [key, t] : fuzz.by_dtype) {
      ssd::OpTally& row = table[key];
      row.cases += t.cases, row.passed += t.passed, row.failed += t.failed, row.mistrusted += t.mistrusted;
      row.skipped += t.skipped, row.invalid += t.invalid, row.not_finite += t.not_finite, row.suspect += t.suspect;
      row.max_r = std::max(row.max_r, t.max_r);
    }
    for (const ssd::Failure& f : fuzz.failures) std::printf("%s\n", ssd::describe(f.judgement).c_str());
    std::printf("[2/3] fuzz campaign: seed %llu, %.1f s, %zu failure(s)\n", static_cast<unsigned long long>(seed),
                since(fuzz_start), fuzz.failures.size());

    // 3. The planted-bug self-test: each planted bug (a kernel library of its own) fails on the smoke
    // problems of at least one op; per op and dtype, how many were caught there.
    std::map<Key, std::set<std::string>> caught;
    std::size_t flaws_caught = 0;
    const auto planted_start = Clock::now();
    for (ssd::Flaw flaw : ssd::kAllFlaws) {
      const std::string name = "mutant-" + std::string(ssd::flaw_name(flaw));
      const ssd::KernelLibrary mutant = ssd::KernelLibrary::open(name);
      bool any = false;
      for (ssd::Op op : ssd::kAllOps)
        for (const ssd::Problem& p : ssd::op_spec(op).smoke())
          if (ssd::is_alarm(ssd::check_case(mutant, p).verdict)) {  // FAILED or SUSPECT
            caught[{op, p.dtype}].insert(name);
            any = true;
          }
      flaws_caught += any ? 1 : 0;
      if (!any) std::printf("planted bug NOT caught: %s\n", name.c_str());
    }
    const std::size_t flaws = std::size(ssd::kAllFlaws);
    ok = ok && flaws_caught == flaws;
    std::printf("[3/3] planted bugs: %zu of %zu caught (%.1f s)\n\n", flaws_caught, flaws, since(planted_start));

    std::printf("| op | dtype | cases | PASSED | FAILED | SUSPECT | MISTRUSTED | SKIPPED | INVALID | max r | planted bugs caught |\n"
                "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const auto& [key, t] : table) {
      ok = ok && t.failed == 0 && t.suspect == 0;
      std::printf("| %s | %s | %lld | %lld | %lld | %lld | %lld | %lld | %lld | %.3g | %zu |\n",
                  std::string(ssd::op_name(key.first)).c_str(), std::string(ssd::dtype_name(key.second)).c_str(),
                  static_cast<long long>(t.cases), static_cast<long long>(t.passed), static_cast<long long>(t.failed),
                  static_cast<long long>(t.suspect), static_cast<long long>(t.mistrusted), static_cast<long long>(t.skipped),
                  static_cast<long long>(t.invalid), t.max_r, caught[key].size());
    }
    std::printf("\n%s in %.1f s. To judge your own kernels: docs/testing-your-kernel.md\n",
                ok ? "suite OK: golden set verified, no failures, every planted bug caught" : "suite NOT OK: see above",
                since(start));
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ssd-suite: %s\n", e.what());
    return 2;
  }
}
