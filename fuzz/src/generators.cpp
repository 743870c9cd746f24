// RapidCheck generators of Problems driven by each OpSpec.
#include "ssd/fuzz/generators.h"
#include "ssd/reference/decode_plan.h"
#include "ssd/reference/far_slots.h"

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>

#include "ssd/reference/op_spec.h"

namespace ssd {
namespace {

namespace gen = rc::gen;

// Sequence lengths biased toward the chunk grid's corners.
std::int64_t pick_seqlen(std::int64_t q, std::int64_t max_s) {
  const std::int64_t kind = *gen::inRange<std::int64_t>(0, 6);
  std::int64_t s = 1;
  switch (kind) {
    case 0: s = 1; break;                                                     // a single token
    case 1: s = *gen::inRange<std::int64_t>(1, std::max<std::int64_t>(2, q)); break;  // S < Q
    case 2: s = q * *gen::inRange<std::int64_t>(1, 4); break;                 // a multiple of Q
    case 3: s = q * *gen::inRange<std::int64_t>(1, 4) + 1; break;             // one past a multiple
    default: s = *gen::inRange<std::int64_t>(1, max_s + 1); break;            // anything
  }
  return std::clamp<std::int64_t>(s, 1, max_s);
}

std::int64_t pick_divisor_groups(std::int64_t h) {
  // G in {1, H/2, H} (the layouts kernels special-case), and H/3, H/4 where H allows: a group
  // index h / (H / G) that only looks right when H / G is 1, 2 or H breaks there.
  std::vector<std::int64_t> choices{1, h};
  for (std::int64_t d : {2, 3, 4})
    if (h % d == 0 && h / d > 1) choices.push_back(h / d);
  return *gen::elementOf(choices);
}

DType pick_dtype() { return *gen::element(DType::f32, DType::f16, DType::bf16); }

}  // namespace

rc::Gen<SeqSpec> gen_seq_runs(std::int64_t seqlen, std::int64_t chunk, bool padding) {
  return gen::exec([=] {
    SeqSpec seq;
    seq.kind = SeqSpec::Kind::runs;
    seq.first_id = *gen::element<std::int64_t>(0, 0, 0, 1, 3);
    std::int64_t pad = 0;
    if (padding && seqlen >= 2 && *gen::inRange(0, 4) == 0) pad = *gen::inRange<std::int64_t>(1, seqlen / 2 + 1);
    const std::int64_t body = seqlen - pad;
    // Candidate cut points: chunk boundaries and their neighbours, plus arbitrary tokens.
    std::vector<std::int64_t> candidates;
    for (std::int64_t c = chunk; c < body + 1; c += chunk)
      for (std::int64_t t : {c - 1, c, c + 1})
        if (t > 0 && t < body) candidates.push_back(t);
    for (std::int64_t t = 1; t < body; ++t) candidates.push_back(t);
    std::set<std::int64_t> cuts;
    if (!candidates.empty()) {
      const int count = *gen::inRange(0, 5);
      for (int i = 0; i < count; ++i) cuts.insert(*gen::elementOf(candidates));
    }
    std::int64_t start = 0;
    for (std::int64_t cut : cuts) {
      seq.runs.push_back(cut - start);
      start = cut;
    }
    seq.runs.push_back(body - start);
    if (pad > 0) seq.runs.push_back(-pad);
    return seq;
  });
}

namespace {

// layout=zxbcdt keeps its views in one buffer of x's dtype: the other views' dtypes made x's.
void one_projection_dtype(Problem& p) {
  const OpSpec& spec = op_spec(p.op);
  const DType x = role_dtype(p, "x");
  for (std::string_view name : spec.zxbcdt) {
    const InputRole& role = *spec.input(name);
    if (role.present && !role.present(p)) continue;
    if ((role.follows_primary ? p.dtype : role.fixed) == x) p.dtypes.erase(std::string(name));
    else p.dtypes[std::string(name)] = x;
  }
}

}  // namespace

rc::Gen<Problem> gen_problem(Op op, const GenOptions& o) {
  // Fixed size: the limits are already small, and the corner weighting above is explicit; letting
  // RapidCheck's growing size scale the ranges would make the first cases almost all S = 1.
  return gen::resize(rc::kNominalSize, gen::exec([op, o] {
    const OpSpec& spec = op_spec(op);
    const GenLimits& lim = o.limits;
    Problem p;
    p.op = op;
    std::vector<DType> dtypes;
    for (DType d : spec.primary_dtypes)
      if (o.dtypes.empty() || std::find(o.dtypes.begin(), o.dtypes.end(), d) != o.dtypes.end()) dtypes.push_back(d);
    if (dtypes.empty()) throw std::logic_error("gen_problem: none of the requested dtypes is legal for this op");
    p.dtype = *gen::elementOf(dtypes);
    // Value regime: mostly the default, otherwise one of the op's corner regimes.
    p.fill = std::string(spec.fills.front());
    if (o.value_regimes && spec.fills.size() > 1 && *gen::inRange(0, 5) < 2) p.fill = std::string(*gen::elementOf(spec.fills));
    if (spec.takes_dim('b')) p.b = *gen::inRange<std::int64_t>(1, lim.batch + 1);
    // Heads: mostly 1 to 4, a quarter of the time 6, 8 or 12 (more heads than a warp's worth of
    // small-case tiling, H/3 and H/4 groups), and 1 case in 24 the 64 heads in 8 groups of
    // production models (with small P and N, so it stays cheap).
    const bool wide_heads = spec.takes_dim('h') && spec.takes_dim('g') && *gen::inRange(0, 24) == 0;
    if (spec.takes_dim('h')) p.h = std::min(*gen::element<std::int64_t>(1, 2, 3, 4, 1, 2, 3, 4, 6, 8, 12), lim.heads);
    if (wide_heads) p.h = 64;
    if (spec.takes_dim('g')) {
      p.g = wide_heads               ? 8
            : spec.takes_dim('h')    ? pick_divisor_groups(p.h)
                                     : *gen::element<std::int64_t>(1, 2, 3, 1, 2, 3, 6, 8);  // coupling: G heads of B, C
    }
    const std::int64_t headdim = wide_heads ? std::min<std::int64_t>(lim.headdim, 4) : lim.headdim;
    const std::int64_t dstate = wide_heads ? std::min<std::int64_t>(lim.dstate, 4) : lim.dstate;
    if (spec.takes_dim('p')) p.p = *gen::inRange<std::int64_t>(1, headdim + 1);
    if (spec.takes_dim('n')) p.n = *gen::inRange<std::int64_t>(1, dstate + 1);
    if (spec.takes_dim('d')) p.d = *gen::inRange<std::int64_t>(1, lim.flat + 1);
    if (spec.takes_dim('q')) p.q = *gen::inRange<std::int64_t>(1, lim.chunk + 1);
    if (spec.takes_dim('s')) {
      p.s = spec.whole_chunks ? p.q * *gen::inRange<std::int64_t>(1, lim.chunks + 1)
                                        : pick_seqlen(p.q, lim.seqlen);
    }
    if (spec.takes_flag("dt_bias")) p.dt_bias = *gen::arbitrary<bool>();
    if (spec.takes_flag("softplus")) p.softplus = *gen::arbitrary<bool>();
    if (spec.takes_flag("limit") && o.dt_limit && *gen::inRange(0, 3) == 0) {
      // A negative lower limit lets negative dt' through: dA then rises inside a chunk.
      const double lo = o.negative_limit ? *gen::element(-0.1, 0.0, 0.01, -1.0) : *gen::element(0.0, 0.001, 0.05);
      const double hi = *gen::element(0.2, 1.0, std::numeric_limits<double>::infinity());
      p.dt_limit = DtLimit{lo, hi};
    }
    if (spec.takes_flag("D")) p.D = *gen::element(DMode::none, DMode::per_head, DMode::per_head_dim);
    else if (spec.takes_flag("Dhp")) p.D = *gen::element(DMode::none, DMode::per_head_dim);
    if (spec.takes_flag("z")) p.z = *gen::arbitrary<bool>();
    if (spec.takes_flag("init") && o.initial_states) p.init = *gen::arbitrary<bool>();
    if (spec.takes_flag("causal")) p.causal = *gen::arbitrary<bool>();
    if (spec.takes_flag("tie")) p.tie = *gen::arbitrary<bool>();
    if (spec.takes_flag("sbi") && *gen::arbitrary<bool>()) {
      p.sbi = true;
      p.slots = p.b + *gen::inRange<std::int64_t>(0, 4);
    }
    // The serving decode step a third of the time (vLLM's and FlashInfer's selective_state_update):
    // T tokens per row, per-token slot tables (speculative decoding) with num_accepted_tokens
    // weighted to 0, 1 and T by the fill, write slots apart from the read slots, a padding id that
    // is a real slot (a null block), a read-only state, the state after every token, and a 16-bit
    // stored state (where carrying it rounded between tokens shows).
    if (spec.takes_flag("tokens") && o.serving && *gen::inRange(0, 3) == 0) {
      p.tokens = *gen::element<std::int64_t>(1, 2, 3, 4, 2, 3, 8);
      // Rows of 0..T tokens packed one after the other (cu_seqlens) a third of the time.
      p.varlen = o.varlen && *gen::inRange(0, 3) == 0;
      p.sbi = p.sbi || *gen::inRange(0, 4) != 0;
      if (p.sbi) {
        p.spec = *gen::arbitrary<bool>();
        p.accepted = p.spec && *gen::arbitrary<bool>();
        p.dst = *gen::arbitrary<bool>();
        if (*gen::inRange(0, 4) == 0) p.pad = *gen::inRange<std::int64_t>(0, 2);
        p.slots = decode_slots_needed(p) + *gen::inRange<std::int64_t>(0, 4);
        p.slots = std::max(p.slots, p.pad + 1);
      }
      p.nowrite = *gen::inRange(0, 6) == 0;
      p.inter = *gen::inRange(0, 3) == 0;
      if (*gen::inRange(0, 3) == 0) p.dtypes["state"] = pick_dtype();
      // Without softplus a raw dt below zero grows the state by exp(|A dt'|) per token: the regimes
      // with large |A| or |dt| (up to e^200 a token) would pass even float64's range within a few
      // tokens, where the oracle itself is inf. One token of them stays (fp32 overflows first there).
      if (p.tokens > 1 && !p.softplus && (p.fill == "underflow" || p.fill == "dt_edge" || p.fill == "dt_overflow"))
        p.fill = "default";
    }
    if (spec.takes_flag("seq") && o.seq_idx) {
      const int kind = *gen::inRange(0, 4);  // none, random, explicit runs (twice as likely)
      if (kind == 1) p.seq.kind = SeqSpec::Kind::random;
      if (kind >= 2) p.seq = *gen_seq_runs(p.s, std::max<std::int64_t>(p.q, 1), o.padding);
    }
    // A packed varlen batch a third of the time where the op takes one: one row, sequences
    // numbered from 0 whose cuts fall at, before and after chunk boundaries (a sequence starting
    // inside a chunk with its own initial state: vLLM #21783, #23279), per-sequence initial
    // states of which all, exactly one (#22034) or some are used, the rest stale (#14857).
    if (spec.takes_flag("varlen") && spec.takes_flag("seq") && o.varlen && o.seq_idx && *gen::inRange(0, 3) == 0) {
      p.varlen = true;
      p.b = 1;
      if (p.seq.kind == SeqSpec::Kind::none || *gen::arbitrary<bool>())
        p.seq = *gen_seq_runs(p.s, std::max<std::int64_t>(p.q, 1), o.padding);
      if (p.seq.kind == SeqSpec::Kind::runs) p.seq.first_id = 0;
      if (p.dt_limit && p.dt_limit->lo < 0) p.dt_limit->lo = 0.0;
    }
    // States stored in a 16-bit dtype (mamba_ssm state_dtype, vLLM's cache dtype) a quarter of the time.
    if (spec.takes_flag("state") && *gen::inRange(0, 4) == 0) p.dtypes["state"] = pick_dtype();
    if (o.mixed_dtypes && *gen::inRange(0, 3) == 0) {
      // Override one present float input's dtype.
      std::vector<std::string> roles;
      for (const auto& role : spec.inputs)
        if (role.overridable && (!role.present || role.present(p))) roles.push_back(role.name);
      if (!roles.empty()) p.dtypes[*gen::elementOf(roles)] = pick_dtype();
    }
    if (spec.takes_flag("out") && *gen::inRange(0, 3) == 0) p.dtypes["out"] = pick_dtype();
    // Strided input views a tenth of the time (the draw shrinks to contiguous), every case with
    // o.far where the batch allows it.
    const bool far = o.far && p.b >= 2 && !p.varlen;
    if ((o.layouts && *gen::inRange(0, 10) == 9) || far) {
      const bool zxbcdt = !spec.zxbcdt.empty() && (p.op != Op::recurrent || p.tie) && *gen::arbitrary<bool>();
      p.layout = zxbcdt ? Layout::zxbcdt : Layout::strided;
      if (zxbcdt) one_projection_dtype(p);
      p.far = far;
    }
    // Far slot ids on every decode case with o.far_slots: the slot tables added where the case has
    // none, and N raised to 4 where h·p·n is below 4 (no draws, so the case shrinks as before).
    if (o.far_slots && spec.takes_flag("farslots")) {
      if (!p.sbi) {
        p.sbi = true;
        p.slots = std::max(p.b, decode_slots_needed(p));
      }
      if (p.h * p.p * p.n < 4) p.n = 4;
      p.farslots = !far_slots_reason(p);
    }
    p.seed = *gen::inRange<std::uint64_t>(0, 1u << 20);
    // The generator builds only valid cases; an invalid one is a bug here, not a finding.
    if (auto why = invalid_reason(p)) throw std::logic_error("gen_problem built an invalid case: " + *why);
    return p;
  }));
}

GenOptions campaign_gen_options(bool large) {
  GenOptions g;
  g.negative_limit = true;
  if (large) g.limits = GenLimits{2, 1024, 8, 64, 64, 256, 4096, 4};
  return g;
}

void showValue(const Problem& p, std::ostream& os) { os << to_string(p); }
void showValue(Op op, std::ostream& os) { os << op_name(op); }

}  // namespace ssd
