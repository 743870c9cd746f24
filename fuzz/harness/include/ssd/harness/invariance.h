// Packing and prefix invariance of the decode step, and split prefill of Mamba2Fwd: relations a
// kernel keeps with itself (docs/tolerance.md, "Packing invariance"): one row of a call, called alone with its own
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

// The check applies to decode cases (recurrent) of more than one row, varlen calls included.
bool invariance_applies(const Problem& p);

// Row `row` of a case as a call of its own: the problem with b = 1 and the row's inputs (in a
// varlen call its stretch of the packed tokens, cu_seqlens {0, length} and rows= that length).
struct RowAlone {
  Problem problem;
  InputSet inputs;
  std::int64_t row = 0;
};
// The first row from `seed % b` on that is not padding (nor empty, in a varlen call); nullopt when
// there is none.
std::optional<RowAlone> row_alone(const Problem& p, const InputSet& inputs);

// Where the row's raw outputs alone differ from its part of the batch's: out and
// intermediate_states of the row (of a varlen row, its tokens), and every state slot the row
// stores. nullopt when bit-identical.
std::optional<std::string> invariance_violation(const Problem& p, const InputSet& inputs, const RowAlone& alone,
                                                const std::vector<RawTensor>& batch, const std::vector<RawTensor>& single);

// Prefix invariance: multi-token decode cases (tokens= T >= 2, varlen included, without
// num_accepted_tokens, which may point past a shorter row).
bool prefix_invariance_applies(const Problem& p);

// The case cut to its first k tokens (k = 1 + seed mod (T - 1)): tokens= k, the token axis of x, dt,
// z, B, C and of [Bt,T] slot tables cut to k; in a varlen call each row's first min(length, k)
// tokens packed again, cu_seqlens and rows= those counts.
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

// Split prefill: a Mamba2Fwd call run as two, the first k = Q * (1 + seed mod (NC - 1)) tokens and
// then the other S - k from the first call's final states, must meet the whole call's bounds (the
// way serving engines prefill a long prompt in pieces). Applies to rows of at least two chunks,
// without seq_idx or a packed batch, in the default or bench fill with dt' >= 0, and with f32 final
// states (a 16-bit state= stores the carried state once more than the whole call rounds it).
bool split_prefill_applies(const Problem& p);

struct PrefillSplit {
  Problem first, rest;   // s = k, and s = S - k with +init
  InputSet first_inputs;
  std::int64_t tokens = 0;  // k
};
PrefillSplit split_prefill(const Problem& p, const InputSet& inputs);
// The second call's inputs: the last S - k tokens, initial_states the first call's final_states.
InputSet rest_inputs(const InputSet& inputs, const PrefillSplit& split, const std::vector<RawTensor>& first_outputs);
// The two calls' outputs as the whole call's: out joined along the token axis, the second call's
// final_states. Empty when either lacks one of them (the judge reports the missing output).
std::vector<RawTensor> joined_outputs(const Problem& p, const std::vector<RawTensor>& first,
                                      const std::vector<RawTensor>& rest);

}  // namespace ssd
