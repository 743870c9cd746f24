// Deterministic input fills: every element's value is a pure function of (case seed, tensor
// name, element index), drawn block by block from counter-seeded streams, so the values do not
// depend on thread count, schedule or machine.
#include <cmath>
#include <numbers>

#include "ssd/reference/errors.h"
#include "ssd/reference/helpers.h"
#include "ssd/reference/parallel.h"
#include "ssd/reference/op_spec.h"

namespace ssd {
namespace {

constexpr std::int64_t kBlock = 4096;  // elements per independently seeded stream

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char ch : text) h = (h ^ ch) * 0x100000001B3ull;
  return h;
}

// xoshiro256** seeded from (seed, stream name, block).
class Stream {
 public:
  Stream(std::uint64_t seed, std::string_view name, std::uint64_t block) {
    std::uint64_t s = seed ^ (fnv1a(name) * 0x9E3779B97F4A7C15ull) ^ (block * 0xD1B54A32D192ED03ull);
    for (auto& w : state_) w = splitmix64(s);
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  std::int64_t below(std::int64_t n) { return static_cast<std::int64_t>(uniform() * static_cast<double>(n)); }
  double normal() {  // Box-Muller; 1 - u keeps the log argument in (0, 1]
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4];
};

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

void fill_seq_idx(Tensor& t, const Problem& p, std::uint64_t seed) {
  const std::int64_t S = p.s;
  for (std::int64_t b = 0; b < p.b; ++b) {
    double* row = t.data() + b * S;
    if (p.seq.kind == SeqSpec::Kind::runs) {
      std::int64_t t0 = 0, id = p.seq.first_id;
      for (std::int64_t run : p.seq.runs) {
        const double value = run < 0 ? -1.0 : static_cast<double>(id++);
        // Runs that do not cover S exactly (an invalid case built to test rejection) are cut at S.
        for (std::int64_t k = 0; k < std::abs(run) && t0 < S; ++k) row[t0++] = value;
      }
      continue;
    }
    // Random row: 1 to 4 sequences at random cut points, starting at id 0 (or 1 a quarter of the
    // time), and a padding tail of distinct negative ids a quarter of the time.
    Stream stream(seed, "seq_idx", static_cast<std::uint64_t>(b));
    const std::int64_t padding = (S >= 2 && stream.uniform() < 0.25) ? 1 + stream.below(std::max<std::int64_t>(1, S / 4)) : 0;
    const std::int64_t body = S - padding;
    const std::int64_t sequences = 1 + stream.below(std::min<std::int64_t>(4, body));
    std::vector<std::int64_t> starts{0};
    for (std::int64_t k = 1; k < sequences; ++k) starts.push_back(1 + stream.below(body - 1));
    std::sort(starts.begin(), starts.end());
    std::int64_t id = stream.uniform() < 0.25 ? 1 : 0;
    std::size_t next = 1;
    for (std::int64_t tok = 0; tok < body; ++tok) {
      while (next < starts.size() && starts[next] == tok) {
        if (starts[next - 1] != tok) ++id;  // repeated cut points merge
        ++next;
      }
      row[tok] = static_cast<double>(id);
    }
    for (std::int64_t tok = body; tok < S; ++tok) row[tok] = -1.0 - static_cast<double>(stream.below(2));
  }
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
      case FillRule::Kind::seq_idx: fill_seq_idx(t, p, p.seed); break;
      case FillRule::Kind::batch_indices: fill_batch_indices(t, p, p.seed); break;
      default: fill_elementwise(t, rule, p.seed, role.name); break;
    }
    inputs.put(role.name, std::move(t));
  }
  return inputs;
}

}  // namespace ssd
