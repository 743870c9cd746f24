// Deterministic input fills: every element's value is a pure function of (case seed, tensor
// name, element index), drawn block by block from counter-seeded streams, so the values do not
// depend on thread count, schedule or machine.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <string_view>
#include <vector>

#include "ssd/reference/decode_plan.h"
#include "ssd/reference/errors.h"
#include "ssd/reference/helpers.h"
#include "ssd/reference/parallel.h"
#include "ssd/reference/op_spec.h"
#include "ssd/reference/varlen.h"
#include "fill_stream.h"

namespace ssd {
namespace {

constexpr std::int64_t kBlock = 4096;  // elements per independently seeded stream


double draw(const FillRule& rule, Stream& s) {
  switch (rule.kind) {
    case FillRule::Kind::normal: return rule.b * s.normal();
    case FillRule::Kind::neg_exp_uniform: return -std::exp(s.uniform(rule.a, rule.b));
    case FillRule::Kind::softplus_edges: {
      const double which = s.uniform(), u = s.uniform();
      return which < 1.0 / 3 ? -40.0 + 23.0 * u : which < 2.0 / 3 ? 19.0 + 2.0 * u : 25.0 + 35.0 * u;
    }
    case FillRule::Kind::exp_overflow: {
      // fp32 exp overflows above 88.72: a softplus without its threshold 20 returns inf there.
      const double which = s.uniform(), u = s.uniform();
      return which < 0.5 ? 80.0 + 8.7 * u : 88.8 + 311.2 * u;
    }
    default: return s.uniform(rule.a, rule.b);
  }
}

// Elementwise fills: element e takes draw number (e / tie) % kBlock of block (e / tie) / kBlock.
void fill_elementwise(Tensor& t, const FillRule& rule, std::uint64_t seed, std::string_view name) {
  const std::int64_t draws = (t.numel() + rule.tie - 1) / rule.tie;
  const std::int64_t blocks = (draws + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (worth_parallel(blocks, 100 * kBlock))
  for (std::int64_t block = 0; block < blocks; ++block) {
    Stream stream(seed, name, static_cast<std::uint64_t>(block));
    const std::int64_t end = std::min(draws, (block + 1) * kBlock);
    for (std::int64_t k = block * kBlock; k < end; ++k) {
      const double v = round_to(t.dtype(), draw(rule, stream));
      for (std::int64_t e = k * rule.tie; e < std::min(t.numel(), (k + 1) * rule.tie); ++e) t.data()[e] = v;
    }
  }
}

// [Bt,H,NC,Q] chunk-major processed dt or cumsum: valid positions per the grid, flat/zero tail.
void fill_chunk_major(Tensor& t, const FillRule& rule, const Problem& p, std::uint64_t seed, std::string_view name) {
  const ChunkGrid grid{p.s, p.q};
  const std::int64_t rows = t.numel() / p.q;  // one row per (b, h, c)
  const std::int64_t chunks = grid.count();
#pragma omp parallel for schedule(static) if (worth_parallel(rows, 100 * p.q))
  for (std::int64_t row = 0; row < rows; ++row) {
    Stream stream(seed, name, static_cast<std::uint64_t>(row));
    const std::int64_t L = grid.length(row % chunks);
    double running = 0.0;
    for (std::int64_t i = 0; i < p.q; ++i) {
      double v = 0.0;
      if (rule.kind == FillRule::Kind::chunk_dt) {
        v = i < L ? stream.uniform(rule.a, rule.b) : 0.0;
      } else {
        if (i < L) running = round_to(t.dtype(), running - stream.uniform(rule.a, rule.b));
        v = running;  // rounded as it accumulates: monotone stored cumsum unless steps rise (dA_rise)
      }
      t.data()[row * p.q + i] = round_to(t.dtype(), v);
    }
  }
}

void fill_seq_idx(Tensor& t, const Problem& p) {
  for (std::int64_t b = 0; b < p.b; ++b) {
    const std::vector<std::int64_t> ids = seq_idx_row(p, b);
    for (std::int64_t tok = 0; tok < p.s; ++tok) t.data()[b * p.s + tok] = static_cast<double>(ids[static_cast<std::size_t>(tok)]);
  }
}

// has_initial_states of a packed batch: a quarter of the cases every sequence has one, a quarter
// exactly one sequence has one (the trigger of vLLM #22034), the rest each sequence with
// probability 1/2. Rows of initial_states whose flag is 0 keep their (stale) values: the contract
// says they are ignored.
void fill_has_initial_states(Tensor& t, const Problem& p) {
  Stream stream(p.seed, "has_initial_states", 0);
  const std::int64_t n = t.numel();
  const double regime = stream.uniform();
  const std::int64_t only = stream.below(n);
  for (std::int64_t j = 0; j < n; ++j) {
    const bool has = regime < 0.25 ? true : regime < 0.5 ? j == only : stream.uniform() < 0.5;
    t.data()[j] = has ? 1.0 : 0.0;
  }
}

void fill_varlen_encoding(Tensor& t, const Problem& p, const std::string& role) {
  const std::vector<std::int64_t> values = varlen_encoding(p, role);
  for (std::int64_t i = 0; i < t.numel() && i < static_cast<std::int64_t>(values.size()); ++i)
    t.data()[i] = static_cast<double>(values[static_cast<std::size_t>(i)]);
}

void fill_batch_indices(Tensor& t, const Problem& p, std::uint64_t seed) {
  // A random choice of distinct slots (a partial Fisher-Yates shuffle), about 1 in 4 rows padding.
  Stream stream(seed, "state_batch_indices", 0);
  std::vector<std::int64_t> slots(static_cast<std::size_t>(p.slots));
  for (std::int64_t i = 0; i < p.slots; ++i) slots[static_cast<std::size_t>(i)] = i;
  for (std::int64_t b = 0; b < p.b; ++b) {
    const std::int64_t j = b + stream.below(p.slots - b);
    std::swap(slots[static_cast<std::size_t>(b)], slots[static_cast<std::size_t>(j)]);
    const bool padding = stream.uniform() < 0.25;
    t.data()[b] = padding ? -1.0 - static_cast<double>(stream.below(3)) : static_cast<double>(slots[static_cast<std::size_t>(b)]);
  }
}

// The slot tables of a serving decode case (+dst, +spec, +accepted or pad=), drawn together so that
// they agree: distinct slots for every read and write entry (never the padding id's own slot),
// about a quarter of the rows padding (the padding id in every column; never all), with +dst about one in
// eight per-token stores of a real row skipped, and accepted counts weighted to 0, 1 and T.
struct DecodeTables {
  std::vector<std::int64_t> read, write, accepted;
};

DecodeTables decode_tables(const Problem& p) {
  Stream stream(p.seed, "decode_slots", 0);
  const std::int64_t columns = p.spec ? p.tokens : 1, T = std::max<std::int64_t>(p.tokens, 1);
  std::vector<std::int64_t> pool;
  pool.reserve(static_cast<std::size_t>(p.slots));
  for (std::int64_t slot = 0; slot < p.slots; ++slot)
    if (slot != p.pad) pool.push_back(slot);
  std::int64_t next = 0;
  auto fresh = [&] {  // one step of a Fisher-Yates shuffle: a slot no entry has taken yet
    const std::int64_t j = next + stream.below(static_cast<std::int64_t>(pool.size()) - next);
    std::swap(pool[static_cast<std::size_t>(next)], pool[static_cast<std::size_t>(j)]);
    return pool[static_cast<std::size_t>(next++)];
  };
  DecodeTables t;
  for (std::int64_t b = 0; b < p.b; ++b) {
    const bool padding = stream.uniform() < 0.25;
    const double r = stream.uniform();
    t.accepted.push_back(r < 0.25 ? 0 : r < 0.5 ? 1 : r < 0.75 ? T : stream.below(T + 1));
    for (std::int64_t c = 0; c < columns; ++c) t.read.push_back(padding ? p.pad : fresh());
    if (p.dst)
      for (std::int64_t c = 0; c < columns; ++c)
        t.write.push_back(padding || (p.spec && stream.uniform() < 0.125) ? p.pad : fresh());
  }
  // A call of padding rows only would compare nothing but the untouched state: row 0 is made real.
  if (p.b > 0 && next == 0) {
    for (std::int64_t c = 0; c < columns; ++c) t.read[static_cast<std::size_t>(c)] = fresh();
    if (p.dst)
      for (std::int64_t c = 0; c < columns; ++c) t.write[static_cast<std::size_t>(c)] = fresh();
  }
  return t;
}

void fill_decode_tables(Tensor& t, const Problem& p, std::string_view role) {
  const DecodeTables tables = decode_tables(p);
  const std::vector<std::int64_t>& values = role == "state_batch_indices"       ? tables.read
                                            : role == "dst_state_batch_indices" ? tables.write
                                                                                : tables.accepted;
  for (std::size_t i = 0; i < values.size(); ++i) t.data()[i] = static_cast<double>(values[i]);
}

// cu_seqlens of a varlen decode call: 0, then each row's end (ssd::decode_row_lengths).
void fill_decode_lengths(Tensor& t, const Problem& p) {
  std::int64_t end = 0;
  t.data()[0] = 0;
  const std::vector<std::int64_t> lengths = decode_row_lengths(p);
  for (std::size_t b = 0; b < lengths.size(); ++b) t.data()[b + 1] = static_cast<double>(end += lengths[b]);
}

}  // namespace

InputSet make_inputs(const Problem& p) {
  if (auto why = invalid_reason(p)) throw ArgumentError("problem", *why + " (" + to_string(p) + ")");
  return make_inputs_unchecked(p);
}

InputSet make_inputs_unchecked(const Problem& p) {
  // Refused before the first allocation: an overflowing or over-limit case would otherwise end in
  // std::bad_alloc (or worse, a wrapped element count) with nothing naming the size.
  if (auto why = size_reason(p)) throw ArgumentError("problem", *why + " (" + to_string(p) + ")");
  const OpSpec& spec = op_spec(p.op);
  InputSet inputs;
  for (const InputRole& role : spec.inputs) {
    if (role.present && !role.present(p)) continue;
    Tensor t(role_dtype(p, role.name), role.shape(p));
    const FillRule rule = role.fill(p);
    switch (rule.kind) {
      case FillRule::Kind::chunk_dt:
      case FillRule::Kind::chunk_cumsum: fill_chunk_major(t, rule, p, p.seed, role.name); break;
      case FillRule::Kind::seq_idx: fill_seq_idx(t, p); break;
      case FillRule::Kind::has_initial_states: fill_has_initial_states(t, p); break;
      case FillRule::Kind::varlen_encoding: fill_varlen_encoding(t, p, role.name); break;
      case FillRule::Kind::batch_indices:
        // The one-token tables of mamba_ssm keep their own draw (any negative slot is padding there).
        if (role.name == "cu_seqlens") fill_decode_lengths(t, p);
        else if (p.dst || p.spec || p.accepted || p.pad != -1) fill_decode_tables(t, p, role.name);
        else fill_batch_indices(t, p, p.seed);
        break;
      default: fill_elementwise(t, rule, p.seed, role.name); break;
    }
    inputs.put(role.name, std::move(t));
  }
  return inputs;
}

}  // namespace ssd
