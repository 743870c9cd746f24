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

// Where the inputs lie in memory (layout=; docs/problem-string.md §3.1): each in its own dense
// row-major buffer (contiguous, the default), as views into one Mamba2 in_proj buffer [.., 2HP + 2GN + H]
// split along its last axis (zxbcdt: z, x, B, C, dt), or each padded along its axes by pitches drawn
// from the seed (strided). Only the memory changes: the values are those of the contiguous layout.
enum class Layout { contiguous, zxbcdt, strided };

std::string_view layout_name(Layout layout);  // "contiguous", "zxbcdt", "strided"

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
  std::map<std::string, DType> dtypes;     // per-tensor overrides by contract name, "out" for the output,
                                           // "state" for mamba2's state dtype (state=)
  // Sizes; 0 = not used by the op. b Bt, s S, h H, p P, g G, n N, q Q, d flat state dim, slots Bs.
  std::int64_t b = 0, s = 0, h = 0, p = 0, g = 0, n = 0, q = 0, d = 0, slots = 0;
  bool dt_bias = false, softplus = false, z = false, init = false, causal = false;
  bool sbi = false;  // state_batch_indices (recurrent)
  bool tie = false;  // recurrent A and dt constant along p and n (the expanded-view layout)
  // The serving decode step (recurrent; docs/contract.md, "SSDRecurrentFwd as serving engines call
  // it"). tokens= T gives each row T tokens (x [Bt,T,H,P]); 0 is the one-token layout x [Bt,H,P].
  std::int64_t tokens = 0;
  bool dst = false;       // write slots apart from the read slots (dst_state_batch_indices)
  bool spec = false;      // per-token slot tables [Bt,T] (speculative decoding): a state stored after every token
  bool accepted = false;  // num_accepted_tokens [Bt] picks the read column of a row's table
  bool nowrite = false;   // disable_state_update: the state buffer is read only
  bool inter = false;     // the intermediate_states output: the state after every token
  std::int64_t pad = -1;  // the slot id that marks a padding row (pad=, default -1); a negative id always does
  // A packed variable-length batch (mamba2): one row (b1) of sequences numbered 0, 1, ... by seq=,
  // each starting from its own initial state (initial_states [nseq,H,P,N] and has_initial_states
  // with +init) or zero, with each sequence's final state returned (varlen_states).
  bool varlen = false;
  // recurrent +varlen: each row's token count (rows=3,0,2); empty: drawn from the seed.
  std::vector<std::int64_t> rows;
  Layout layout = Layout::contiguous;
  // "+far": the batch stride of every laid-out input raised by 2^31 elements, so row 1 of each
  // starts past 2^31 (the int32 offset bug of mamba_ssm #1015) while the case stays small; the
  // kernel's buffers then span more than 2^31 elements (memory only a big host or GPU has).
  bool far = false;
  // "+farslots" (recurrent, with +sbi): the runner places the state's slots at ids whose element
  // offset passes 2^32 (vLLM #35275, the slot offset in uint32), in a sparse state buffer; the
  // problem is judged as the same problem with its compact slots (reference/far_slots.h).
  bool farslots = false;
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

// Memory of one case. The oracle holds every input and output as float64 (8 bytes an element,
// whatever the storage dtype), and the bounds and a kernel's outputs come on top, so the bytes
// of the inputs and outputs as float64 are the measure a case is refused by before anything is
// allocated or written. The default admits every full-size workload (the largest, chunk_scan at
// b2 s32768 h64 p64 n128, holds 5.25 GiB) with room to spare; the cases past 2^31 elements of
// ssd-fuzz --huge hold up to 35 GiB, and --huge raises the limit to fit them, as does the tools'
// --max-case-gib.
inline constexpr std::int64_t kDefaultMaxCaseBytes = std::int64_t{16} << 30;  // 16 GiB
std::int64_t max_case_bytes();            // the limit in force in this process
void set_max_case_bytes(std::int64_t bytes);  // throws ArgumentError('max_case_bytes') unless > 0

// Elements of the case's inputs and outputs (present ones, at the problem's shapes), and the
// bytes they take as float64; nullopt when a count overflows int64. Sizes must be positive.
struct CaseSize {
  std::int64_t elements = 0, bytes = 0;
  std::string largest;  // the largest tensor, e.g. "x [2,1000,8,64]"
};
std::optional<CaseSize> case_size(const Problem& p);

// Why the problem's tensors cannot be held: a size beyond 2^62, a tensor whose element count (or
// the case's byte count) overflows int64, or more bytes than `max_bytes`; nullopt when it fits.
// The message names the sizes and the largest tensor. Problems with a non-positive size are
// invalid_reason's business and pass here.
std::optional<std::string> size_reason(const Problem& p, std::int64_t max_bytes = max_case_bytes());

}  // namespace ssd
