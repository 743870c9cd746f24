// Packing and prefix invariance of the decode step: the row alone against its part of the batch, and
// the first k tokens against the whole call, byte for byte; and Mamba2Fwd prefilled in two calls.
#include "ssd/harness/invariance.h"

#include <algorithm>
#include <cstring>

#include "ssd/reference/bind.h"
#include "ssd/reference/decode_plan.h"
#include "token_range.h"

namespace ssd {
namespace {

// The inputs with one entry per token (per row in a one-token decode call).
bool is_token_major(const std::string& name) {
  return name == "x" || name == "dt" || name == "B" || name == "C" || name == "z";
}

const RawTensor* find(const std::vector<RawTensor>& list, const std::string& name) {
  for (const RawTensor& t : list)
    if (t.name == name) return &t;
  return nullptr;
}

// Bytes [first, first + count) of `a` (elements `first_a` on) against those of `b` (from `first_b`):
// the first element that differs, or -1.
std::int64_t first_difference(const RawTensor& a, std::int64_t first_a, const RawTensor& b, std::int64_t first_b,
                              std::int64_t count) {
  const std::int64_t width = static_cast<std::int64_t>(a.bytes.size()) / std::max<std::int64_t>(element_count(a.shape), 1);
  for (std::int64_t i = 0; i < count; ++i)
    if (std::memcmp(a.bytes.data() + (first_a + i) * width, b.bytes.data() + (first_b + i) * width,
                    static_cast<std::size_t>(width)) != 0)
      return i;
  return -1;
}

// Where each row's tokens start in a varlen call's packed token axis (its cu_seqlens), and its length.
struct PackedRows {
  std::vector<std::int64_t> first, length;
};
PackedRows packed_rows(const Problem& p) {
  PackedRows r;
  r.length = decode_row_lengths(p);
  std::int64_t at = 0;
  for (std::int64_t n : r.length) {
    r.first.push_back(at);
    at += n;
  }
  return r;
}

}  // namespace

bool invariance_applies(const Problem& p) { return p.op == Op::recurrent && p.b > 1; }

std::optional<RowAlone> row_alone(const Problem& p, const InputSet& inputs) {
  const RecurrentArgs args = bind_recurrent(p, inputs);
  const DecodePlan plan = decode_plan(args, validate(args));
  const PackedRows packed = packed_rows(p);
  // A row of a varlen call needs a token to be a call of its own.
  auto usable = [&](std::int64_t b) {
    return !plan.rows[static_cast<std::size_t>(b)].padding() && (!p.varlen || packed.length[static_cast<std::size_t>(b)] > 0);
  };
  std::optional<std::int64_t> row;
  for (std::int64_t k = 0; k < p.b && !row; ++k) {
    const std::int64_t b = static_cast<std::int64_t>((p.seed + static_cast<std::uint64_t>(k)) % static_cast<std::uint64_t>(p.b));
    if (usable(b)) row = b;
  }
  if (!row) return std::nullopt;
  const auto r = static_cast<std::size_t>(*row);
  RowAlone alone;
  alone.row = *row;
  alone.problem = p;
  alone.problem.b = 1;
  if (p.varlen) alone.problem.rows = {packed.length[r]};  // its own length, written out
  for (const auto& [name, t] : inputs.all()) {
    if (p.varlen && is_token_major(name)) {
      alone.inputs.put(name, t.rows(packed.first[r], packed.length[r]));  // its stretch of the packed tokens
    } else if (name == "cu_seqlens") {
      alone.inputs.put(name, Tensor(t.dtype(), {2}, {0.0, static_cast<double>(packed.length[r])}));
    } else {
      // Per-row roles have the row on axis 0; the state too without slot tables (row b is slot b).
      const bool per_row = is_token_major(name) || name == "state_batch_indices" || name == "dst_state_batch_indices" ||
                           name == "num_accepted_tokens" || (name == "state" && !p.sbi);
      alone.inputs.put(name, per_row ? t.row(*row) : t);
    }
  }
  return alone;
}

std::optional<std::string> invariance_violation(const Problem& p, const InputSet& inputs, const RowAlone& alone,
                                                const std::vector<RawTensor>& batch,
                                                const std::vector<RawTensor>& single) {
  const std::string row = std::to_string(alone.row);
  auto differs = [&](const std::string& name, std::int64_t at_batch, std::int64_t at_single, std::int64_t count)
      -> std::optional<std::string> {
    const RawTensor* a = find(batch, name);
    const RawTensor* b = find(single, name);
    if (a == nullptr || b == nullptr) return std::nullopt;  // missing outputs are the judge's business
    const std::int64_t i = first_difference(*a, at_batch, *b, at_single, count);
    if (i < 0) return std::nullopt;
    return "packing invariance: row " + row + " called alone (b = 1, its slices of the inputs) differs from row " + row +
           " in its batch, first at " + name + " element " + std::to_string(at_batch + i) + " (flat, in the batch's " + name + ")";
  };
  // out: the row's block of axis 0, in a varlen call its stretch of the packed tokens.
  // intermediate_states [Bt,T,...]: the row's block, in a varlen call its first `length` tokens.
  const PackedRows packed = packed_rows(p);
  const auto r = static_cast<std::size_t>(alone.row);
  if (const RawTensor* a = find(batch, "out")) {
    const std::int64_t blocks = p.varlen ? a->shape[0] : p.b;  // the packed tokens, or the rows
    const std::int64_t per_block = element_count(a->shape) / std::max<std::int64_t>(blocks, 1);
    const std::int64_t first = p.varlen ? packed.first[r] : alone.row, count = p.varlen ? packed.length[r] : 1;
    if (auto why = differs("out", first * per_block, 0, count * per_block)) return why;
  }
  if (const RawTensor* a = find(batch, "intermediate_states")) {
    const std::int64_t per_row = element_count(a->shape) / p.b;
    const std::int64_t count = p.varlen ? per_row / std::max<std::int64_t>(p.tokens, 1) * packed.length[r] : per_row;
    if (auto why = differs("intermediate_states", alone.row * per_row, 0, count)) return why;
  }
  // The state: every slot the row stores (with slot tables), or the row's own slot.
  const std::int64_t per_slot = p.h * p.p * p.n;
  if (!p.sbi) return differs("state", alone.row * per_slot, 0, per_slot);
  const RecurrentArgs args = bind_recurrent(p, inputs);
  const DecodePlan plan = decode_plan(args, validate(args));
  for (std::int64_t w : plan.rows[static_cast<std::size_t>(alone.row)].writes)
    if (w >= 0)
      if (auto why = differs("state", w * per_slot, w * per_slot, per_slot)) return why;
  return std::nullopt;
}

bool prefix_invariance_applies(const Problem& p) { return p.op == Op::recurrent && p.tokens >= 2 && !p.accepted; }

TokenPrefix token_prefix(const Problem& p, const InputSet& inputs) {
  TokenPrefix cut;
  cut.tokens = 1 + static_cast<std::int64_t>(p.seed % static_cast<std::uint64_t>(p.tokens - 1));
  cut.problem = p;
  cut.problem.tokens = cut.tokens;
  // A varlen call keeps each row's first min(length, k) tokens, packed again, with rows= those counts.
  const PackedRows packed = packed_rows(p);
  if (p.varlen) {
    cut.problem.rows.clear();
    for (std::int64_t n : packed.length) cut.problem.rows.push_back(std::min(n, cut.tokens));
  }
  const PackedRows kept = packed_rows(cut.problem);
  for (const auto& [name, t] : inputs.all()) {
    const bool slot_table = (name == "state_batch_indices" || name == "dst_state_batch_indices") && t.rank() == 2;
    if (p.varlen && is_token_major(name)) {
      const std::int64_t per_token = t.numel() / std::max<std::int64_t>(t.dim(0), 1);
      Shape shape = t.shape();
      shape[0] = kept.first.empty() ? 0 : kept.first.back() + kept.length.back();
      std::vector<double> values;
      for (std::size_t b = 0; b < kept.length.size(); ++b) {
        const auto from = t.values().begin() + packed.first[b] * per_token;
        values.insert(values.end(), from, from + kept.length[b] * per_token);
      }
      cut.inputs.put(name, Tensor(t.dtype(), std::move(shape), std::move(values)));
    } else if (p.varlen && name == "cu_seqlens") {
      std::vector<double> ends{0.0};
      for (std::size_t b = 0; b < kept.length.size(); ++b) ends.push_back(static_cast<double>(kept.first[b] + kept.length[b]));
      const Shape shape{static_cast<std::int64_t>(ends.size())};  // before `ends` is moved from
      cut.inputs.put(name, Tensor(t.dtype(), shape, std::move(ends)));
    } else {
      cut.inputs.put(name, is_token_major(name) || slot_table ? token_range(t, 0, cut.tokens) : t);
    }
  }
  return cut;
}

std::optional<std::string> prefix_violation(const Problem& p, const InputSet& inputs, const TokenPrefix& prefix,
                                            const std::vector<RawTensor>& whole, const std::vector<RawTensor>& cut) {
  const RecurrentArgs args = bind_recurrent(p, inputs);
  const DecodePlan plan = decode_plan(args, validate(args));
  const std::int64_t T = p.tokens, k = prefix.tokens;
  auto message = [&](const std::string& name, std::int64_t b, std::int64_t at) {
    return "prefix invariance: the call cut to its first " + std::to_string(k) + " of " + std::to_string(T) +
           " tokens differs from the whole call at row " + std::to_string(b) + ", " + name + " element " +
           std::to_string(at) + " (flat, in the whole call's " + name + ")";
  };
  // Row b's first kept tokens: in a varlen call min(length, k) of them, at its place in the packed
  // out of each call; intermediate_states keeps its [Bt,T] grid in both layouts.
  const PackedRows packed = packed_rows(p), kept = packed_rows(prefix.problem);
  for (const char* name : {"out", "intermediate_states"}) {
    const RawTensor* a = find(whole, name);
    const RawTensor* c = find(cut, name);
    if (a == nullptr || c == nullptr) continue;
    const bool packed_axis = p.varlen && std::string(name) == "out";
    const std::int64_t per_token = element_count(a->shape) / (packed_axis ? std::max<std::int64_t>(a->shape[0], 1) : p.b * T);
    for (std::int64_t b = 0; b < p.b; ++b) {
      const auto r = static_cast<std::size_t>(b);
      if (plan.rows[r].padding()) continue;  // its outputs are don't care
      const std::int64_t count = (p.varlen ? kept.length[r] : k) * per_token;
      const std::int64_t at_whole = (packed_axis ? packed.first[r] : b * T) * per_token;
      const std::int64_t at_cut = (packed_axis ? kept.first[r] : b * k) * per_token;
      const std::int64_t i = first_difference(*a, at_whole, *c, at_cut, count);
      if (i >= 0) return message(name, b, at_whole + i);
    }
  }
  // Slots stored after one of the first k tokens ([Bt,T] tables); with [Bt] tables the state is
  // stored after the last token, which the two calls do not share.
  const RawTensor* a = find(whole, "state");
  const RawTensor* c = find(cut, "state");
  if (!p.spec || a == nullptr || c == nullptr) return std::nullopt;
  const std::int64_t per_slot = p.h * p.p * p.n;
  for (std::int64_t b = 0; b < p.b; ++b)
    for (std::int64_t t = 0; t < (p.varlen ? kept.length[static_cast<std::size_t>(b)] : k); ++t)
      if (const std::int64_t w = plan.rows[static_cast<std::size_t>(b)].writes[static_cast<std::size_t>(t)]; w >= 0) {
        const std::int64_t i = first_difference(*a, w * per_slot, *c, w * per_slot, per_slot);
        if (i >= 0) return message("state", b, w * per_slot + i);
      }
  return std::nullopt;
}

bool split_prefill_applies(const Problem& p) {
  const auto state = p.dtypes.find("state");
  return p.op == Op::mamba2 && !p.varlen && p.seq.kind == SeqSpec::Kind::none && p.s > p.q && (p.fill == "default" || p.fill == "bench") &&
         (!p.dt_limit || p.dt_limit->lo >= 0.0) && (state == p.dtypes.end() || state->second == DType::f32);
}

PrefillSplit split_prefill(const Problem& p, const InputSet& inputs) {
  const std::int64_t chunks = (p.s + p.q - 1) / p.q;
  PrefillSplit split;
  split.tokens = p.q * (1 + static_cast<std::int64_t>(p.seed % static_cast<std::uint64_t>(chunks - 1)));
  split.first = p;
  split.first.s = split.tokens;
  split.rest = p;
  split.rest.s = p.s - split.tokens;
  split.rest.init = true;
  split.rest.dtypes.erase("initial_states");  // the first call's final states come as f32 values
  for (const auto& [name, t] : inputs.all())
    split.first_inputs.put(name, is_token_major(name) ? token_range(t, 0, split.tokens) : t);
  return split;
}

InputSet rest_inputs(const InputSet& inputs, const PrefillSplit& split, const std::vector<RawTensor>& first_outputs) {
  InputSet rest;
  for (const auto& [name, t] : inputs.all())
    if (name != "initial_states") rest.put(name, is_token_major(name) ? token_range(t, split.tokens, t.shape()[1] - split.tokens) : t);
  const Outputs decoded = decode_outputs(first_outputs);
  const Tensor& final_states = decoded.get("final_states").value;
  rest.put("initial_states", Tensor(DType::f32, final_states.shape(),
                                    std::vector<double>(final_states.values().begin(), final_states.values().end())));
  return rest;
}

std::vector<RawTensor> joined_outputs(const Problem& p, const std::vector<RawTensor>& first,
                                      const std::vector<RawTensor>& rest) {
  const RawTensor* out_first = find(first, "out");
  const RawTensor* out_rest = find(rest, "out");
  const RawTensor* final_rest = find(rest, "final_states");
  if (out_first == nullptr || out_rest == nullptr || final_rest == nullptr) return {};
  RawTensor out = *out_first;
  out.shape[1] = p.s;
  out.bytes.clear();
  // Per row: its first k tokens from the first call, then its other tokens from the second.
  const std::size_t first_row = out_first->bytes.size() / static_cast<std::size_t>(p.b);
  const std::size_t rest_row = out_rest->bytes.size() / static_cast<std::size_t>(p.b);
  for (std::int64_t b = 0; b < p.b; ++b) {
    const auto a = out_first->bytes.begin() + static_cast<std::ptrdiff_t>(b * first_row);
    const auto c = out_rest->bytes.begin() + static_cast<std::ptrdiff_t>(b * rest_row);
    out.bytes.insert(out.bytes.end(), a, a + static_cast<std::ptrdiff_t>(first_row));
    out.bytes.insert(out.bytes.end(), c, c + static_cast<std::ptrdiff_t>(rest_row));
  }
  return {out, *final_rest};
}

}  // namespace ssd
