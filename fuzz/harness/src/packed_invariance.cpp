// Prefix and packing invariance of Mamba2Fwd's packed batches: the cut batches and their comparison
// with the whole call.
#include "ssd/harness/packed_invariance.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ssd/reference/varlen.h"
#include "token_range.h"

namespace ssd {
namespace {

// One sequence of a cut batch: its length and the case's sequence whose initial state it starts
// from (-1: the filler, which has none).
struct Run {
  std::int64_t length = 0;
  std::int64_t source = -1;
};

bool is_token_major(const std::string& name) {
  return name == "x" || name == "dt" || name == "B" || name == "C" || name == "z";
}

bool is_encoding(const std::string& name) {
  return name == "cu_seqlens" || name == "chunk_indices" || name == "chunk_offsets" || name == "cu_chunk_seqlens" ||
         name == "chunk_seq_idx" || name == "last_chunk_indices";
}

Tensor i32_tensor(const std::vector<std::int64_t>& values, Shape shape) {
  return Tensor(DType::i32, std::move(shape), std::vector<double>(values.begin(), values.end()));
}

// The case's tokens [from, from + sum of the runs' lengths) as a batch of the given sequences.
PackedCut cut_batch(const Problem& p, const InputSet& inputs, std::int64_t from, const std::vector<Run>& runs) {
  PackedCut cut;
  cut.first_token = from;
  cut.problem = p;
  cut.problem.seq = SeqSpec{SeqSpec::Kind::runs, 0, {}};
  std::int64_t tokens = 0;
  for (const Run& run : runs) {
    cut.problem.seq.runs.push_back(run.length);
    tokens += run.length;
  }
  cut.problem.s = tokens;
  const std::int64_t count = static_cast<std::int64_t>(runs.size());
  for (const auto& [name, t] : inputs.all()) {
    if (is_token_major(name)) {
      cut.inputs.put(name, token_range(t, from, tokens));
    } else if (name == "seq_idx") {
      cut.inputs.put(name, i32_tensor(seq_idx_row(cut.problem, 0), {1, tokens}));
    } else if (is_encoding(name)) {
      const std::vector<std::int64_t> values = varlen_encoding(cut.problem, name);
      cut.inputs.put(name, i32_tensor(values, {static_cast<std::int64_t>(values.size())}));
    } else if (name == "initial_states") {
      // The filler's row is never read (its flag is 0); zeros keep it from looking like anyone's.
      const std::int64_t per_row = t.numel() / t.shape()[0];
      std::vector<double> values;
      for (const Run& run : runs)
        if (run.source < 0) values.insert(values.end(), static_cast<std::size_t>(per_row), 0.0);
        else values.insert(values.end(), t.values().begin() + run.source * per_row,
                           t.values().begin() + (run.source + 1) * per_row);
      Shape shape = t.shape();
      shape[0] = count;
      cut.inputs.put(name, Tensor(t.dtype(), shape, std::move(values)));
    } else if (name == "has_initial_states") {
      std::vector<double> flags;
      for (const Run& run : runs) flags.push_back(run.source < 0 ? 0.0 : t[run.source]);
      cut.inputs.put(name, Tensor(t.dtype(), {count}, std::move(flags)));
    } else {
      cut.inputs.put(name, t);  // per head (A, D, dt_bias): the same
    }
  }
  return cut;
}

std::int64_t pick(const Problem& p, std::int64_t count) {
  return static_cast<std::int64_t>(p.seed % static_cast<std::uint64_t>(count));
}

const RawTensor* find(const std::vector<RawTensor>& list, const std::string& name) {
  for (const RawTensor& t : list)
    if (t.name == name) return &t;
  return nullptr;
}

// A float element that is +0 or -0: every bit but the sign (the last byte's top bit) clear.
bool is_zero(const std::uint8_t* e, std::int64_t width) {
  for (std::int64_t i = 0; i + 1 < width; ++i)
    if (e[i] != 0) return false;
  return (e[width - 1] & 0x7f) == 0;
}

// How a relation compares an element of the whole call with the cut's.
struct Rule {
  bool zero_sign_free = false;  // +0 and -0 are one value
  const Truth* truth = nullptr;  // when given, only elements it demands something of
  bool demanded(const std::string& name, std::int64_t flat) const {
    if (truth == nullptr) return true;
    const double bound = truth->bounds.get(name).bound[flat], want = truth->oracle.get(name).value[flat];
    return std::isfinite(bound) && std::isfinite(want);
  }
};

// The first element of whole's [at_whole, at_whole + count) that differs from got's [at_got, ...)
// under the rule, as its flat index in whole; -1 when none does (or an output is missing: that is
// the judge's business).
std::int64_t first_difference(const std::vector<RawTensor>& whole, const std::vector<RawTensor>& got,
                              const std::string& name, std::int64_t at_whole, std::int64_t at_got, std::int64_t count,
                              const Rule& rule) {
  const RawTensor* a = find(whole, name);
  const RawTensor* b = find(got, name);
  if (a == nullptr || b == nullptr) return -1;
  const std::int64_t width =
      static_cast<std::int64_t>(a->bytes.size()) / std::max<std::int64_t>(element_count(a->shape), 1);
  for (std::int64_t i = 0; i < count; ++i) {
    const std::uint8_t* x = a->bytes.data() + (at_whole + i) * width;
    const std::uint8_t* y = b->bytes.data() + (at_got + i) * width;
    if (std::memcmp(x, y, static_cast<std::size_t>(width)) == 0) continue;
    if (rule.zero_sign_free && is_zero(x, width) && is_zero(y, width)) continue;
    if (!rule.demanded(name, at_whole + i)) continue;
    return at_whole + i;
  }
  return -1;
}

// The first difference of out (the cut's tokens from cut.filler on) or of the compared
// varlen_states rows, as "<output> element <flat>"; nullopt when none.
std::optional<std::string> difference(const Problem& p, const PackedCut& cut, const std::vector<RawTensor>& whole,
                                      const std::vector<RawTensor>& got, const Rule& rule) {
  const std::int64_t per_token = p.h * p.p, per_state = p.h * p.p * p.n;
  const std::int64_t compared = cut.problem.s - cut.filler;
  const std::int64_t at = first_difference(whole, got, "out", (cut.first_token + cut.filler) * per_token,
                                           cut.filler * per_token, compared * per_token, rule);
  if (at >= 0) return "out element " + std::to_string(at);
  for (const auto& [row_whole, row_got] : cut.states)
    if (const std::int64_t i = first_difference(whole, got, "varlen_states", row_whole * per_state,
                                                row_got * per_state, per_state, rule);
        i >= 0)
      return "varlen_states element " + std::to_string(i);
  return std::nullopt;
}

}  // namespace

bool packed_invariance_applies(const Problem& p) {
  return p.op == Op::mamba2 && p.varlen && packed_sequences(p).count() >= 2;
}

PackedCut packed_prefix(const Problem& p, const InputSet& inputs) {
  const PackedSequences s = packed_sequences(p);
  const std::int64_t k = pick(p, s.count() - 1);
  std::vector<Run> runs;
  for (std::int64_t j = 0; j <= k; ++j) runs.push_back({s.length[static_cast<std::size_t>(j)], j});
  PackedCut cut = cut_batch(p, inputs, 0, runs);
  cut.sequence = k;
  for (std::int64_t j = 0; j <= k; ++j) cut.states.emplace_back(j, j);
  return cut;
}

PackedCut packed_alone(const Problem& p, const InputSet& inputs) {
  const PackedSequences s = packed_sequences(p);
  const std::int64_t k = 1 + pick(p, s.count() - 1);
  const std::int64_t start = s.start[static_cast<std::size_t>(k)], boundary = start / p.q * p.q;
  std::vector<Run> runs;
  if (start > boundary) runs.push_back({start - boundary, -1});
  runs.push_back({s.length[static_cast<std::size_t>(k)], k});
  PackedCut cut = cut_batch(p, inputs, boundary, runs);
  cut.sequence = k;
  cut.filler = start - boundary;
  cut.states.emplace_back(k, cut.filler > 0 ? 1 : 0);
  return cut;
}

std::optional<std::string> packed_prefix_violation(const Problem& p, const PackedCut& cut,
                                                   const std::vector<RawTensor>& whole,
                                                   const std::vector<RawTensor>& got) {
  const std::optional<std::string> where = difference(p, cut, whole, got, Rule{});
  if (!where) return std::nullopt;
  return "prefix invariance: the packed batch cut after sequence " + std::to_string(cut.sequence) + " (its first " +
         std::to_string(cut.sequence + 1) + " of " + std::to_string(packed_sequences(p).count()) + " sequences, " +
         std::to_string(cut.problem.s) + " of " + std::to_string(p.s) + " tokens) differs from the whole call, first at " +
         *where + " (flat, in the whole call's output)";
}

std::optional<std::string> packed_alone_violation(const Problem& p, const Truth& truth, const PackedCut& cut,
                                                  const std::vector<RawTensor>& whole,
                                                  const std::vector<RawTensor>& got) {
  const std::optional<std::string> where = difference(p, cut, whole, got, Rule{true, &truth});
  if (!where) return std::nullopt;
  const std::string k = std::to_string(cut.sequence);
  const std::string tokens =
      "tokens " + std::to_string(cut.first_token) + ".." + std::to_string(cut.first_token + cut.problem.s - 1);
  const std::string place = cut.filler > 0 ? tokens + ", the first " + std::to_string(cut.filler) + " one filler sequence"
                                           : tokens + ", from a chunk boundary";
  return "packing invariance: sequence " + k + " alone at its place in its chunk (" + place + ") differs from sequence " +
         k + " in its batch, first at " + *where + " (flat, in the whole call's output)";
}

}  // namespace ssd
