// Shrinking a failing problem by its tokens: the smaller problems one step away (the layout back to
// contiguous, a flag dropped, a
// dtype override removed, the fill back to default, seq=rand written as the explicit runs of its
// first row, a size halved or reduced by one), each still inside the contract. ssd-fuzz applies them
// greedily after RapidCheck's own shrinking, and to replayed problems; the C API hands them out.
#pragma once
#include <functional>
#include <vector>

#include "ssd/reference/problem.h"

namespace ssd {

// Valid problems one step smaller than `p`, simplest first (dropping tokens before shrinking sizes).
std::vector<Problem> shrink_candidates(const Problem& p);

// Greedy: repeatedly moves to the first candidate for which `still_fails` holds, until none does
// or `seconds` have passed. Returns the smallest failing problem found (p itself at worst).
Problem shrink_problem(const Problem& p, const std::function<bool(const Problem&)>& still_fails, double seconds);

}  // namespace ssd
