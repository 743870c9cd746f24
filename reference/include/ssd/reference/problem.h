// The Problem: one case of one op (shape, dtypes, flags, value regime, seed), and its compact
// one-line string, the currency of tests, fuzz runs, golden manifests and repro lines.
// Grammar: docs/problem-string.md.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ssd/reference/dtype.h"
#include "ssd/reference/oracle.h"

namespace ssd {

enum class Op { mamba2, chunk_cumsum, chunk_coupling, chunk_state, state_passing, chunk_scan, recurrent, discretize_segsum };
inline constexpr std::array<Op, 8> kAllOps{Op::mamba2,        Op::chunk_cumsum, Op::chunk_coupling, Op::chunk_state,
                                           Op::state_passing, Op::chunk_scan,   Op::recurrent,      Op::discretize_segsum};
std::string_view op_name(Op op);            // "chunk_state"
std::string_view op_benchmark_name(Op op);  // "SSDChunkStateFwd"
Op parse_op(std::string_view text);         // either name; throws ArgumentError('op')

// How f32 operands enter the dot products of the chunk ops, as the kernel declares it: IEEE fp32
// ("dots" absent), or TF32 ("dots=tf32": 10 of the 23 mantissa bits, as tensor cores read f32
// operands). The bounds charge the declared rounding of every f32 operand (docs/tolerance.md).
enum class DotPrecision { ieee, tf32 };

// How D enters: absent, [H] ("+D") or [H,P] ("+Dhp").
enum class DMode { none, per_head, per_head_dim };

// seq_idx of a problem: absent, drawn from the seed per row ("seq=rand"), or the same explicit
// runs for every row ("seq=<first id>:<run>,<run>,..."; a negative run is that many padding tokens
// with id -1; runs sum to S).
struct SeqSpec {
  enum class Kind { none, random, runs };
  Kind kind = Kind::none;
  std::int64_t first_id = 0;
  std::vector<std::int64_t> runs;
  bool operator==(const SeqSpec&) const = default;
};

struct Problem {
  Op op = Op::mamba2;
  DType dtype = DType::f32;                // primary dtype (x, B, C, ... per the OpSpec)
  std::map<std::string, DType> dtypes;     // per-tensor overrides by contract name, "out" for the output
  // Sizes; 0 = not used by the op. b Bt, s S, h H, p P, g G, n N, q Q, d flat state dim, slots Bs.
  std::int64_t b = 0, s = 0, h = 0, p = 0, g = 0, n = 0, q = 0, d = 0, slots = 0;
  bool dt_bias = false, softplus = false, z = false, init = false, causal = false;
  bool sbi = false;  // state_batch_indices (recurrent)
  bool tie = false;  // recurrent A and dt constant along p and n (the expanded-view layout)
  DMode D = DMode::none;
  DotPrecision dots = DotPrecision::ieee;
  std::optional<DtLimit> dt_limit;  // absent: the default (0, +inf)
  SeqSpec seq;
  std::string fill = "default";     // value regime of the input fills (see OpSpec)
  std::uint64_t seed = 0;
  bool operator==(const Problem&) const = default;
};

// Canonical string; parse_problem(to_string(p)) == p for every valid p.
std::string to_string(const Problem& p);
// Strict parser: unknown tokens, tokens the op does not take, malformed numbers and repeated
// tokens throw ArgumentError naming 'problem' and the token.
Problem parse_problem(std::string_view text);

// The dtype the problem gives a tensor or output role (override, else the OpSpec's rule).
DType role_dtype(const Problem& p, std::string_view role);

}  // namespace ssd
