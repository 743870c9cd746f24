// Building cases from a problem (inputs, oracle, bounds) and naming their files.
#include <Eigen/Core>
#include <mutex>

#include "ssd/golden/case_file.h"
#include "ssd/reference/errors.h"
#include "ssd/reference/truth.h"

namespace ssd {

std::string_view case_kind_name(CaseKind kind) {
  switch (kind) {
    case CaseKind::golden: return "golden";
    case CaseKind::inputs: return "inputs";
    case CaseKind::results: return "results";
  }
  return "?";
}

void pin_eigen_cache_sizes() {
  // Eigen sizes its GEMM blocks from the CPU's caches; the block depth splits the dot products,
  // so different caches would mean a different summation order and different float64 bits.
  static std::once_flag pinned;
  std::call_once(pinned, [] { Eigen::setCpuCacheSizes(32768, 1048576, 8388608); });
}

namespace {

void require_valid(const Problem& problem) {
  if (auto why = invalid_reason(problem)) throw ArgumentError("problem", *why + " (" + to_string(problem) + ")");
}

}  // namespace

CaseFile make_golden_case(const Problem& problem) {
  require_valid(problem);
  pin_eigen_cache_sizes();
  CaseFile c;
  c.kind = CaseKind::golden;
  c.problem = problem;
  c.inputs = make_inputs(problem);
  Truth truth = compute_truth(problem, c.inputs);
  c.oracle = std::move(truth.oracle);
  c.bounds = std::move(truth.bounds);
  return c;
}

CaseFile make_inputs_case(const Problem& problem) {
  require_valid(problem);
  CaseFile c;
  c.kind = CaseKind::inputs;
  c.problem = problem;
  c.inputs = make_inputs(problem);
  return c;
}

std::string case_file_name(const Problem& problem) {
  const std::string text = to_string(problem);
  const std::string digest =
      sha256_hex(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
  return std::string(op_name(problem.op)) + "-" + std::string(dtype_name(problem.dtype)) + "-" + digest.substr(0, 16) +
         ".h5";
}

}  // namespace ssd
