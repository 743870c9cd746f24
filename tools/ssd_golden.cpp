// ssd-golden: keeps the golden case files (regen, verify), exports inputs for implementations in
// other languages (export) and judges the results they write back (check). docs/case-files.md.
#include <CLI/CLI.hpp>
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "ssd/golden/case_file.h"
#include "ssd/golden/verify.h"
#include "ssd/reference/errors.h"
#include "ssd/reference/option_values.h"
#include "ssd/reference/truth.h"

namespace {

namespace fs = std::filesystem;

// Exit statuses: 0 all well; 1 a check did not pass (files would change, verification or a
// verdict failed); 2 the command could not run (bad arguments, unreadable files).
constexpr int kExitOk = 0, kExitDiffers = 1, kExitError = 2;

void error_line(const std::string& message) {
  std::string line = message;
  std::replace(line.begin(), line.end(), '\n', ' ');  // one line, always
  std::fprintf(stderr, "ssd-golden: %s\n", line.c_str());
}

bool matches(const std::string& pattern, const ssd::ManifestEntry& e) {
  if (pattern.empty()) return true;
  const bool glob = pattern.find_first_of("*?[") != std::string::npos;
  for (const std::string* text : {&e.text, &e.file_name}) {
    if (glob ? fnmatch(pattern.c_str(), text->c_str(), 0) == 0 : text->find(pattern) != std::string::npos) return true;
  }
  return false;
}

// A progress bar that redraws one line on a terminal, and prints one plain line per case elsewhere.
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), tty_(isatty(fileno(stdout)) != 0) {}
  void step(const std::string& status, const ssd::ManifestEntry& e) {
    ++done_;
    if (tty_) {
      constexpr std::size_t width = 30;
      const std::size_t filled = total_ ? width * done_ / total_ : width;
      std::printf("\r[%s%s] %zu/%zu %-9s %-40.40s", std::string(filled, '#').c_str(),
                  std::string(width - filled, '.').c_str(), done_, total_, status.c_str(), e.file_name.c_str());
      std::fflush(stdout);
    } else {
      std::printf("[%zu/%zu] %-9s %s  %s\n", done_, total_, status.c_str(), e.file_name.c_str(), e.text.c_str());
    }
  }
  void finish() {
    if (tty_ && done_ > 0) std::printf("\n");
  }

 private:
  std::size_t total_, done_ = 0;
  bool tty_;
};

int regen(const fs::path& data, const std::string& only, bool check, bool prune) {
  const std::vector<ssd::ManifestEntry> entries = ssd::read_manifest(data / "manifest.txt");
  std::vector<const ssd::ManifestEntry*> selected;
  for (const auto& e : entries)
    if (matches(only, e)) selected.push_back(&e);
  if (selected.empty()) throw ssd::ArgumentError("--only", "no manifest entry matches '" + only + "'");

  Progress progress(selected.size());
  std::size_t created = 0, replaced = 0, unchanged = 0;
  std::vector<std::string> changes;
  for (const ssd::ManifestEntry* e : selected) {
    const fs::path path = data / e->file_name;
    std::vector<std::uint8_t> bytes;
    try {
      bytes = ssd::encode_case(ssd::make_golden_case(e->problem));
    } catch (const std::exception& x) {
      progress.finish();
      throw ssd::ArgumentError(e->text, x.what());
    }
    std::string status;
    if (check) {
      std::error_code ec;
      const bool exists = fs::exists(path, ec);
      const bool same = exists && ssd::read_file_bytes(path) == bytes;
      status = same ? "unchanged" : exists ? "differs" : "missing";
      (same ? unchanged : exists ? replaced : created) += 1;
      if (!same) changes.push_back(status + ": " + e->file_name + "  " + e->text);
    } else {
      switch (ssd::write_file_if_changed(path, bytes)) {
        case ssd::WriteOutcome::created: status = "created", ++created; break;
        case ssd::WriteOutcome::replaced: status = "replaced", ++replaced; break;
        case ssd::WriteOutcome::unchanged: status = "unchanged", ++unchanged; break;
      }
    }
    progress.step(status, *e);
  }
  progress.finish();
  for (const ssd::ManifestEntry& e : entries)
    if (!e.canonical) std::printf("note: manifest line %zu is not canonical; it reads: %s\n", e.line, e.text.c_str());
  std::size_t pruned = 0;
  if (only.empty()) {
    for (const std::string& name : ssd::unlisted_case_files(data, entries)) {
      if (prune && !check) {
        fs::remove(data / name);
        ++pruned;
        std::printf("removed %s (not in the manifest)\n", name.c_str());
      } else {
        std::printf("note: %s is not in the manifest (remove it with --prune, or list its problem)\n", name.c_str());
      }
    }
  }
  if (check) {
    for (const std::string& line : changes) std::printf("%s\n", line.c_str());
    std::printf("regen --check: %zu cases, %zu unchanged, %zu differ, %zu missing\n", selected.size(), unchanged,
                replaced, created);
    if (!changes.empty()) {
      error_line(std::to_string(changes.size()) + " case file(s) would change: run ssd-golden regen");
      return kExitDiffers;
    }
    return kExitOk;
  }
  std::printf("regen: %zu cases, %zu created, %zu replaced, %zu unchanged, %zu removed\n", selected.size(), created,
              replaced, unchanged, pruned);
  return kExitOk;
}

int verify(const fs::path& data) {
  ssd::pin_eigen_cache_sizes();
  const std::vector<ssd::ManifestEntry> entries = ssd::read_manifest(data / "manifest.txt");
  std::size_t failures = 0;
  for (const ssd::ManifestEntry& e : entries) {
    const fs::path path = data / e.file_name;
    try {
      std::error_code ec;
      if (!fs::exists(path, ec)) throw ssd::ArgumentError(path.string(), "missing (manifest line " + std::to_string(e.line) + ": " + e.text + ")");
      const ssd::CaseFile c = ssd::read_case(path);
      try {
        ssd::verify_golden_case(c, e.text);
      } catch (const std::exception& x) {
        throw ssd::ArgumentError(path.string(), x.what());
      }
      std::printf("ok      %s  %s\n", e.file_name.c_str(), e.text.c_str());
    } catch (const std::exception& x) {
      ++failures;
      std::printf("FAILED  %s  %s\n", e.file_name.c_str(), e.text.c_str());
      error_line(x.what());
    }
  }
  for (const std::string& name : ssd::unlisted_case_files(data, entries)) {
    ++failures;
    error_line((data / name).string() + ": not in the manifest (remove it, or list its problem)");
  }
  std::printf("verify: %zu cases, %zu problem(s)\n", entries.size(), failures);
  return failures ? kExitDiffers : kExitOk;
}

int export_inputs(const std::vector<std::string>& lines, bool manifest, const fs::path& data, const fs::path& out) {
  std::vector<ssd::Problem> problems;
  if (manifest) {
    if (!lines.empty()) throw ssd::ArgumentError("export", "give problem strings or --manifest, not both");
    for (const auto& e : ssd::read_manifest(data / "manifest.txt")) problems.push_back(e.problem);
  } else {
    if (lines.empty()) throw ssd::ArgumentError("export", "give problem strings or --manifest");
    // Every problem is checked before anything is written.
    for (const std::string& line : lines) {
      ssd::Problem p = ssd::parse_problem(line);
      if (auto why = ssd::invalid_reason(p)) throw ssd::ArgumentError("problem", *why + " (" + line + ")");
      problems.push_back(p);
    }
  }
  // Sizes too, before the directory is created: a case past the memory limit is refused whole,
  // not after some files are written.
  for (const ssd::Problem& p : problems)
    if (auto why = ssd::size_reason(p)) throw ssd::ArgumentError("problem", *why + " (" + ssd::to_string(p) + ")");
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw ssd::ArgumentError(out.string(), "cannot create the directory: " + ec.message());
  for (const ssd::Problem& p : problems) {
    const fs::path path = out / ssd::case_file_name(p);
    ssd::write_case(path, ssd::make_inputs_case(p));
    std::printf("%s  %s\n", path.c_str(), ssd::to_string(p).c_str());
  }
  return kExitOk;
}

std::string output_verdict(const ssd::CaseJudgement& j, const ssd::OutputJudgement& o) {
  if (j.verdict == ssd::Verdict::passed || j.verdict == ssd::Verdict::failed || j.verdict == ssd::Verdict::suspect)
    return o.failed() ? "FAILED" : o.suspect() ? "SUSPECT" : "PASSED";
  return std::string(ssd::verdict_name(j.verdict));
}

int check(const std::vector<std::string>& files, int worst) {
  ssd::pin_eigen_cache_sizes();
  std::size_t passed = 0, not_passed = 0, unreadable = 0;
  for (const std::string& file : files) {
    ssd::CaseJudgement j;
    try {
      const ssd::CaseFile c = ssd::read_case(file);
      try {
        if (c.kind != ssd::CaseKind::results)
          throw std::runtime_error("kind " + std::string(ssd::case_kind_name(c.kind)) + ", expected results");
        ssd::require_generated_inputs(c);
      } catch (const std::exception& x) {
        throw ssd::ArgumentError(file, x.what());
      }
      if (c.generator_version != ssd::kGeneratorVersion || c.contract_version != ssd::kContractVersion)
        std::printf("note: %s was exported under %s / %s; this build is %s / %s\n", file.c_str(),
                    c.contract_version.c_str(), c.generator_version.c_str(), std::string(ssd::kContractVersion).c_str(),
                    std::string(ssd::kGeneratorVersion).c_str());
      j = ssd::judge_against_oracle(c.problem, c.inputs, c.outputs, worst);
    } catch (const std::exception& x) {
      ++unreadable;
      error_line(x.what());
      continue;
    }
    std::printf("%s  (%s)\n", j.problem.c_str(), file.c_str());
    std::printf("  %-14s %-10s %10s %10s %10s %9s\n", "output", "verdict", "max r", "ratio", "compared", "failures");
    for (const ssd::OutputJudgement& o : j.outputs)
      std::printf("  %-14s %-10s %10.3g %10.3g %10lld %9lld\n", o.name.c_str(), output_verdict(j, o).c_str(), o.max_r,
                  o.ratio(), static_cast<long long>(o.compared),
                  static_cast<long long>(o.over_bound + o.exact_mismatches + o.not_finite));
    std::printf("  => %s%s%s\n", std::string(ssd::verdict_name(j.verdict)).c_str(), j.message.empty() ? "" : ": ",
                j.message.c_str());
    if (j.verdict == ssd::Verdict::passed) {
      ++passed;
    } else {
      ++not_passed;
      std::printf("%s\n", ssd::describe(j).c_str());
    }
  }
  std::printf("check: %zu file(s): %zu PASSED, %zu not passed, %zu unreadable\n", files.size(), passed, not_passed,
              unreadable);
  if (unreadable) return kExitError;
  return not_passed ? kExitDiffers : kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  ssd::pin_eigen_cache_sizes();
  CLI::App app{"Golden case files: regenerate and verify the golden set, export inputs, check results."};
  app.require_subcommand(1);

  // Values are read as text and parsed strictly after CLI11, so each error names its option.
  std::string data = "golden/data", only, out = ".", worst_text = "5", max_gib_text;
  bool check_only = false, prune = false, from_manifest = false;
  std::vector<std::string> problems, results;
  int worst = 5;

  CLI::App* regen_cmd = app.add_subcommand("regen", "write the case file of every manifest problem whose bytes change");
  regen_cmd->add_option("--data", data, "golden data directory (holds manifest.txt)")->capture_default_str();
  regen_cmd->add_option("--only", only, "only problems or file names containing this text (or matching this glob)");
  regen_cmd->add_flag("--check", check_only, "write nothing; exit 1 if any file would change");
  regen_cmd->add_flag("--prune", prune, "remove *.h5 files the manifest does not list");

  CLI::App* verify_cmd = app.add_subcommand("verify", "check every golden file: checksums, inputs, oracle and bounds recomputed");
  verify_cmd->add_option("--data", data, "golden data directory (holds manifest.txt)")->capture_default_str();

  CLI::App* export_cmd = app.add_subcommand("export", "write kind=inputs case files for implementations in other languages");
  export_cmd->add_option("problems", problems, "problem strings (docs/problem-string.md)");
  export_cmd->add_flag("--manifest", from_manifest, "export every problem of the golden manifest");
  export_cmd->add_option("--data", data, "golden data directory, for --manifest")->capture_default_str();
  export_cmd->add_option("--out", out, "output directory")->capture_default_str();
  export_cmd->add_option("--max-case-gib", max_gib_text,
                         "largest case, GiB of inputs and outputs as float64 (default 16)");

  CLI::App* check_cmd = app.add_subcommand("check", "judge kind=results case files against the oracle; exit 0 only if all pass");
  check_cmd->add_option("results", results, "results case files")->required();
  check_cmd->add_option("--worst", worst_text, "worst elements shown per failing output, 0 .. 1000000")->capture_default_str();
  check_cmd->add_option("--max-case-gib", max_gib_text,
                        "largest case, GiB of inputs and outputs as float64 (default 16)");

  // CLI11 reports an unknown subcommand only as "A subcommand is required": name it.
  const std::string first = argc > 1 ? argv[1] : "";
  if (!first.empty() && first[0] != '-' && first != "regen" && first != "verify" && first != "export" && first != "check") {
    error_line("unknown subcommand '" + std::string(argv[1]) + "' (expected regen, verify, export or check)");
    return kExitError;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    error_line(e.what());
    return kExitError;
  }
  try {
    for (auto [option, text] : {std::pair<const char*, const std::string*>{"--data", &data}, {"--out", &out}})
      if (text->empty()) throw ssd::ArgumentError(option, "empty path");
    if (check_cmd->parsed()) worst = static_cast<int>(ssd::parse_option_unsigned("--worst", worst_text, 0, 1000000));
    if (!max_gib_text.empty() || (export_cmd->parsed() && export_cmd->count("--max-case-gib")) ||
        (check_cmd->parsed() && check_cmd->count("--max-case-gib")))
      ssd::set_max_case_bytes(static_cast<std::int64_t>(
          ssd::parse_option_number("--max-case-gib", max_gib_text, 0, 0x1p32, true) * 0x1p30));
  } catch (const ssd::ArgumentError& e) {
    error_line(e.what());
    return kExitError;
  }

  try {
    if (regen_cmd->parsed()) return regen(data, only, check_only, prune);
    if (verify_cmd->parsed()) return verify(data);
    if (export_cmd->parsed()) return export_inputs(problems, from_manifest, data, out);
    if (check_cmd->parsed()) return check(results, worst);
  } catch (const std::exception& e) {
    error_line(e.what());
    return kExitError;
  }
  return kExitError;
}
