// The slot rules of the decode step: read column, padding rows, per-token and final stores.
#include "ssd/reference/decode_plan.h"

#include <algorithm>
#include <string>

#include "check.h"
#include "fill_stream.h"

namespace ssd {

std::int64_t decode_slots_needed(const Problem& p) {
  const std::int64_t columns = p.spec ? p.tokens : 1;
  return p.b * columns * (p.dst ? 2 : 1) + (p.pad >= 0 ? 1 : 0);
}

DecodePlan decode_plan(const RecurrentArgs& a, const OpDims& d) {
  const Check c{"recurrent"};
  DecodePlan plan;
  const std::int64_t T = std::max<std::int64_t>(d.tokens, 1);
  plan.tokens = T;
  // [Bt,T] tables (speculative decoding): a column per token, the state stored after every token.
  const bool per_token = a.state_batch_indices && a.state_batch_indices->rank() == 2;
  const std::int64_t columns = per_token ? T : 1;
  const Tensor* reads = a.state_batch_indices;
  const Tensor* writes = a.dst_state_batch_indices ? a.dst_state_batch_indices : a.state_batch_indices;
  auto entry = [&](const char* name, const Tensor& t, std::int64_t b, std::int64_t col) {
    const auto slot = static_cast<std::int64_t>(t[b * columns + col]);
    if (!is_padding_slot(slot, a.pad_slot_id) && slot >= d.slots)
      c.fail(name, "entry [" + std::to_string(b) + (per_token ? "," + std::to_string(col) : std::string()) + "] = " +
                       std::to_string(slot) + " is out of range for " + std::to_string(d.slots) + " state slots");
    return is_padding_slot(slot, a.pad_slot_id) ? std::int64_t{-1} : slot;
  };
  plan.rows.resize(static_cast<std::size_t>(d.batch));
  plan.packed = a.cu_seqlens != nullptr;
  for (std::int64_t b = 0; b < d.batch; ++b) {
    DecodeRow& row = plan.rows[static_cast<std::size_t>(b)];
    row.writes.assign(static_cast<std::size_t>(T), -1);
    row.first_token = plan.packed ? static_cast<std::int64_t>((*a.cu_seqlens)[b]) : b * T;
    row.length = plan.packed ? static_cast<std::int64_t>((*a.cu_seqlens)[b + 1]) - row.first_token : T;
    std::int64_t column = 0;
    if (a.num_accepted_tokens) {
      // The row continues from the state after its last accepted token (vLLM, FlashInfer).
      const auto accepted = static_cast<std::int64_t>((*a.num_accepted_tokens)[b]);
      if (accepted < 0 || accepted > T)
        c.fail("num_accepted_tokens", "entry " + std::to_string(b) + " = " + std::to_string(accepted) +
                                          " is outside 0.." + std::to_string(T) + " (the row's tokens)");
      column = std::max<std::int64_t>(accepted - 1, 0);
    }
    row.read = reads ? entry("state_batch_indices", *reads, b, column) : b;
    if (row.padding() || a.disable_state_update) continue;
    const char* write_name = a.dst_state_batch_indices ? "dst_state_batch_indices" : "state_batch_indices";
    if (per_token) {
      for (std::int64_t t = 0; t < row.length; ++t) row.writes[static_cast<std::size_t>(t)] = entry(write_name, *writes, b, t);
    } else if (row.length > 0) {  // a row without tokens stores nothing (vLLM)
      row.writes[static_cast<std::size_t>(row.length - 1)] = writes ? entry(write_name, *writes, b, 0) : row.read;
    }
  }
  // In-place updates race unless every slot is stored at most once, and never where another row reads.
  std::vector<std::int64_t> reader(static_cast<std::size_t>(d.slots), -1), writer(static_cast<std::size_t>(d.slots), -1);
  for (std::int64_t b = 0; b < d.batch; ++b)
    if (const std::int64_t r = plan.rows[static_cast<std::size_t>(b)].read; r >= 0) {
      if (reader[static_cast<std::size_t>(r)] >= 0 && !a.dst_state_batch_indices && !per_token && !a.disable_state_update)
        c.fail("state_batch_indices", "entries " + std::to_string(reader[static_cast<std::size_t>(r)]) + " and " +
                                          std::to_string(b) + " both select state slot " + std::to_string(r));
      // -2: read by several rows, so no row may store it.
      reader[static_cast<std::size_t>(r)] = reader[static_cast<std::size_t>(r)] == -1 ? b : -2;
    }
  for (std::int64_t b = 0; b < d.batch; ++b)
    for (std::int64_t w : plan.rows[static_cast<std::size_t>(b)].writes) {
      if (w < 0) continue;
      const char* name = a.dst_state_batch_indices ? "dst_state_batch_indices" : "state_batch_indices";
      if (writer[static_cast<std::size_t>(w)] >= 0)
        c.fail(name, "state slot " + std::to_string(w) + " is stored twice (rows " +
                         std::to_string(writer[static_cast<std::size_t>(w)]) + " and " + std::to_string(b) + ")");
      writer[static_cast<std::size_t>(w)] = b;
      const std::int64_t r = reader[static_cast<std::size_t>(w)];
      if (r != -1 && r != b)
        c.fail(name, "row " + std::to_string(b) + " stores state slot " + std::to_string(w) + ", which " +
                         (r == -2 ? std::string("several rows read") : "row " + std::to_string(r) + " reads"));
    }
  return plan;
}

std::vector<std::uint8_t> token_defined_mask(const DecodePlan& plan, std::int64_t per_token, bool packed) {
  std::vector<std::uint8_t> mask;
  bool any_undefined = false;
  for (const DecodeRow& r : plan.rows) {
    const std::int64_t slots = packed ? r.length : plan.tokens;
    for (std::int64_t t = 0; t < slots; ++t) {
      const bool defined = !r.padding() && t < r.length;
      any_undefined = any_undefined || !defined;
      mask.insert(mask.end(), static_cast<std::size_t>(per_token), defined ? 1 : 0);
    }
  }
  if (!any_undefined) mask.clear();
  return mask;
}

std::vector<std::int64_t> decode_row_lengths(const Problem& p) {
  const std::int64_t T = std::max<std::int64_t>(p.tokens, 1);
  std::vector<std::int64_t> lengths;
  if (!p.varlen) {
    lengths.assign(static_cast<std::size_t>(std::max<std::int64_t>(p.b, 0)), T);
    return lengths;
  }
  if (!p.rows.empty()) {  // rows=; one length per row even where an invalid problem gives more or fewer
    lengths = p.rows;
    lengths.resize(static_cast<std::size_t>(std::max<std::int64_t>(p.b, 0)), 0);
    return lengths;
  }
  Stream stream(p.seed, "decode_lengths", 0);
  std::int64_t total = 0;
  for (std::int64_t b = 0; b < p.b; ++b) {
    const double r = stream.uniform();
    lengths.push_back(r < 0.125 ? 0 : r < 0.375 ? T : 1 + stream.below(T));
    total += lengths.back();
  }
  if (total == 0 && !lengths.empty()) lengths.front() = 1;  // a call holds at least one token
  return lengths;
}

}  // namespace ssd
