// Property: the chunked and the sequential oracle agree to float64 round-off on every op, over
// random shapes and every option (A <= 0, dt' >= 0, well-formed seq_idx, ragged S).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "ssd/fuzz/generators.h"
#include "ssd/reference/op_spec.h"
#include "support.h"

namespace ssd_test {
namespace {

void chunked_matches_sequential(ssd::Op op) {
  const ssd::Problem problem = *ssd::gen_problem(op);
  // Coverage of the corners, printed by RapidCheck after the run.
  RC_CLASSIFY(problem.q > 0 && problem.s % problem.q != 0, "ragged S");
  RC_CLASSIFY(problem.q > 0 && problem.s < problem.q, "S < Q");
  RC_CLASSIFY(problem.s == 1, "S = 1");
  RC_CLASSIFY(problem.seq.kind != ssd::SeqSpec::Kind::none, "seq_idx");
  RC_CLASSIFY(problem.init, "initial_states");
  RC_CLASSIFY(!problem.dtypes.empty(), "mixed dtypes");
  const ssd::OpSpec& spec = ssd::op_spec(op);
  const ssd::InputSet inputs = ssd::make_inputs(problem);
  require_all_agree(spec.chunked(problem, inputs), spec.sequential(problem, inputs), kFloat64Agreement,
                    "chunked vs sequential");
}

RC_GTEST_PROP(ChunkedVsSequential, Mamba2, ()) { chunked_matches_sequential(ssd::Op::mamba2); }
RC_GTEST_PROP(ChunkedVsSequential, ChunkCumsum, ()) { chunked_matches_sequential(ssd::Op::chunk_cumsum); }
RC_GTEST_PROP(ChunkedVsSequential, ChunkCoupling, ()) { chunked_matches_sequential(ssd::Op::chunk_coupling); }
RC_GTEST_PROP(ChunkedVsSequential, ChunkState, ()) { chunked_matches_sequential(ssd::Op::chunk_state); }
RC_GTEST_PROP(ChunkedVsSequential, StatePassing, ()) { chunked_matches_sequential(ssd::Op::state_passing); }
RC_GTEST_PROP(ChunkedVsSequential, ChunkScan, ()) { chunked_matches_sequential(ssd::Op::chunk_scan); }
RC_GTEST_PROP(ChunkedVsSequential, Recurrent, ()) { chunked_matches_sequential(ssd::Op::recurrent); }
RC_GTEST_PROP(ChunkedVsSequential, DiscretizeSegsum, ()) { chunked_matches_sequential(ssd::Op::discretize_segsum); }

// The contract's exact structure of MambaDiscretizeSegsum, on both forms.
RC_GTEST_PROP(DiscretizeSegsum, ExactStructure, ()) {
  const ssd::Problem problem = *ssd::gen_problem(ssd::Op::discretize_segsum);
  const ssd::OpSpec& spec = ssd::op_spec(problem.op);
  const ssd::InputSet inputs = ssd::make_inputs(problem);
  for (const ssd::Outputs& r : {spec.chunked(problem, inputs), spec.sequential(problem, inputs)}) {
    const ssd::Tensor& L = r.get("L").value;
    const ssd::Tensor& M = r.get("M").value;
    const ssd::Tensor& decay = r.get("decay_states").value;
    const std::int64_t Q = problem.q, H = problem.h, NC = problem.s / problem.q;
    for (std::int64_t b = 0; b < problem.b; ++b)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t c = 0; c < NC; ++c) {
          RC_ASSERT(decay.at({b, h, c, Q - 1}) == 1.0);
          for (std::int64_t i = 0; i < Q; ++i) {
            RC_ASSERT(L.at({b, h, c, i, i}) == 1.0);
            for (std::int64_t j = i + 1; j < Q; ++j) {
              RC_ASSERT(L.at({b, h, c, i, j}) == 0.0);
              RC_ASSERT(M.at({b, c, i, j, h}) == 0.0);
            }
          }
        }
  }
}

}  // namespace
}  // namespace ssd_test
