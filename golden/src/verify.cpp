// Verifying golden case files: everything a file claims, recomputed by this build.
#include "ssd/golden/verify.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "ssd/reference/truth.h"

namespace ssd {

// Bit-for-bit comparison (so -0 differs from +0); the first difference, or "" when identical.
namespace {

std::string number(double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

}  // namespace

std::string tensor_difference(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype())
    return "dtype " + std::string(dtype_name(got.dtype())) + " instead of " + std::string(dtype_name(want.dtype()));
  if (got.shape() != want.shape()) return "shape " + shape_string(got.shape()) + " instead of " + shape_string(want.shape());
  for (std::int64_t i = 0; i < got.numel(); ++i)
    if (std::bit_cast<std::uint64_t>(got[i]) != std::bit_cast<std::uint64_t>(want[i]))
      return "differs at " + index_string(got.shape(), i) + ": stored " + number(got[i]) + ", recomputed " + number(want[i]);
  return "";
}

std::string mask_difference(const Shape& shape, std::int64_t numel, const std::vector<std::uint8_t>& got,
                            const std::vector<std::uint8_t>& want, bool absent_means) {
  auto at = [absent_means](const std::vector<std::uint8_t>& m, std::int64_t i) {
    return m.empty() ? absent_means : m[static_cast<std::size_t>(i)] != 0;
  };
  for (std::int64_t i = 0; i < numel; ++i)
    if (at(got, i) != at(want, i)) return "mask differs at " + index_string(shape, i);
  return "";
}

// The stored inputs are exactly make_inputs(problem): the file is the case its problem names.
void require_generated_inputs(const CaseFile& c) {
  const InputSet fresh = make_inputs(c.problem);
  for (const auto& [name, tensor] : fresh.all()) {
    const Tensor* stored = c.inputs.find(name);
    if (stored == nullptr) throw std::runtime_error("missing /inputs/" + name);
    if (std::string why = tensor_difference(*stored, tensor); !why.empty())
      throw std::runtime_error("/inputs/" + name + " is not make_inputs(problem): " + why);
  }
}

// *.h5 files of the data directory that the manifest does not list, and leftover temporaries.
std::vector<std::string> unlisted_case_files(const std::filesystem::path& data, const std::vector<ManifestEntry>& entries) {
  std::set<std::string> listed;
  for (const auto& e : entries) listed.insert(e.file_name);
  std::vector<std::string> extra;
  for (const auto& item : std::filesystem::directory_iterator(data)) {
    const std::string name = item.path().filename().string();
    const bool case_file = item.path().extension() == ".h5";
    const bool temporary = name.find(".h5.tmp-") != std::string::npos;
    if ((case_file || temporary) && listed.count(name) == 0) extra.push_back(name);
  }
  std::sort(extra.begin(), extra.end());
  return extra;
}

// Everything a golden file claims, recomputed: its problem, versions, inputs, oracle and bounds.
void verify_golden_case(const CaseFile& c, std::string_view listed_problem) {
  auto fail = [](const std::string& what) { throw std::runtime_error(what); };
  if (c.kind != CaseKind::golden) fail("kind " + std::string(case_kind_name(c.kind)) + ", expected golden");
  if (to_string(c.problem) != std::string(listed_problem)) fail("holds problem '" + to_string(c.problem) + "', the manifest lists '" + std::string(listed_problem) + "'");
  const std::pair<const std::string*, std::string_view> versions[] = {{&c.contract_version, kContractVersion},
                                                                       {&c.generator_version, kGeneratorVersion},
                                                                       {&c.oracle_version, kOracleVersion}};
  for (const auto& [stored, current] : versions)
    if (*stored != current) fail("written under version " + *stored + ", this build is " + std::string(current) + " (run ssd-golden regen)");
  require_generated_inputs(c);
  const Truth truth = compute_truth(c.problem, c.inputs);
  for (const Output& o : truth.oracle.all()) {
    const Output& stored = c.oracle.get(o.name);
    std::string why = tensor_difference(stored.value, o.value);
    if (why.empty()) why = mask_difference(o.value.shape(), o.value.numel(), stored.defined, o.defined, true);
    if (!why.empty()) fail("/oracle/" + o.name + " " + why);
  }
  for (const OutputBound& b : truth.bounds.all()) {
    const OutputBound& stored = c.bounds.get(b.name);
    std::string why = tensor_difference(stored.bound, b.bound);
    if (why.empty()) why = mask_difference(b.bound.shape(), b.bound.numel(), stored.exact, b.exact, false);
    if (why.empty() && stored.reduction_length != b.reduction_length)
      why = "reduction_length " + std::to_string(stored.reduction_length) + " instead of " + std::to_string(b.reduction_length);
    if (!why.empty()) fail("/bounds/" + b.name + " " + why);
  }
}

}  // namespace ssd
