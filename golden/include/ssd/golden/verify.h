// Verifying golden case files: a file is the case its problem names (inputs are make_inputs of it)
// and its oracle outputs, bounds and versions are what this build computes, bit for bit.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ssd/golden/case_file.h"

namespace ssd {

// The first bit-level difference of two tensors (so -0 differs from +0), or "" when identical.
std::string tensor_difference(const Tensor& got, const Tensor& want);
// The first difference of two element masks (an empty mask is all `absent_means`), or "".
std::string mask_difference(const Shape& shape, std::int64_t numel, const std::vector<std::uint8_t>& got,
                            const std::vector<std::uint8_t>& want, bool absent_means);

// Throws std::runtime_error when the stored inputs are not make_inputs(problem).
void require_generated_inputs(const CaseFile& c);

// Throws std::runtime_error naming the first thing that differs: kind, problem (against the
// manifest's line), versions, inputs, oracle outputs and masks, bounds, exact masks, reduction lengths.
void verify_golden_case(const CaseFile& c, std::string_view listed_problem);

// *.h5 files of a data folder that the manifest does not list, and leftover temporaries (sorted).
std::vector<std::string> unlisted_case_files(const std::filesystem::path& data, const std::vector<ManifestEntry>& entries);

}  // namespace ssd
