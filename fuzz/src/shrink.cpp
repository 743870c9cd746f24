// Token-level shrinking of problems.
#include "ssd/fuzz/shrink.h"
#include "ssd/reference/decode_plan.h"

#include <chrono>

#include "ssd/reference/op_spec.h"

namespace ssd {
namespace {

// The runs of seq_idx's first row as the problem string writes them: equal ids form a run, padding
// (negative ids) a negative run.
SeqSpec explicit_runs(const Problem& p) {
  const InputSet inputs = make_inputs(p);
  const Tensor& seq = inputs.at("seq_idx");
  SeqSpec spec;
  spec.kind = SeqSpec::Kind::runs;
  spec.first_id = static_cast<std::int64_t>(seq[0]);
  for (std::int64_t t = 0; t < p.s;) {
    std::int64_t end = t;
    while (end < p.s && seq[end] == seq[t]) ++end;
    spec.runs.push_back(seq[t] < 0 ? -(end - t) : end - t);
    t = end;
  }
  if (spec.first_id < 0) spec.first_id = 0;  // a row of padding only: ids start at 0 by convention
  return spec;
}

}  // namespace

std::vector<Problem> shrink_candidates(const Problem& p) {
  const OpSpec& spec = op_spec(p.op);
  std::vector<Problem> out;
  auto offer = [&](Problem c) {
    if (c == p || invalid_reason(c)) return;
    for (const Problem& seen : out)
      if (seen == c) return;
    out.push_back(std::move(c));
  };
  auto without = [&](auto change) {
    Problem c = p;
    change(c);
    offer(std::move(c));
  };
  // Tokens first: each makes the case simpler without making it smaller. The layout first of all
  // (a failure that stays with contiguous inputs is not about strides), then +far alone.
  without([](Problem& c) { c.layout = Layout::contiguous, c.far = false; });
  without([](Problem& c) { c.far = false; });
  without([](Problem& c) { c.farslots = false; });
  if (p.layout == Layout::zxbcdt) without([](Problem& c) { c.layout = Layout::strided; });
  without([](Problem& c) { c.dt_bias = false; });
  without([](Problem& c) { c.softplus = false; });
  without([](Problem& c) { c.z = false; });
  without([](Problem& c) { c.init = false; });
  without([](Problem& c) { c.causal = false; });
  without([](Problem& c) { c.tie = false; });
  without([](Problem& c) { c.D = DMode::none; });
  without([](Problem& c) { c.dt_limit.reset(); });
  without([](Problem& c) { c.sbi = false, c.slots = 0, c.dst = c.spec = c.accepted = false, c.pad = -1; });
  without([](Problem& c) { c.accepted = false; });
  without([](Problem& c) { c.spec = c.accepted = false; });
  without([](Problem& c) { c.dst = false; });
  without([](Problem& c) { c.pad = -1; });
  without([](Problem& c) { c.nowrite = false; });
  without([](Problem& c) { c.inter = false; });
  if (p.op == Op::recurrent) without([](Problem& c) { c.varlen = false, c.rows.clear(); });
  without([](Problem& c) { c.tokens = 0, c.spec = c.accepted = c.inter = c.varlen = false, c.rows.clear(); });
  // A varlen decode call's drawn row lengths written out (the same case), so that the sizes below
  // shrink it without drawing new lengths.
  if (p.op == Op::recurrent && p.varlen && p.rows.empty()) without([&](Problem& c) { c.rows = decode_row_lengths(p); });
  if (p.tokens > 1)
    for (std::int64_t fewer : {std::int64_t{1}, p.tokens / 2, p.tokens - 1})
      without([fewer](Problem& c) {
        c.tokens = fewer;
        for (std::int64_t& n : c.rows) n = std::min(n, fewer);
      });
  for (const auto& [role, dtype] : p.dtypes) without([&role = role](Problem& c) { c.dtypes.erase(role); });
  without([](Problem& c) { c.fill = "default"; });
  if (p.seq.kind == SeqSpec::Kind::random && invalid_reason(p) == std::nullopt)
    without([&](Problem& c) { c.seq = explicit_runs(p); });
  without([](Problem& c) { c.seq = SeqSpec{}; });
  // Sizes: down to one, then halved, then one less. seq runs no longer cover a changed S, so S
  // shrinks only once seq is gone (or random).
  const std::pair<char, std::int64_t Problem::*> sizes[] = {{'b', &Problem::b}, {'s', &Problem::s}, {'h', &Problem::h},
                                                            {'p', &Problem::p}, {'g', &Problem::g}, {'n', &Problem::n},
                                                            {'q', &Problem::q}, {'d', &Problem::d}};
  for (auto [letter, field] : sizes) {
    if (!spec.takes_dim(letter) || p.*field <= 1) continue;
    for (std::int64_t smaller : {std::int64_t{1}, p.*field / 2, p.*field - 1}) {
      Problem c = p;
      c.*field = smaller;
      if (letter == 'h' && spec.takes_dim('g') && c.h % c.g != 0) c.g = 1;  // keep H % G == 0
      if (letter == 's' && spec.whole_chunks) c.s = std::max(c.q, c.s / c.q * c.q);
      if (c.sbi && c.slots < decode_slots_needed(c)) c.slots = decode_slots_needed(c);
      if (letter == 'b' && !c.rows.empty()) c.rows.resize(static_cast<std::size_t>(c.b));  // the first rows' lengths
      offer(std::move(c));
    }
  }
  if (p.sbi && p.slots > decode_slots_needed(p))
    without([](Problem& c) { c.slots = std::max(decode_slots_needed(c), c.pad + 1); });
  return out;
}

Problem shrink_problem(const Problem& p, const std::function<bool(const Problem&)>& still_fails, double seconds) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  Problem current = p;
  for (bool progressed = true; progressed && elapsed() < seconds;) {
    progressed = false;
    for (const Problem& candidate : shrink_candidates(current)) {
      if (elapsed() >= seconds) break;
      bool fails = false;
      try {
        fails = still_fails(candidate);
      } catch (const std::exception&) {
        fails = false;  // a candidate that cannot be run is not a smaller failure
      }
      if (fails) {
        current = candidate;
        progressed = true;
        break;
      }
    }
  }
  return current;
}

}  // namespace ssd
