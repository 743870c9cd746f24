// An fp32 emulation of the kernels: the contract's math evaluated in IEEE fp32 arithmetic with
// fp32 accumulation, rounding to low precision exactly at the contract's rounding points
// (docs/contract.md, "rounding points") and storing every output in its contract dtype. It is an
// honest kernel, used to calibrate the tolerance rule; planted flaws turn it into the mutants
// that the rule must catch.
#pragma once
#include <cstdint>
#include <string_view>

#include "ssd/reference/op_spec.h"

namespace ssd {

// Summation order of every reduction (dot products, cumsums, sums over chunk tokens).
enum class SumOrder {
  sequential,  // left to right, as a simple kernel loop does
  blocked,     // blocks of 8 summed left to right, then the block sums pairwise (tree)
};

// Planted bugs, each a single mistake a real SSD kernel has made or could make. `none` is honest.
enum class Flaw {
  none,
  all_bf16,               // every intermediate rounded to bf16 (as if the kernel computed in bf16)
  no_softplus,            // dt_softplus ignored
  bias_after_softplus,    // dt_bias added after softplus instead of before
  no_dt_clamp,            // dt_limit clamp skipped (negative dt survives)
  diagonal_dropped,       // within-chunk causal sum over k < i instead of k <= i (L's diagonal 0)
  superdiagonal_added,    // within-chunk causal sum over k <= i + 1 (L's first superdiagonal nonzero)
  b_c_swapped,            // C and B exchanged in the coupling / Gram products
  decay_from_chunk_start, // token -> chunk-end decay taken from dA[0] instead of dA[Q-1]
  seq_boundary_late,      // seq_idx compared one token late (s[t-1] instead of s[t])
  initial_states_ignored, // initial_states treated as zero
  states_rounded_bf16,    // f32 states/final states rounded to bf16 before storing
  last_element_unwritten, // the last element of the first output is never written (stays 0)
  group_index_modulo,     // head h reads group h % G instead of h / (H/G)
  padding_row_updates,    // recurrent: a padding row of state_batch_indices still updates slot 0
  // Real prefill bugs (docs/contract.md names the upstream fix of each):
  seq_exp_dropped,        // chunk_state with seq_idx: the weight min(dA[Q-1] - dA[k], 0), exp dropped (mamba #746)
  padding_chunk_state,    // a chunk ending in padding still builds a state from its padding tokens (mamba #792, TileOPs #1512)
  state_passing_inclusive,  // state_passing's out[c] is the state after chunk c, not before (TileOPs #1118)
  dt_limit_floor,         // dt' clamped below at 1e-3 where the limit says 0 (transformers #48989)
  init_decay_from_chunk_start,  // packed batch: a sequence starting inside a chunk decays its initial state from the chunk start (vLLM #23279)
  init_decay_step_short,  // packed batch: the initial state reaches tokens with one decay step too few (vLLM #21783)
  single_sequence_init_dropped,  // packed batch of one sequence: its initial state is dropped (vLLM #22034)
  has_initial_states_ignored,    // packed batch: a sequence without an initial state starts from its stale row (vLLM #14857)
  // Precision losses that stay inside the per-element bounds on large 16-bit cases (the SUSPECT
  // verdict is there for them):
  entering_states_bf16,   // Mamba2Fwd: the inter-chunk states rounded to bf16 where the contract keeps f32 / C's dtype
  tf32_undeclared,        // f32 dot-product operands read as TF32 while the library declares IEEE dots
  state_sum_bf16,         // chunk_state: the sum over the chunk's tokens accumulated in bf16
  softplus_bf16,          // dt's softplus evaluated in bf16 (argument and result rounded to bf16)
  decay_cumsum_bf16,      // the within-chunk decays exp(dA ...) computed from a bf16-rounded dA cumsum
  // Real decode bugs of the serving interface (docs/contract.md names the upstream report of each):
  pad_slot_wraps,         // a padding row reads and stores slot (id mod Bs), Python's state[-1] (mamba #792, FlashInfer #2865)
  pad_token_stored,       // a per-token store whose write entry is the padding id is not skipped (FlashInfer #2865)
  accepted_index_unbounded,  // the read column num_accepted - 1 not clamped at 0: 0 accepted reads the row before (vLLM #50021)
  state_rounded_each_token,  // the carried state rounded to its storage dtype after every token (mlx-lm #988, vLLM #13466)
  dst_ignored,            // the state stored to the read slots, dst_state_batch_indices ignored
  // Strided input views (layout=, docs/contract.md §1.1 "Input views"):
  strides_ignored,        // every input view read as if dense row-major, its strides ignored
  offsets_int32,          // element offsets of input views computed in int32: past 2^31 they wrap and fault (mamba #1015)
  params_assumed_dense,   // recurrent: A, D, dt_bias read as dense [H,P,N] / [H,P], the zero strides of their expansions ignored
  // Slot ids whose element offset passes 2^32 (+farslots, docs/contract.md §8.1):
  slot_offset_uint32,     // recurrent: a state slot's offset id * H*P*N computed in uint32 (vLLM #35275)
  // Honest in every bound, but not packing-invariant (VARIANT):
  shape_dependent_sum,    // recurrent: out's sum over n right to left when the call has more than one row or token per row
  packing_dependent_sum,  // mamba2 +varlen: the sum over a chunk's tokens right to left when the batch packs more than two sequences
};

std::string_view flaw_name(Flaw f);
Flaw parse_flaw(std::string_view name);  // throws ArgumentError('flaw')
inline constexpr Flaw kAllFlaws[] = {
    Flaw::all_bf16,          Flaw::no_softplus,           Flaw::bias_after_softplus,   Flaw::no_dt_clamp,
    Flaw::diagonal_dropped,  Flaw::superdiagonal_added,   Flaw::b_c_swapped,           Flaw::decay_from_chunk_start,
    Flaw::seq_boundary_late, Flaw::initial_states_ignored, Flaw::states_rounded_bf16,   Flaw::last_element_unwritten,
    Flaw::group_index_modulo, Flaw::padding_row_updates,
    Flaw::seq_exp_dropped,   Flaw::padding_chunk_state,   Flaw::state_passing_inclusive, Flaw::dt_limit_floor,
    Flaw::init_decay_from_chunk_start, Flaw::init_decay_step_short, Flaw::single_sequence_init_dropped,
    Flaw::has_initial_states_ignored, Flaw::entering_states_bf16, Flaw::tf32_undeclared, Flaw::state_sum_bf16,
    Flaw::softplus_bf16, Flaw::decay_cumsum_bf16, Flaw::pad_slot_wraps, Flaw::pad_token_stored,
    Flaw::accepted_index_unbounded, Flaw::state_rounded_each_token, Flaw::dst_ignored, Flaw::strides_ignored, Flaw::offsets_int32,
    Flaw::params_assumed_dense, Flaw::slot_offset_uint32, Flaw::shape_dependent_sum, Flaw::packing_dependent_sum};

struct EmulationOptions {
  SumOrder order = SumOrder::sequential;
  Flaw flaw = Flaw::none;
  // f32 dot-product operands read as TF32 (their 13 low mantissa bits dropped, as tensor cores do):
  // the honest kernel of a library that declares TF32 dots (problem token dots=tf32).
  bool tf32_dots = false;
};

// Runs one op of the problem on the given inputs. Returns outputs named as the oracle's, each a
// Tensor in the output's contract dtype (OpSpec::outputs[i].dtype(problem)), values as doubles.
// Optional outputs absent from the problem are not returned. Arguments are validated like the
// oracle's (ArgumentError naming the argument).
Outputs emulate(const Problem& problem, const InputSet& inputs, const EmulationOptions& options = {});

}  // namespace ssd
