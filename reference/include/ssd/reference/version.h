// Version names of what determines a case's numbers: the contract, the input fills and the oracle.
// Case files record all three, so a file made under other rules is recognised as such. Change a
// constant whenever a change of its part can change any stored value, then regenerate the golden
// set (`ssd-golden regen`).
#pragma once
#include <string_view>

namespace ssd {

// The op contract (docs/contract.md): semantics, shapes, dtypes, options.
inline constexpr std::string_view kContractVersion = "ops-2026-07";
// The input fills of make_inputs (docs/problem-string.md section 5): generator, streams, regimes.
inline constexpr std::string_view kGeneratorVersion = "fill-1";
// The float64 oracle and the tolerance bounds computed from it (reference/src).
inline constexpr std::string_view kOracleVersion = "oracle-2";

}  // namespace ssd
