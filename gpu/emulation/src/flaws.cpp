// Names of the planted flaws of the fp32 emulation.
#include <string>

#include "ssd/emulation/emulation.h"
#include "ssd/reference/errors.h"

namespace ssd {

std::string_view flaw_name(Flaw f) {
  switch (f) {
    case Flaw::none: return "none";
    case Flaw::all_bf16: return "all_bf16";
    case Flaw::no_softplus: return "no_softplus";
    case Flaw::bias_after_softplus: return "bias_after_softplus";
    case Flaw::no_dt_clamp: return "no_dt_clamp";
    case Flaw::diagonal_dropped: return "diagonal_dropped";
    case Flaw::superdiagonal_added: return "superdiagonal_added";
    case Flaw::b_c_swapped: return "b_c_swapped";
    case Flaw::decay_from_chunk_start: return "decay_from_chunk_start";
    case Flaw::seq_boundary_late: return "seq_boundary_late";
    case Flaw::initial_states_ignored: return "initial_states_ignored";
    case Flaw::states_rounded_bf16: return "states_rounded_bf16";
    case Flaw::last_element_unwritten: return "last_element_unwritten";
    case Flaw::group_index_modulo: return "group_index_modulo";
    case Flaw::padding_row_updates: return "padding_row_updates";
    case Flaw::seq_exp_dropped: return "seq_exp_dropped";
    case Flaw::padding_chunk_state: return "padding_chunk_state";
    case Flaw::state_passing_inclusive: return "state_passing_inclusive";
    case Flaw::dt_limit_floor: return "dt_limit_floor";
    case Flaw::init_decay_from_chunk_start: return "init_decay_from_chunk_start";
    case Flaw::init_decay_step_short: return "init_decay_step_short";
    case Flaw::single_sequence_init_dropped: return "single_sequence_init_dropped";
    case Flaw::has_initial_states_ignored: return "has_initial_states_ignored";
    case Flaw::entering_states_bf16: return "entering_states_bf16";
    case Flaw::tf32_undeclared: return "tf32_undeclared";
    case Flaw::state_sum_bf16: return "state_sum_bf16";
    case Flaw::softplus_bf16: return "softplus_bf16";
    case Flaw::decay_cumsum_bf16: return "decay_cumsum_bf16";
    case Flaw::pad_slot_wraps: return "pad_slot_wraps";
    case Flaw::pad_token_stored: return "pad_token_stored";
    case Flaw::accepted_index_unbounded: return "accepted_index_unbounded";
    case Flaw::state_rounded_each_token: return "state_rounded_each_token";
    case Flaw::dst_ignored: return "dst_ignored";
    case Flaw::strides_ignored: return "strides_ignored";
    case Flaw::offsets_int32: return "offsets_int32";
    case Flaw::params_assumed_dense: return "params_assumed_dense";
    case Flaw::slot_offset_uint32: return "slot_offset_uint32";
    case Flaw::shape_dependent_sum: return "shape_dependent_sum";
    case Flaw::packing_dependent_sum: return "packing_dependent_sum";
  }
  return "unknown";
}

Flaw parse_flaw(std::string_view name) {
  if (name == flaw_name(Flaw::none)) return Flaw::none;
  for (Flaw f : kAllFlaws)
    if (name == flaw_name(f)) return f;
  std::string known = "none";
  for (Flaw f : kAllFlaws) known += ", " + std::string(flaw_name(f));
  throw ArgumentError("flaw", "unknown flaw '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace ssd
