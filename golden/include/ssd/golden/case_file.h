// Case files (docs/case-files.md): one case of one op in HDF5 - its problem string, inputs in
// their own dtypes, and the oracle's outputs with their bounds (golden), the inputs alone (inputs,
// for implementations in other languages) or another implementation's outputs (results) - each
// dataset with a SHA-256. The same case always encodes to the same bytes, files are replaced
// atomically, and anything that is not an intact case file is reported, never read as data.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ssd/reference/op_spec.h"
#include "ssd/reference/tolerance.h"
#include "ssd/reference/version.h"

namespace ssd {

inline constexpr std::string_view kCaseFormat = "ssd-case";
inline constexpr std::int64_t kCaseFormatVersion = 1;

// golden: problem, inputs, oracle, bounds. inputs: problem and inputs only (`ssd-golden export`).
// results: problem, inputs and the outputs of the implementation under test (`ssd-golden check`).
enum class CaseKind { golden, inputs, results };
std::string_view case_kind_name(CaseKind kind);

struct CaseFile {
  CaseKind kind = CaseKind::golden;
  Problem problem;
  // Provenance: the versions of the rules the numbers were made under (ssd/version.h).
  std::string contract_version{kContractVersion};
  std::string generator_version{kGeneratorVersion};
  std::string oracle_version{kOracleVersion};
  InputSet inputs;
  Outputs oracle;   // golden (optional in results): float64 with the defined masks
  Bounds bounds;    // golden (optional in results)
  Outputs outputs;  // results: each output in its storage dtype, values as doubles
};

// Fixes Eigen's cache sizes (and so its blocking, and so the order of summation in products) to
// constants, so the oracle's bits do not depend on the CPU. Idempotent; the case builders call it.
void pin_eigen_cache_sizes();

// The golden case of a valid problem: make_inputs, the chunked oracle, compute_bounds.
// Throws ArgumentError('problem') for an invalid problem.
CaseFile make_golden_case(const Problem& problem);
// The kind=inputs case of a valid problem (`ssd-golden export`).
CaseFile make_inputs_case(const Problem& problem);

// The file's bytes: a pure function of the case (no timestamps, fixed HDF5 format versions,
// contiguous datasets, no compression). Throws ArgumentError when the case is inconsistent.
std::vector<std::uint8_t> encode_case(const CaseFile& c);

// Reads and checks a case file: the format attributes, every dataset's SHA-256, the problem
// string, and that every dataset is present with the shape and dtype the problem implies (input
// roles from the OpSpec; outputs as the oracle produces them from the stored inputs, which costs
// one oracle evaluation). Every problem - missing, truncated, corrupted or foreign file, missing or
// unexpected dataset, wrong shape or dtype, checksum mismatch - throws a one-line ArgumentError
// naming the file. `name` labels in-memory images in messages.
CaseFile read_case(const std::filesystem::path& path);
CaseFile decode_case(std::span<const std::uint8_t> bytes, const std::string& name);

enum class WriteOutcome { created, replaced, unchanged };
// Encodes the case and writes it atomically (write_file_if_changed).
WriteOutcome write_case(const std::filesystem::path& path, const CaseFile& c);

// "<op>-<primary dtype>-<first 16 hex digits of SHA-256 of the canonical problem string>.h5":
// derived from the problem alone, so a manifest needs no file column.
std::string case_file_name(const Problem& problem);

// Lowercase hex SHA-256 (OpenSSL).
std::string sha256_hex(std::span<const std::uint8_t> bytes);

// Whole-file reading; throws ArgumentError naming the file when it cannot be read.
std::vector<std::uint8_t> read_file_bytes(const std::filesystem::path& path);
// Writes `bytes` to a temporary file in the target's directory, flushes it to disk and renames it
// over the target, unless the target already holds exactly these bytes (then nothing is written).
// On any failure the temporary is removed, the target is untouched, and ArgumentError names the
// file. `before_rename`, when given, runs on the complete temporary just before the rename (tests
// use it to simulate a failure at the last moment).
WriteOutcome write_file_if_changed(const std::filesystem::path& path, std::span<const std::uint8_t> bytes,
                                   const std::function<void(const std::filesystem::path&)>& before_rename = {});

// The golden manifest (golden/data/manifest.txt): one problem string per line; blank lines and
// text from '#' to the end of a line are ignored.
struct ManifestEntry {
  std::size_t line = 0;   // 1-based line number in the manifest
  Problem problem;
  std::string text;       // the canonical problem string
  std::string file_name;  // case_file_name(problem)
  bool canonical = true;  // the line is written as to_string prints it
};
// Throws ArgumentError naming the manifest and line for an unparsable or invalid problem, or a
// problem listed twice.
std::vector<ManifestEntry> read_manifest(const std::filesystem::path& path);

}  // namespace ssd
