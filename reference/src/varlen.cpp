// Packed variable-length batches: seq_idx rows from a problem, the sequences they describe, and
// the upstream encodings with their inverses.
#include "ssd/reference/varlen.h"

#include <algorithm>
#include <cstdlib>

#include "fill_stream.h"
#include "ssd/reference/errors.h"

namespace ssd {

std::vector<std::int64_t> seq_idx_row(const Problem& p, std::int64_t row) {
  const std::int64_t S = p.s;
  std::vector<std::int64_t> ids(static_cast<std::size_t>(S), 0);
  if (p.seq.kind == SeqSpec::Kind::runs) {
    std::int64_t t0 = 0, id = p.seq.first_id;
    for (std::int64_t run : p.seq.runs) {
      const std::int64_t value = run < 0 ? -1 : id++;
      // Runs that do not cover S exactly (an invalid case built to test rejection) are cut at S,
      // and tokens they leave are id 0.
      for (std::int64_t k = 0; k < std::abs(run) && t0 < S; ++k) ids[static_cast<std::size_t>(t0++)] = value;
    }
    return ids;
  }
  // Random row: sequences at random cut points (1 to 4, or to 8 in a packed varlen batch),
  // starting at id 0 (or 1 a quarter of the time, never in a packed batch), and a padding tail of
  // distinct negative ids a quarter of the time.
  Stream stream(p.seed, "seq_idx", static_cast<std::uint64_t>(row));
  const std::int64_t padding = (S >= 2 && stream.uniform() < 0.25) ? 1 + stream.below(std::max<std::int64_t>(1, S / 4)) : 0;
  const std::int64_t body = S - padding;
  const std::int64_t sequences = 1 + stream.below(std::min<std::int64_t>(p.varlen ? 8 : 4, body));
  std::vector<std::int64_t> starts{0};
  for (std::int64_t k = 1; k < sequences; ++k) starts.push_back(1 + stream.below(body - 1));
  std::sort(starts.begin(), starts.end());
  const bool from_one = stream.uniform() < 0.25;
  std::int64_t id = from_one && !p.varlen ? 1 : 0;
  std::size_t next = 1;
  for (std::int64_t tok = 0; tok < body; ++tok) {
    while (next < starts.size() && starts[next] == tok) {
      if (starts[next - 1] != tok) ++id;  // repeated cut points merge
      ++next;
    }
    ids[static_cast<std::size_t>(tok)] = id;
  }
  for (std::int64_t tok = body; tok < S; ++tok) ids[static_cast<std::size_t>(tok)] = -1 - stream.below(2);
  return ids;
}

PackedSequences sequences_from_ids(const std::vector<std::int64_t>& ids) {
  PackedSequences s;
  s.tokens = static_cast<std::int64_t>(ids.size());
  bool in_padding = false;
  for (std::int64_t t = 0; t < s.tokens; ++t) {
    const std::int64_t id = ids[static_cast<std::size_t>(t)];
    if (id < 0) {
      in_padding = true;
      continue;
    }
    if (in_padding)
      throw ArgumentError("seq_idx", "token " + std::to_string(t) + " has id " + std::to_string(id) +
                                         " after padding: padding ends a packed row");
    if (t > 0 && id == ids[static_cast<std::size_t>(t - 1)]) {
      ++s.length.back();
      continue;
    }
    if (id != s.count())
      throw ArgumentError("seq_idx", "token " + std::to_string(t) + " starts sequence " + std::to_string(id) +
                                         ", expected " + std::to_string(s.count()) +
                                         " (a packed row numbers its sequences 0, 1, 2, ...)");
    s.start.push_back(t);
    s.length.push_back(1);
  }
  return s;
}

PackedSequences packed_sequences(const Problem& p) {
  // Lenient: every change of a non-negative id starts a sequence, whatever its number, so that
  // shapes can be computed for any parsed problem; invalid_reason refuses ids not from 0.
  PackedSequences s;
  if (p.seq.kind == SeqSpec::Kind::none || p.s <= 0) return s;
  const std::vector<std::int64_t> ids = seq_idx_row(p, 0);
  s.tokens = p.s;
  for (std::int64_t t = 0; t < s.tokens; ++t) {
    const std::int64_t id = ids[static_cast<std::size_t>(t)];
    if (id < 0) break;
    if (t > 0 && id == ids[static_cast<std::size_t>(t - 1)]) {
      ++s.length.back();
      continue;
    }
    s.start.push_back(t);
    s.length.push_back(1);
  }
  return s;
}

std::vector<std::int64_t> cu_seqlens(const PackedSequences& s) {
  std::vector<std::int64_t> cu{0};
  for (std::int64_t j = 0; j < s.count(); ++j) cu.push_back(s.end(j));
  return cu;
}

PseudoChunks pseudo_chunks(const PackedSequences& s, std::int64_t Q) {
  PseudoChunks out;
  const std::int64_t chunks = (s.tokens + Q - 1) / Q;
  std::size_t j = 1;  // the next sequence start to place (sequence 0 starts the first chunk)
  for (std::int64_t c = 0; c < chunks; ++c) {
    out.chunk_indices.push_back(c);
    out.chunk_offsets.push_back(0);
    for (; j < s.start.size() && s.start[j] < (c + 1) * Q; ++j) {
      if (s.start[j] % Q == 0) continue;  // on the chunk boundary: the chunk's own logical chunk
      out.chunk_indices.push_back(c);
      out.chunk_offsets.push_back(s.start[j] % Q);
    }
  }
  return out;
}

AlignedChunks aligned_chunks(const PackedSequences& s, std::int64_t Q) {
  AlignedChunks out;
  out.cu_chunk_seqlens.push_back(0);
  for (std::int64_t j = 0; j < s.count(); ++j) {
    for (std::int64_t t = s.start[static_cast<std::size_t>(j)]; t < s.end(j); t += Q) {
      out.cu_chunk_seqlens.push_back(std::min(t + Q, s.end(j)));
      out.chunk_seq_idx.push_back(j);
    }
    out.last_chunk_indices.push_back(static_cast<std::int64_t>(out.chunk_seq_idx.size()) - 1);
  }
  return out;
}

std::vector<std::int64_t> ids_from_cu_seqlens(const std::vector<std::int64_t>& cu, std::int64_t tokens) {
  std::vector<std::int64_t> ids(static_cast<std::size_t>(tokens), -1);
  for (std::size_t j = 0; j + 1 < cu.size(); ++j)
    for (std::int64_t t = cu[j]; t < cu[j + 1] && t < tokens; ++t) ids[static_cast<std::size_t>(t)] = static_cast<std::int64_t>(j);
  return ids;
}

std::vector<std::int64_t> ids_from_pseudo_chunks(const PseudoChunks& chunks, const std::vector<std::int64_t>& cu,
                                                 std::int64_t Q, std::int64_t tokens) {
  // Each logical chunk that begins a new sequence (offset > 0, or a chunk start that is a
  // sequence start) advances the id; padding is what cu_seqlens leaves after its last entry.
  std::vector<std::int64_t> ids(static_cast<std::size_t>(tokens), -1);
  const std::int64_t used = cu.empty() ? 0 : std::min(cu.back(), tokens);
  std::int64_t id = -1;
  for (std::size_t l = 0; l < chunks.chunk_indices.size(); ++l) {
    const std::int64_t begin = chunks.chunk_indices[l] * Q + chunks.chunk_offsets[l];
    const bool last = l + 1 == chunks.chunk_indices.size();
    const std::int64_t end = last ? used
                                  : std::min(used, chunks.chunk_indices[l + 1] * Q + chunks.chunk_offsets[l + 1]);
    const bool starts_sequence = chunks.chunk_offsets[l] > 0 || std::find(cu.begin(), cu.end(), begin) != cu.end();
    if (starts_sequence && begin < used) ++id;
    for (std::int64_t t = begin; t < end; ++t) ids[static_cast<std::size_t>(t)] = id;
  }
  return ids;
}

std::vector<std::int64_t> ids_from_aligned_chunks(const AlignedChunks& chunks, std::int64_t tokens) {
  std::vector<std::int64_t> ids(static_cast<std::size_t>(tokens), -1);
  for (std::size_t c = 0; c + 1 < chunks.cu_chunk_seqlens.size(); ++c)
    for (std::int64_t t = chunks.cu_chunk_seqlens[c]; t < chunks.cu_chunk_seqlens[c + 1] && t < tokens; ++t)
      ids[static_cast<std::size_t>(t)] = chunks.chunk_seq_idx[c];
  return ids;
}

std::vector<std::int64_t> varlen_encoding(const Problem& p, const std::string& role) {
  const PackedSequences s = packed_sequences(p);
  if (role == "cu_seqlens") return cu_seqlens(s);
  if (role == "chunk_indices") return pseudo_chunks(s, p.q).chunk_indices;
  if (role == "chunk_offsets") return pseudo_chunks(s, p.q).chunk_offsets;
  const AlignedChunks aligned = aligned_chunks(s, p.q);
  if (role == "cu_chunk_seqlens") return aligned.cu_chunk_seqlens;
  if (role == "chunk_seq_idx") return aligned.chunk_seq_idx;
  if (role == "last_chunk_indices") return aligned.last_chunk_indices;
  throw ArgumentError("role", "no varlen encoding named '" + role + "'");
}

}  // namespace ssd
