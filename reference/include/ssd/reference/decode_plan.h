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
  bool padding() const { return read < 0; }
};

struct DecodePlan {
  std::int64_t tokens = 1;  // T (1 for the one-token layout)
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

// The defined mask of a row-major output whose rows (axis 0) hold `per_row` elements each: a
// padding row's elements are undefined ("don't care"); empty (all defined) without padding rows.
std::vector<std::uint8_t> row_defined_mask(const DecodePlan& plan, std::int64_t per_row);

}  // namespace ssd
