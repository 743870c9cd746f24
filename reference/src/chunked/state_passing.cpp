// SSDStatePassingFwd, chunked form: the exclusive inter-chunk scan M <- exp(alpha_c)*M + S_c.
#include "ssd/reference/helpers.h"
#include "ssd/reference/oracle.h"
#include "ssd/reference/parallel.h"
#include "ssd/reference/validate.h"

namespace ssd {

Outputs state_passing_chunked(const StatePassingArgs& a) {
  const OpDims d = validate(a);
  const std::int64_t NC = d.chunks, H = d.heads, D = d.flat;
  Tensor out(DType::f64, {d.batch, NC, H, D}), final_states(DType::f64, {d.batch, H, D});

#pragma omp parallel for schedule(static) if (worth_parallel(d.batch * H, 3 * NC * D))
  for (std::int64_t bh = 0; bh < d.batch * H; ++bh) {
    const std::int64_t b = bh / H, h = bh % H;
    Eigen::VectorXd M = a.initial_states ? Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(
                                               a.initial_states->data() + bh * D, D))
                                         : Eigen::VectorXd::Zero(D);
    double previous_id = static_cast<double>(kSeqIdBeforeStart);
    for (std::int64_t c = 0; c < NC; ++c) {
      Eigen::Map<Eigen::VectorXd>(out.data() + ((b * NC + c) * H + h) * D, D) = M;  // entering chunk c
      double scale = chunk_total_decay((*a.dA_chunk_cumsum)[bh * NC + c]);
      if (a.seq_idx) {
        // The id at the chunk's last valid token decides whether the running state carries over.
        const double id = (*a.seq_idx)[b * d.seqlen + std::min((c + 1) * d.chunk, d.seqlen) - 1];
        if (id != previous_id) scale = 0.0;
        previous_id = id;
      }
      M = scale * M + Eigen::Map<const Eigen::VectorXd>(a.states->data() + ((b * NC + c) * H + h) * D, D);
    }
    Eigen::Map<Eigen::VectorXd>(final_states.data() + bh * D, D) = M;
  }
  Outputs result;
  result.add("out", std::move(out));
  result.add("final_states", std::move(final_states));
  return result;
}

}  // namespace ssd
