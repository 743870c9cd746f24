// The opaque handles of the C API: each owns its C++ value and every string it hands out, so a
// pointer the API returns stays valid exactly as long as its handle.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ssd/capi.h"
#include "ssd/harness/kernel_library.h"
#include "ssd/reference/layout.h"
#include "ssd/reference/op_spec.h"
#include "ssd/reference/truth.h"

struct ssd_problem {
  explicit ssd_problem(ssd::Problem p);
  ssd::Problem problem;
  std::string text, op, letters;
  std::optional<std::string> invalid;  // invalid_reason, computed once
};

struct ssd_inputs {
  ssd::Problem problem;
  ssd::InputSet inputs;
  std::vector<std::string> names;  // role order of the OpSpec
  std::vector<ssd_capi_tensor_info> infos;
};

struct ssd_truth {
  ssd::Problem problem;
  ssd::InputSet inputs;
  ssd::Truth truth;
  std::vector<ssd_capi_tensor_info> infos;  // names point into truth.oracle
};

struct ssd_judgement {
  explicit ssd_judgement(ssd::CaseJudgement j);
  ssd::CaseJudgement judgement;
  std::string verdict, description;
  std::vector<ssd_capi_element> worst;  // pointers into judgement.outputs
};

struct ssd_problem_list {
  std::vector<ssd::Problem> problems;
};

struct ssd_library {
  ssd::KernelLibrary library;
};

struct ssd_layout {
  ssd::InputLayout layout;
  std::vector<ssd_capi_buffer_info> buffers;  // names point into layout.buffers
  std::vector<ssd_capi_placement_info> placements;  // role and buffer names point into layout.placements
};

namespace ssd::capi {

// The C-side description of a tensor: name (owned by the caller's handle), dtype, shape.
ssd_capi_tensor_info tensor_info(const std::string& name, const ssd::Tensor& t, ssd::DType storage);

// Copies `values` into a caller buffer of `bytes` bytes, as float64 or in their own encoding.
void copy_out(const ssd::Tensor& values, std::int32_t encoding, void* dst, std::int64_t bytes);

}  // namespace ssd::capi
