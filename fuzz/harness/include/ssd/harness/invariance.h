// Packing invariance of the decode step, a relation a kernel keeps with itself and that needs no
// oracle (docs/tolerance.md, "Packing invariance"): one row of a call, called alone with its own
// slices of every per-row input and the same state buffer, gives bit for bit what it gave in its
// batch. vLLM tests its SSD kernels this way; a kernel whose rows depend on their neighbours (a
// reduction split by batch size, a shared tile) fails it inside every bound.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ssd/harness/call_record.h"
#include "ssd/reference/op_spec.h"

namespace ssd {

// The check applies to decode cases (recurrent) of more than one row, except varlen calls.
bool invariance_applies(const Problem& p);

// Row `row` of a case as a call of its own: the problem with b = 1 and the row's inputs.
struct RowAlone {
  Problem problem;
  InputSet inputs;
  std::int64_t row = 0;
};
// The first row from `seed % b` on that is not padding; nullopt when every row is padding.
std::optional<RowAlone> row_alone(const Problem& p, const InputSet& inputs);

// Where the row's raw outputs alone differ from its part of the batch's: out and
// intermediate_states of the row, and every state slot the row stores. nullopt when bit-identical.
std::optional<std::string> invariance_violation(const Problem& p, const InputSet& inputs, const RowAlone& alone,
                                                const std::vector<RawTensor>& batch, const std::vector<RawTensor>& single);

}  // namespace ssd
