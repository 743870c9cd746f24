// Where each row of a decode call (SSDRecurrentFwd) reads its state and stores it, resolved once
// from the slot tables (docs/contract.md, "SSDRecurrentFwd as serving engines call it"), so that
// both oracle forms, the bounds and the emulation read the contract's slot rules from one place.
#pragma once
#include <cstdint>
#include <vector>

#include "ssd/reference/oracle.h"
#include "ssd/reference/problem.h"
#include "ssd/reference/validate.h"

namespace ssd {

struct DecodeRow {
  std::int64_t read = -1;            // the slot the row starts from; -1 for a padding row
  std::vector<std::int64_t> writes;  // per token: the slot the state after it is stored to, -1 = not stored
  std::int64_t first_token = 0;      // where the row's tokens start along x's token axes (b*T, or cu_seqlens[b])
  std::int64_t length = 1;           // its tokens: T, or cu_seqlens[b+1] - cu_seqlens[b] (0..T) in a varlen call
  bool padding() const { return read < 0; }
};

struct DecodePlan {
  std::int64_t tokens = 1;  // T, the most tokens of a row (1 for the one-token layout)
  bool packed = false;      // a varlen call: x [tokens of all rows,H,P] with cu_seqlens
  std::vector<DecodeRow> rows;
};

// The slots a decode problem's tables need (recurrent +sbi): distinct read slots per row and
// column (T columns with +spec), as many write slots again with +dst, and the padding id's own
// slot when it is a real one (pad= >= 0, vLLM's null block).
std::int64_t decode_slots_needed(const Problem& p);

// Whether a slot table entry marks a padding row (or, in a write table, a store that is skipped).
inline bool is_padding_slot(std::int64_t slot, std::int64_t pad_slot_id) { return slot < 0 || slot == pad_slot_id; }

// The plan of a call whose shapes `d` has checked (validate). Throws ArgumentError naming the
// table for a slot out of range, a slot stored twice, or a slot one row stores while another reads it.
DecodePlan decode_plan(const RecurrentArgs& a, const OpDims& d);

// The defined mask of a per-token output, `per_token` elements a token: a padding row's tokens are
// undefined ("don't care"), and so are the columns t >= length of a [Bt,T] output (`packed` false)
// in a varlen call; empty when every element is defined. A packed output ([tokens,...], `packed`)
// holds exactly the rows' tokens.
std::vector<std::uint8_t> token_defined_mask(const DecodePlan& plan, std::int64_t per_token, bool packed);

// The tokens of each row of a varlen decode problem (recurrent +varlen): those of rows= where the
// problem gives them, else 0..T drawn from the seed (0 an eighth of the time, T a quarter, else
// uniform in 1..T), at least one token in all.
std::vector<std::int64_t> decode_row_lengths(const Problem& p);

}  // namespace ssd
