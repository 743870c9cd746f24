// Sequential oracle of Mamba2Fwd: the plain per-token recurrence of ops.md section 0.
//
// This form never forms chunks: chunk_size is validated but does not enter the math. It equals
// the chunked kernels only where their exp(min(delta, 0)) clamp of within-chunk decays is a no-op,
// i.e. for A <= 0 and dt' >= 0 (monotone non-increasing within-chunk cumsum); the recurrence
// itself does not clamp, because the clamp is a kernel artefact, not part of the state-space model.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ssd/reference/helpers.h"
#include "ssd/reference/oracle.h"
#include "ssd/reference/validate.h"

namespace ssd {

Outputs mamba2_sequential(const Mamba2Args& args) {
  const OpDims d = validate(args);  // throws on any bad argument; the shapes read below are then consistent
  const Tensor& x = *args.x;
  const Tensor& dt = *args.dt;
  const Tensor& A = *args.A;
  const Tensor& B = *args.B;
  const Tensor& C = *args.C;
  const std::int64_t Bt = x.dim(0), S = x.dim(1), H = x.dim(2), P = x.dim(3);
  const std::int64_t G = B.dim(2), N = B.dim(3);
  const std::int64_t heads_per_group = H / G;
  const bool d_per_p = args.D != nullptr && args.D->rank() == 2;

  Tensor out(DType::f64, {Bt, S, H, P});
  Tensor final_states(DType::f64, {Bt, H, P, N});
  Tensor varlen_states(DType::f64, {args.varlen ? d.sequences : 0, H, P, N});
  std::vector<double> M(static_cast<std::size_t>(P * N));
  // The state a sequence starts from: zero, or (in a packed batch) its own initial state.
  auto start_state = [&](std::int64_t id, std::int64_t h) {
    const bool has = args.initial_states != nullptr &&
                     (args.has_initial_states == nullptr || (*args.has_initial_states)[id] != 0.0);
    for (std::int64_t p = 0; p < P; ++p)
      for (std::int64_t n = 0; n < N; ++n) M[p * N + n] = has ? args.initial_states->at({id, h, p, n}) : 0.0;
  };

  for (std::int64_t b = 0; b < Bt; ++b) {
    for (std::int64_t h = 0; h < H; ++h) {
      const std::int64_t g = h / heads_per_group;
      const double bias = args.dt_bias != nullptr ? args.dt_bias->at({h}) : 0.0;
      if (args.varlen) {
        std::fill(M.begin(), M.end(), 0.0);  // sequence 0's own state is set at its first token
      } else {
        for (std::int64_t p = 0; p < P; ++p)
          for (std::int64_t n = 0; n < N; ++n)
            M[p * N + n] = args.initial_states != nullptr ? args.initial_states->at({b, h, p, n}) : 0.0;
      }

      // In a packed batch token 0 always starts a sequence (id 0 included).
      std::int64_t prev_id = args.varlen ? -1 : kSeqIdBeforeStart;
      for (std::int64_t t = 0; t < S; ++t) {
        // Every token t < S is valid here: padding of a partial last chunk is a chunked-form notion.
        const double dtp = process_dt(dt.at({b, t, h}), bias, args.dt_softplus, args.dt_limit);
        const double decay = std::exp(A.at({h}) * dtp);
        bool padding = false;
        if (args.seq_idx != nullptr) {
          const auto id = static_cast<std::int64_t>(args.seq_idx->at({b, t}));
          padding = id < 0;
          // A new sequence starts from a zero state; padding holds the state at zero, which is
          // what the kernels give a chunk whose last valid token is padding.
          if (args.varlen && id != prev_id && !padding) start_state(id, h);
          else if (id != prev_id || padding) std::fill(M.begin(), M.end(), 0.0);
          prev_id = id;
        }
        for (std::int64_t p = 0; p < P; ++p) {
          const double xv = x.at({b, t, h, p});
          double y = 0.0;
          for (std::int64_t n = 0; n < N; ++n) {
            double& m = M[p * N + n];
            if (!padding) m = decay * m + dtp * B.at({b, t, g, n}) * xv;
            y += C.at({b, t, g, n}) * m;
          }
          if (args.D != nullptr) y += (d_per_p ? args.D->at({h, p}) : args.D->at({h})) * xv;
          if (args.z != nullptr) {
            const double zv = args.z->at({b, t, h, p});
            y *= zv / (1.0 + std::exp(-zv));
          }
          out.data()[out.offset({b, t, h, p})] = y;
        }
        // The state after a sequence's last token is its varlen state.
        if (args.varlen && !padding && (t + 1 == S || args.seq_idx->at({b, t + 1}) != args.seq_idx->at({b, t}))) {
          const auto id = static_cast<std::int64_t>(args.seq_idx->at({b, t}));
          std::copy(M.begin(), M.end(), varlen_states.data() + (id * H + h) * P * N);
        }
      }
      for (std::int64_t p = 0; p < P; ++p)
        for (std::int64_t n = 0; n < N; ++n) final_states.data()[final_states.offset({b, h, p, n})] = M[p * N + n];
    }
  }

  Outputs result;
  result.add("out", std::move(out), token_defined_mask(args.seq_idx, H * P));
  result.add("final_states", std::move(final_states));
  if (args.varlen) result.add("varlen_states", std::move(varlen_states));
  return result;
}

}  // namespace ssd
