// Constructors of the eight OpSpecs and the pieces they share (internal to ssd_reference).
#pragma once
#include <initializer_list>
#include <string_view>
#include <vector>

#include "ssd/op_spec.h"

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

// Roles shared by several ops.
InputRole seq_idx_role();  // [Bt,S] i32, present with seq=

}  // namespace ssd::specs
