// Prefix and packing invariance of Mamba2Fwd's packed batches (+varlen): relations a kernel keeps
// with itself on either chunk grid (docs/tolerance.md, "Packing and prefix invariance"). The batch
// cut after one of its sequences gives bit for bit the whole call's outputs of the sequences it
// keeps; one sequence called at its place in its chunk of the packed row's grid (the tokens before
// it in that chunk as one filler sequence) gives bit for bit its outputs in the batch.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ssd/harness/call_record.h"
#include "ssd/reference/op_spec.h"
#include "ssd/reference/truth.h"

namespace ssd {

// Both relations apply to packed batches (mamba2 +varlen) of at least two sequences.
bool packed_invariance_applies(const Problem& p);

// A packed batch cut from a case's row: the case's tokens [first_token, first_token + problem.s)
// as a call of their own, every per-sequence encoding rebuilt for it (seq_idx, cu_seqlens, the
// pseudo-chunks, the chunk-aligned chunks), initial_states and has_initial_states per sequence.
struct PackedCut {
  Problem problem;  // s: the cut's tokens; seq=: its sequences as runs from id 0
  InputSet inputs;
  std::int64_t sequence = 0;     // k, the case's sequence the relation is about
  std::int64_t first_token = 0;  // the case's token at the cut's token 0
  std::int64_t filler = 0;       // the cut's tokens before its compared ones (one sequence without initial state)
  // varlen_states rows compared: (the case's row, the cut's row).
  std::vector<std::pair<std::int64_t, std::int64_t>> states;
};

// Prefix: the sequences 0..k, k = seed mod (nseq - 1), so never the last; tokens [0, end_k).
PackedCut packed_prefix(const Problem& p, const InputSet& inputs);

// Alone: sequence k = 1 + seed mod (nseq - 1) at its place in its chunk of the global grid: tokens
// [floor(start_k / Q) Q, end_k), those before start_k as one filler sequence without an initial
// state (none when start_k is a chunk boundary), then sequence k with its own.
PackedCut packed_alone(const Problem& p, const InputSet& inputs);

// Where the prefix call's raw outputs differ from the whole call's: out at every token the cut
// keeps, varlen_states of every sequence it keeps. nullopt when bit-identical.
std::optional<std::string> packed_prefix_violation(const Problem& p, const PackedCut& cut,
                                                   const std::vector<RawTensor>& whole,
                                                   const std::vector<RawTensor>& got);

// Where sequence k alone differs from its part of the batch: out at its tokens, its varlen_states
// row. Bit for bit, except that +0 and -0 are one value (a kernel masks a neighbour's carried
// state by multiplying with 0, and the zero takes that state's sign), and elements the whole
// call's truth demands nothing of (an infinite bound or a non-finite oracle: a neighbour's state
// that may overflow reaches them through that 0) are not compared. nullopt when they agree.
std::optional<std::string> packed_alone_violation(const Problem& p, const Truth& truth, const PackedCut& cut,
                                                  const std::vector<RawTensor>& whole,
                                                  const std::vector<RawTensor>& got);

}  // namespace ssd
