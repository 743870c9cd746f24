// Constructors of the eight OpSpecs and the pieces they share (internal to ssd_reference).
#pragma once
#include <initializer_list>
#include <string_view>
#include <string_view>
#include <vector>

#include <cstddef>

#include "ssd/reference/abi_binding.h"
#include "ssd/reference/op_spec.h"

namespace ssd::specs {

OpSpec mamba2();
OpSpec chunk_cumsum();
OpSpec chunk_coupling();
OpSpec chunk_state();
OpSpec state_passing();
OpSpec chunk_scan();
OpSpec recurrent();
OpSpec discretize_segsum();

// Problem lists are written as problem strings: the same lines a user types.
std::vector<Problem> parse_all(std::initializer_list<std::string_view> lines);

inline std::int64_t chunks_of(const Problem& p) { return (p.s + p.q - 1) / p.q; }
inline bool bench(const Problem& p) { return p.fill == "bench"; }

// Common fill rules.
inline FillRule normal(double sigma = 1.0) { return {FillRule::Kind::normal, 0.0, sigma}; }
inline FillRule uniform(double lo, double hi) { return {FillRule::Kind::uniform, lo, hi}; }
inline FillRule neg_exp_uniform(double lo, double hi) { return {FillRule::Kind::neg_exp_uniform, lo, hi}; }

// Value regimes (Problem::fill) reaching the corners where kernels break:
//   dt_edge    raw dt around softplus's threshold (near 20, far above it, below -17)
//   A_zero     A = 0 (no decay at all; for the stage ops, a zero dA)
//   underflow  very negative decays (exp underflows to 0, no NaN allowed)
//   dt_overflow raw dt where fp32 exp overflows (above 88.7): a softplus missing its threshold
//              computes log(inf) there
//   dA_rise    stage-op cumsums that rise inside a chunk (steps -U(-0.25, 0.5)): positive
//              within-chunk deltas, where the contract's exp(min(delta, 0)) clamp matters (#713)
inline bool regime(const Problem& p, std::string_view name) { return p.fill == name; }
inline FillRule softplus_edges() { return {FillRule::Kind::softplus_edges}; }
inline FillRule exp_overflow() { return {FillRule::Kind::exp_overflow}; }
// Raw dt of the prefill ops.
inline FillRule raw_dt(const Problem& p) {
  if (bench(p)) return uniform(-3, -1);
  if (regime(p, "dt_edge")) return softplus_edges();
  if (regime(p, "dt_overflow")) return exp_overflow();
  return p.softplus ? uniform(-4, 1) : uniform(-0.05, 0.3);  // without softplus, a few negatives the clamp zeroes
}
// Decay rate A (per head, or per element for the decode step).
inline FillRule decay_rate(const Problem& p) {
  if (bench(p)) return neg_exp_uniform(0, 3);
  if (regime(p, "A_zero")) return uniform(0, 0);
  if (regime(p, "underflow")) return neg_exp_uniform(3, 6);
  return neg_exp_uniform(-2, 1);
}
// Monotone within-chunk cumsum of the stage ops: steps -U(0, b).
inline FillRule chunk_decay(const Problem& p) {
  if (regime(p, "dA_rise")) return {FillRule::Kind::chunk_cumsum, -0.25, 0.5};  // a third of the steps rise
  const double b = bench(p) ? 0.05 : regime(p, "A_zero") ? 0.0 : regime(p, "underflow") ? 50.0 : 0.5;
  return {FillRule::Kind::chunk_cumsum, 0.0, b};
}

// Roles shared by several ops.
InputRole seq_idx_role();  // [Bt,S] i32, present with seq=

// Pieces of the ABI bindings that several ops share: what an optional tensor's presence says
// about the problem, and the scalars with their problem fields.
namespace abi {
void mark_D(Problem& p, const Tensor& D);  // [H] => +D, [H,P] => +Dhp
void mark_z(Problem& p, const Tensor&);
void mark_dt_bias(Problem& p, const Tensor&);
void mark_init(Problem& p, const Tensor&);
void mark_seq(Problem& p, const Tensor&);  // values come from the tensor itself
void mark_varlen(Problem& p, const Tensor&);  // cu_seqlens present => a packed batch
// state_dtype: the state= dtype as an ssd_dtype, -1 when the problem leaves it to C's dtype (v3).
AbiScalarField state_dtype(std::size_t offset);
AbiScalarField chunk_size(std::size_t offset);
AbiScalarField dt_softplus(std::size_t offset);
AbiScalarField dt_limit_lo(std::size_t offset);
AbiScalarField dt_limit_hi(std::size_t offset);
AbiScalarField causal(std::size_t offset);
}  // namespace abi

}  // namespace ssd::specs
