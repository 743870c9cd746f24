// Packing and prefix invariance of the decode step, relations a kernel keeps with itself that need
// no oracle (docs/tolerance.md, "Packing invariance"): one row of a call, called alone with its own
// slices of every per-row input and the same state buffer, gives bit for bit what it gave in its
// batch; and a multi-token call cut to its first k tokens gives bit for bit the first k tokens'
// outputs. vLLM tests its SSD kernels this way; a kernel whose rows depend on their neighbours (a
// reduction split by batch size, a shared tile), or whose tokens depend on later ones, fails them
// inside every bound.
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

// Prefix invariance: multi-token decode cases (tokens= T >= 2, not varlen, without
// num_accepted_tokens, which may point past a shorter row).
bool prefix_invariance_applies(const Problem& p);

// The case cut to its first k tokens (k = 1 + seed mod (T - 1)): tokens= k, the token axis of x, dt,
// z, B, C and of [Bt,T] slot tables cut to k.
struct TokenPrefix {
  Problem problem;
  InputSet inputs;
  std::int64_t tokens = 0;  // k
};
TokenPrefix token_prefix(const Problem& p, const InputSet& inputs);

// Where the prefix call's raw outputs differ from the first k tokens of the whole call's: out and
// intermediate_states of every row that is not padding, and with [Bt,T] tables every slot stored
// after one of the first k tokens. nullopt when bit-identical.
std::optional<std::string> prefix_violation(const Problem& p, const InputSet& inputs, const TokenPrefix& prefix,
                                            const std::vector<RawTensor>& whole, const std::vector<RawTensor>& cut);

}  // namespace ssd
