// Properties of packed varlen batches (mamba2 +varlen): every upstream encoding of the sequences
// describes the same tokens, and a packed batch equals its sequences run one by one.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "ssd/fuzz/generators.h"
#include "ssd/reference/bind.h"
#include "ssd/reference/op_spec.h"
#include "ssd/reference/varlen.h"
#include "support.h"

namespace ssd_test {
namespace {

using ssd::InputSet;
using ssd::Op;
using ssd::Outputs;
using ssd::Problem;
using ssd::Tensor;

Problem gen_varlen_problem() {
  Problem p = *ssd::gen_problem(Op::mamba2);
  p.varlen = true;
  p.b = 1;
  if (p.seq.kind == ssd::SeqSpec::Kind::none || *rc::gen::arbitrary<bool>())
    p.seq = *ssd::gen_seq_runs(p.s, p.q, /*padding=*/true);
  if (p.seq.kind == ssd::SeqSpec::Kind::runs) p.seq.first_id = 0;
  if (p.dt_limit && p.dt_limit->lo < 0) p.dt_limit->lo = 0.0;
  RC_PRE(!ssd::invalid_reason(p));  // a row of padding only
  return p;
}

// The per-token ids with every padding id written as -1.
std::vector<std::int64_t> normalised_ids(const Problem& p) {
  std::vector<std::int64_t> ids = ssd::seq_idx_row(p, 0);
  for (auto& id : ids) id = id < 0 ? -1 : id;
  return ids;
}

RC_GTEST_PROP(Varlen, EveryEncodingDescribesTheSameTokens, ()) {
  const Problem p = gen_varlen_problem();
  const std::vector<std::int64_t> ids = normalised_ids(p);
  const ssd::PackedSequences packed = ssd::packed_sequences(p);
  RC_CLASSIFY(packed.count() > 1, "several sequences");
  RC_CLASSIFY(packed.padding() > 0, "padding");
  const std::vector<std::int64_t> cu = ssd::cu_seqlens(packed);
  RC_ASSERT(ssd::ids_from_cu_seqlens(cu, p.s) == ids);
  RC_ASSERT(ssd::ids_from_pseudo_chunks(ssd::pseudo_chunks(packed, p.q), cu, p.q, p.s) == ids);
  RC_ASSERT(ssd::ids_from_aligned_chunks(ssd::aligned_chunks(packed, p.q), p.s) == ids);
  RC_ASSERT(ssd::sequences_from_ids(ids) == packed);
  // The input tensors of the case carry exactly these encodings.
  const InputSet in = ssd::make_inputs(p);
  for (const char* role : {"cu_seqlens", "chunk_indices", "chunk_offsets", "cu_chunk_seqlens", "chunk_seq_idx",
                           "last_chunk_indices"}) {
    const std::vector<std::int64_t> want = ssd::varlen_encoding(p, role);
    const std::vector<double> got = in.at(role).values();
    RC_ASSERT(got.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) RC_ASSERT(got[i] == static_cast<double>(want[i]));
  }
}

// The packed row token by token (resetting at each sequence start) against each sequence alone,
// from its own initial state where it has one.
RC_GTEST_PROP(Varlen, PackedEqualsEachSequenceAlone, ()) {
  const Problem p = gen_varlen_problem();
  const InputSet in = ssd::make_inputs(p);
  const ssd::Mamba2Args packed_args = ssd::bind_mamba2(p, in);
  const Outputs packed = ssd::mamba2_sequential(packed_args);
  const ssd::PackedSequences seqs = ssd::packed_sequences(p);
  const Tensor* has = in.find("has_initial_states");
  RC_CLASSIFY(has != nullptr && seqs.count() > 1, "per-sequence initial states");
  const std::int64_t HPN = p.h * p.p * p.n;
  for (std::int64_t j = 0; j < seqs.count(); ++j) {
    const std::int64_t begin = seqs.start[static_cast<std::size_t>(j)], end = seqs.end(j);
    const Tensor x = slice_tokens(*packed_args.x, begin, end), dt = slice_tokens(*packed_args.dt, begin, end);
    const Tensor B = slice_tokens(*packed_args.B, begin, end), C = slice_tokens(*packed_args.C, begin, end);
    std::optional<Tensor> z, init;
    if (packed_args.z) z = slice_tokens(*packed_args.z, begin, end);
    if (packed_args.initial_states && (has == nullptr || (*has)[j] != 0.0)) {
      init = Tensor(ssd::DType::f64, {1, p.h, p.p, p.n});
      for (std::int64_t i = 0; i < HPN; ++i) init->data()[i] = packed_args.initial_states->data()[j * HPN + i];
    }
    ssd::Mamba2Args one = packed_args;
    one.x = &x;
    one.dt = &dt;
    one.B = &B;
    one.C = &C;
    one.z = z ? &*z : nullptr;
    one.initial_states = init ? &*init : nullptr;
    one.seq_idx = nullptr;
    one.varlen = false;
    one.has_initial_states = nullptr;
    one.cu_seqlens = one.chunk_indices = one.chunk_offsets = nullptr;
    one.cu_chunk_seqlens = one.chunk_seq_idx = one.last_chunk_indices = nullptr;
    const Outputs alone = ssd::mamba2_sequential(one);
    const ssd::Output part{"out", slice_tokens(packed.get("out").value, begin, end), {}};
    require_agreement(part, alone.get("out"), kFloat64Agreement, "sequence " + std::to_string(j) + " out");
    Tensor varlen_state(ssd::DType::f64, {1, p.h, p.p, p.n});
    for (std::int64_t i = 0; i < HPN; ++i) varlen_state.data()[i] = packed.get("varlen_states").value[j * HPN + i];
    require_agreement({"final_states", varlen_state, {}}, alone.get("final_states"), kFloat64Agreement,
                      "sequence " + std::to_string(j) + " varlen state");
  }
}

// One sequence with an initial state is the plain problem with +init.
RC_GTEST_PROP(Varlen, OneSequenceEqualsAPlainRow, ()) {
  ssd::GenOptions options;
  options.seq_idx = false;
  Problem plain = *ssd::gen_problem(Op::mamba2, options);
  plain.b = 1;
  plain.init = true;
  Problem packed = plain;
  packed.varlen = true;
  packed.seq = {ssd::SeqSpec::Kind::runs, 0, {plain.s}};
  const InputSet in_plain = ssd::make_inputs(plain);
  InputSet in_packed = ssd::make_inputs(packed);
  in_packed.put("initial_states", in_plain.at("initial_states"));
  Tensor has(ssd::DType::i32, {1});
  has.data()[0] = 1.0;
  in_packed.put("has_initial_states", has);
  const Outputs want = ssd::mamba2_chunked(ssd::bind_mamba2(plain, in_plain));
  for (auto form : {ssd::mamba2_chunked, ssd::mamba2_sequential}) {
    const Outputs got = form(ssd::bind_mamba2(packed, in_packed));
    require_agreement(got.get("out"), want.get("out"), kFloat64Agreement, "out");
    require_agreement(got.get("final_states"), want.get("final_states"), kFloat64Agreement, "final_states");
    require_agreement({"varlen_states", got.get("varlen_states").value, {}}, want.get("final_states"),
                      kFloat64Agreement, "varlen_states");
  }
}

}  // namespace
}  // namespace ssd_test
