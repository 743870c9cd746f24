// Properties of Mamba2Fwd that follow from the math alone: chunk-size independence, composition
// of the five stage ops, splitting a sequence, seq_idx as separate runs, groups as repeated heads,
// and one token equal to one decode step.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "ssd/reference/bind.h"
#include "ssd/fuzz/generators.h"
#include "ssd/reference/op_spec.h"
#include "support.h"

namespace ssd_test {
namespace {

using ssd::InputSet;
using ssd::Op;
using ssd::Outputs;
using ssd::Problem;
using ssd::Tensor;

using Mamba2Form = Outputs (*)(const ssd::Mamba2Args&);

RC_GTEST_PROP(Mamba2, DoesNotDependOnChunkSize, ()) {
  const Problem p = *ssd::gen_problem(Op::mamba2);
  const std::int64_t other_q = *rc::gen::inRange<std::int64_t>(1, 40);
  const InputSet in = ssd::make_inputs(p);  // token-major inputs: independent of Q
  ssd::Mamba2Args a = ssd::bind_mamba2(p, in);
  const Outputs reference = ssd::mamba2_chunked(a);
  a.chunk_size = other_q;
  // The chunk-grid encodings of a packed batch describe the problem's Q, not this one.
  a.chunk_indices = a.chunk_offsets = a.cu_chunk_seqlens = a.chunk_seq_idx = a.last_chunk_indices = nullptr;
  require_all_agree(ssd::mamba2_chunked(a), reference, kFloat64Agreement, "Q=" + std::to_string(other_q));
}

// The pipeline of mamba_chunk_scan_combined, stage by stage, with either oracle form of each stage.
struct StageForms {
  Outputs (*cumsum)(const ssd::ChunkCumsumArgs&);
  Outputs (*state)(const ssd::ChunkStateArgs&);
  Outputs (*passing)(const ssd::StatePassingArgs&);
  Outputs (*coupling)(const ssd::ChunkCouplingArgs&);
  Outputs (*scan)(const ssd::ChunkScanArgs&);
};

Outputs compose_stages(const Problem& p, const InputSet& in, const StageForms& f) {
  const ssd::Mamba2Args m = ssd::bind_mamba2(p, in);
  const std::int64_t NC = (p.s + p.q - 1) / p.q, PN = p.p * p.n;
  const Outputs cumsum = f.cumsum({m.dt, m.A, p.q, m.dt_bias, m.dt_softplus, m.dt_limit});
  const Tensor& dA = cumsum.get("dA_cumsum").value;
  const Tensor& dt_out = cumsum.get("dt_out").value;
  const Outputs states = f.state({m.B, m.x, &dt_out, &dA, m.seq_idx});
  Tensor chunk_totals(ssd::DType::f64, {p.b, p.h, NC});
  for (std::int64_t i = 0; i < chunk_totals.numel(); ++i) chunk_totals.data()[i] = dA[i * p.q + p.q - 1];
  const Tensor flat_states = states.get("states").value.reshaped({p.b, NC, p.h, PN});
  std::optional<Tensor> flat_init;
  if (m.initial_states) flat_init = m.initial_states->reshaped({p.b, p.h, PN});
  const Outputs passing = f.passing({&flat_states, &chunk_totals, flat_init ? &*flat_init : nullptr, m.seq_idx, p.q});
  const Tensor prev = passing.get("out").value.reshaped({p.b, NC, p.h, p.p, p.n});
  const Outputs cb = f.coupling({m.C, m.B, p.q, m.seq_idx, false});
  const Outputs scan = f.scan({&cb.get("CB").value, m.x, &dt_out, &dA, m.C, &prev, m.D, m.z, m.seq_idx});
  Outputs result;
  result.add("out", scan.get("out").value, scan.get("out").defined);
  result.add("final_states", passing.get("final_states").value.reshaped({p.b, p.h, p.p, p.n}));
  return result;
}

RC_GTEST_PROP(Mamba2, EqualsTheFiveStagesComposed, ()) {
  ssd::GenOptions options;
  options.varlen = false;  // the stage ops take no per-sequence initial states
  const Problem p = *ssd::gen_problem(Op::mamba2, options);
  const InputSet in = ssd::make_inputs(p);
  const Outputs whole = ssd::mamba2_chunked(ssd::bind_mamba2(p, in));
  const StageForms chunked{ssd::chunk_cumsum_chunked, ssd::chunk_state_chunked, ssd::state_passing_chunked,
                           ssd::chunk_coupling_chunked, ssd::chunk_scan_chunked};
  const StageForms sequential{ssd::chunk_cumsum_sequential, ssd::chunk_state_sequential,
                              ssd::state_passing_sequential, ssd::chunk_coupling_sequential,
                              ssd::chunk_scan_sequential};
  require_all_agree(compose_stages(p, in, chunked), whole, kFloat64Agreement, "chunked stages");
  require_all_agree(compose_stages(p, in, sequential), whole, kFloat64Agreement, "sequential stages");
}

// Runs tokens [begin, end) of every row on their own, starting from `init` (nullptr = zero state).
Outputs run_tokens(Mamba2Form form, const Problem& p, const InputSet& in, std::int64_t begin, std::int64_t end,
                   const Tensor* init) {
  const ssd::Mamba2Args whole = ssd::bind_mamba2(p, in);
  const Tensor x = slice_tokens(*whole.x, begin, end), dt = slice_tokens(*whole.dt, begin, end);
  const Tensor B = slice_tokens(*whole.B, begin, end), C = slice_tokens(*whole.C, begin, end);
  std::optional<Tensor> z;
  if (whole.z) z = slice_tokens(*whole.z, begin, end);
  ssd::Mamba2Args part = whole;
  part.x = &x;
  part.dt = &dt;
  part.B = &B;
  part.C = &C;
  part.z = z ? &*z : nullptr;
  part.initial_states = init;
  part.seq_idx = nullptr;
  return form(part);
}

RC_GTEST_PROP(Mamba2, SplitSequenceWithCarriedStateEqualsWhole, ()) {
  ssd::GenOptions options;
  options.seq_idx = false;
  Problem p = *ssd::gen_problem(Op::mamba2, options);
  p.s = std::max<std::int64_t>(p.s, 2);  // something to split
  const std::int64_t split = *rc::gen::inRange<std::int64_t>(1, p.s);
  const InputSet in = ssd::make_inputs(p);
  const Outputs whole = ssd::mamba2_chunked(ssd::bind_mamba2(p, in));
  for (Mamba2Form form : {Mamba2Form{ssd::mamba2_chunked}, Mamba2Form{ssd::mamba2_sequential}}) {
    const Outputs first = run_tokens(form, p, in, 0, split, in.find("initial_states"));
    const Tensor carried = first.get("final_states").value;
    const Outputs second = run_tokens(form, p, in, split, p.s, &carried);
    ssd::Output joined{"out", Tensor(ssd::DType::f64, whole.get("out").value.shape()), {}};
    place_tokens(joined, first.get("out"), 0);
    place_tokens(joined, second.get("out"), split);
    require_agreement(joined, whole.get("out"), kFloat64Agreement, "split at " + std::to_string(split));
    require_agreement(second.get("final_states"), whole.get("final_states"), kFloat64Agreement, "split final");
  }
}

RC_GTEST_PROP(Mamba2, SequencesInOneRowEqualSeparateRuns, ()) {
  ssd::GenOptions options;
  options.seq_idx = false;
  Problem p = *ssd::gen_problem(Op::mamba2, options);
  p.seq = *ssd::gen_seq_runs(p.s, p.q, /*padding=*/true);
  const InputSet in = ssd::make_inputs(p);
  const Outputs whole = ssd::mamba2_chunked(ssd::bind_mamba2(p, in));
  ssd::Output joined{"out", Tensor(ssd::DType::f64, whole.get("out").value.shape()), {}};
  joined.defined.assign(static_cast<std::size_t>(joined.value.numel()), 0);  // padding stays undefined
  std::int64_t begin = 0;
  std::optional<Outputs> last;
  for (std::size_t k = 0; k < p.seq.runs.size(); ++k) {
    const std::int64_t run = p.seq.runs[k];
    if (run < 0) break;  // the padding tail: outputs undefined, final state zero
    // initial_states reaches only a leading sequence whose id is 0.
    const Tensor* init = (k == 0 && p.seq.first_id == 0) ? in.find("initial_states") : nullptr;
    last = run_tokens(ssd::mamba2_sequential, p, in, begin, begin + run, init);
    place_tokens(joined, last->get("out"), begin);
    begin += run;
  }
  require_agreement(joined, whole.get("out"), kFloat64Agreement, "separate runs");
  if (begin < p.s) {
    for (double v : whole.get("final_states").value.values()) RC_ASSERT(v == 0.0);
  } else {
    require_agreement(last->get("final_states"), whole.get("final_states"), kFloat64Agreement, "last run final");
  }
}

RC_GTEST_PROP(Mamba2, GroupsEqualHeadsWithRepeatedBC, ()) {
  const Problem p = *ssd::gen_problem(Op::mamba2);
  const InputSet in = ssd::make_inputs(p);
  ssd::Mamba2Args a = ssd::bind_mamba2(p, in);
  const Outputs grouped = ssd::mamba2_chunked(a);
  const Tensor B = repeat_groups(*a.B, p.h), C = repeat_groups(*a.C, p.h);
  a.B = &B;
  a.C = &C;
  require_all_agree(ssd::mamba2_chunked(a), grouped, kFloat64Agreement, "G=H chunked");
  require_all_agree(ssd::mamba2_sequential(a), grouped, kFloat64Agreement, "G=H sequential");
}

RC_GTEST_PROP(Recurrent, GroupsEqualHeadsWithRepeatedBC, ()) {
  const Problem p = *ssd::gen_problem(Op::recurrent);
  const InputSet in = ssd::make_inputs(p);
  const ssd::OpSpec& spec = ssd::op_spec(Op::recurrent);
  const Outputs grouped = spec.chunked(p, in);
  // [Bt,G,N] -> [Bt,H,N] ([Bt,T,G,N] -> [Bt,T,H,N]) through the token-major helper, with a unit
  // token axis for the one-token layout.
  auto expand = [&](const Tensor& t) {
    if (t.rank() == 4) return repeat_groups(t, p.h);  // [Bt,T,G,N]
    const std::int64_t rows = t.dim(0);                // Bt, or the packed tokens of a varlen call
    return repeat_groups(t.reshaped({rows, 1, p.g, p.n}), p.h).reshaped({rows, p.h, p.n});
  };
  InputSet repeated;
  for (const auto& [name, t] : in.all()) repeated.put(name, (name == "B" || name == "C") ? expand(t) : t);
  Problem per_head = p;
  per_head.g = p.h;
  require_all_agree(ssd::recurrent_chunked(ssd::bind_recurrent(per_head, repeated)), grouped, kFloat64Agreement,
                    "G=H recurrent");
}

RC_GTEST_PROP(Mamba2, OneTokenEqualsOneDecodeStep, ()) {
  ssd::GenOptions options;
  options.seq_idx = false;
  options.dt_limit = false;  // the decode step has no dt_limit clamp
  Problem p = *ssd::gen_problem(Op::mamba2, options);
  p.s = 1;
  p.softplus = true;  // keeps dt' >= 0, so the prefill clamp to (0, inf) is a no-op
  const InputSet in = ssd::make_inputs(p);
  const Outputs prefill = ssd::mamba2_chunked(ssd::bind_mamba2(p, in));

  const std::int64_t B = p.b, H = p.h, P = p.p, N = p.n;
  Tensor state(ssd::DType::f64, {B, H, P, N}), x(ssd::DType::f64, {B, H, P}), dt(ssd::DType::f64, {B, H, P});
  Tensor A(ssd::DType::f64, {H, P, N}), D(ssd::DType::f64, {H, P}), bias(ssd::DType::f64, {H, P});
  if (const Tensor* init = in.find("initial_states")) state = *init;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t q = 0; q < P; ++q) {
        x.data()[(b * H + h) * P + q] = in.at("x").at({b, 0, h, q});
        dt.data()[(b * H + h) * P + q] = in.at("dt").at({b, 0, h});  // tied along p
      }
  for (std::int64_t h = 0; h < H; ++h)
    for (std::int64_t q = 0; q < P; ++q) {
      for (std::int64_t k = 0; k < N; ++k) A.data()[(h * P + q) * N + k] = in.at("A")[h];  // tied along p, n
      if (const Tensor* d = in.find("D")) D.data()[h * P + q] = p.D == ssd::DMode::per_head ? (*d)[h] : (*d)[h * P + q];
      if (const Tensor* db = in.find("dt_bias")) bias.data()[h * P + q] = (*db)[h];
    }
  const Tensor Bm = in.at("B").reshaped({B, p.g, N}), Cm = in.at("C").reshaped({B, p.g, N});
  std::optional<Tensor> z;
  if (const Tensor* zt = in.find("z")) z = zt->reshaped({B, H, P});
  const Outputs step = ssd::recurrent_sequential({&state, &x, &dt, &A, &Bm, &Cm, in.find("D") ? &D : nullptr,
                                                  z ? &*z : nullptr, in.find("dt_bias") ? &bias : nullptr, nullptr,
                                                  true});
  ssd::Output out{"out", step.get("out").value.reshaped({B, 1, H, P}), {}};
  require_agreement(out, prefill.get("out"), kFloat64Agreement, "decode step out");
  ssd::Output final_state{"final_states", step.get("state").value, {}};
  require_agreement(final_state, prefill.get("final_states"), kFloat64Agreement, "decode step state");
}

}  // namespace
}  // namespace ssd_test
