// Packed variable-length batches: the one description of where each sequence of a packed row lies
// (a problem's seq= runs with +varlen), and the encodings upstream kernels read it in, each a view
// of that description with its inverse, so that the converters are tested against each other.
#pragma once
#include <cstdint>
#include <vector>

#include "ssd/reference/problem.h"
#include "ssd/reference/tensor.h"

namespace ssd {

// The sequences of one packed row of S tokens: sequence j holds tokens [start[j], start[j] +
// length[j]); they follow each other from token 0, and the tokens after the last one (if any)
// are padding (seq_idx < 0).
struct PackedSequences {
  std::int64_t tokens = 0;
  std::vector<std::int64_t> start, length;
  std::int64_t count() const { return static_cast<std::int64_t>(start.size()); }
  std::int64_t end(std::int64_t j) const { return start[static_cast<std::size_t>(j)] + length[static_cast<std::size_t>(j)]; }
  std::int64_t padding() const { return tokens - (start.empty() ? 0 : end(count() - 1)); }
  bool operator==(const PackedSequences&) const = default;
};

// The seq_idx row `row` of a problem with seq= (what make_inputs writes into seq_idx).
std::vector<std::int64_t> seq_idx_row(const Problem& p, std::int64_t row);

// The sequences a per-token id row describes: runs of equal non-negative ids, then a padding tail
// of negative ids. Throws ArgumentError('seq_idx') if the ids are not 0, 1, 2, ... in runs (the
// packed form of every varlen encoding), or padding is followed by a sequence.
PackedSequences sequences_from_ids(const std::vector<std::int64_t>& ids);
// The packed sequences of a +varlen problem (its one row; every change of id starts one).
PackedSequences packed_sequences(const Problem& p);

// mamba_ssm and vLLM: cu_seqlens [nseq+1], the running sum of the lengths (token offsets).
std::vector<std::int64_t> cu_seqlens(const PackedSequences& s);

// vLLM up to 0.10, SGLang and FlashInfer's SSDCombined ("pseudo-chunks"): one logical chunk per
// (physical chunk of Q tokens, segment of a sequence inside it). chunk_indices[l] is the physical
// chunk, chunk_offsets[l] the position in it where the segment starts: a new logical chunk begins
// at every physical chunk start and at every sequence start that is not on a chunk boundary.
struct PseudoChunks {
  std::vector<std::int64_t> chunk_indices, chunk_offsets;
};
PseudoChunks pseudo_chunks(const PackedSequences& s, std::int64_t chunk_size);

// vLLM from 0.11 (chunk-aligned): chunks never span two sequences; each sequence is cut into
// chunks of Q tokens from its own start (the last one shorter). cu_chunk_seqlens [nchunks+1] are
// the token offsets of the chunks, chunk_seq_idx [nchunks] the sequence of each chunk and
// last_chunk_indices [nseq] the last chunk of each sequence. Padding tokens are in no chunk.
struct AlignedChunks {
  std::vector<std::int64_t> cu_chunk_seqlens, chunk_seq_idx, last_chunk_indices;
};
AlignedChunks aligned_chunks(const PackedSequences& s, std::int64_t chunk_size);

// The inverses: the per-token ids (padding -1) each encoding describes, for a row of `tokens`.
std::vector<std::int64_t> ids_from_cu_seqlens(const std::vector<std::int64_t>& cu, std::int64_t tokens);
std::vector<std::int64_t> ids_from_pseudo_chunks(const PseudoChunks& chunks, const std::vector<std::int64_t>& cu,
                                                 std::int64_t chunk_size, std::int64_t tokens);
std::vector<std::int64_t> ids_from_aligned_chunks(const AlignedChunks& chunks, std::int64_t tokens);

// The encoding tensors of a +varlen problem by role name (cu_seqlens, chunk_indices,
// chunk_offsets, cu_chunk_seqlens, chunk_seq_idx, last_chunk_indices), as i32 values.
std::vector<std::int64_t> varlen_encoding(const Problem& p, const std::string& role);

}  // namespace ssd
