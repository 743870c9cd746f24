// Sequential oracle of SSDChunkStateFwd: each chunk state as a token-by-token recurrence from zero.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ssd/reference/helpers.h"
#include "ssd/reference/oracle.h"
#include "ssd/reference/validate.h"

namespace ssd {

// The contract weights token k by exp(min(dA[Q-1] - dA[k], 0)). With u_k = max(dA[k], dA[Q-1])
// that weight is exp(dA[Q-1] - u_k), so the recurrence
//   R_k = exp(u_k - u_{k-1}) * R_{k-1} + dt[k] * B_k * x_k,   state = exp(dA[Q-1] - u_{L_c-1}) * R
// reproduces the clamp for any dA_cumsum input, not only monotone ones. When dA is monotone
// non-increasing (A <= 0, dt >= 0) u_k = dA[k] and this is the plain state-space recurrence with
// step decay exp(dA[k] - dA[k-1]); the final factor then carries the state over the padded tail.
// (R can grow along non-monotone dA before the final factor shrinks it; that overflows only for
// dA spreads above ~700, far outside any test input.)
Outputs chunk_state_sequential(const ChunkStateArgs& args) {
  validate(args);  // throws on any bad argument; the shapes read below are then consistent
  const Tensor& B = *args.B;
  const Tensor& x = *args.x;
  const Tensor& dt = *args.dt;
  const Tensor& dA = *args.dA_cumsum;
  const std::int64_t Bt = x.dim(0), S = x.dim(1), H = x.dim(2), P = x.dim(3);
  const std::int64_t G = B.dim(2), N = B.dim(3);
  const std::int64_t NC = dt.dim(2), Q = dt.dim(3);
  const ChunkGrid grid{S, Q};
  const std::int64_t heads_per_group = H / G;

  Tensor states(DType::f64, {Bt, NC, H, P, N});
  std::vector<double> R(static_cast<std::size_t>(P * N));
  for (std::int64_t b = 0; b < Bt; ++b) {
    for (std::int64_t c = 0; c < NC; ++c) {
      const std::int64_t Lc = grid.length(c), t0 = grid.start(c);
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t g = h / heads_per_group;
        const double dA_end = dA.at({b, h, c, Q - 1});
        std::fill(R.begin(), R.end(), 0.0);
        double u_prev = 0.0;
        std::int64_t prev_id = 0;
        for (std::int64_t k = 0; k < Lc; ++k) {
          const double u = std::max(dA.at({b, h, c, k}), dA_end);
          const double step = k > 0 ? std::exp(u - u_prev) : 1.0;
          u_prev = u;
          if (args.seq_idx != nullptr) {
            const auto id = static_cast<std::int64_t>(args.seq_idx->at({b, t0 + k}));
            // Only the sequence active at the chunk's last valid token reaches the chunk state:
            // restarting at every id change keeps exactly that (ids are non-decreasing), and
            // padding holds the state at zero, so a chunk ending in padding has a zero state.
            const bool restart = (k > 0 && id != prev_id) || id < 0;
            prev_id = id;
            if (restart) std::fill(R.begin(), R.end(), 0.0);
            if (id < 0) continue;
          }
          const double w = dt.at({b, h, c, k});
          for (std::int64_t p = 0; p < P; ++p) {
            const double wx = w * x.at({b, t0 + k, h, p});
            for (std::int64_t n = 0; n < N; ++n) {
              double& r = R[p * N + n];
              r = step * r + wx * B.at({b, t0 + k, g, n});
            }
          }
        }
        const double tail = std::exp(dA_end - u_prev);
        for (std::int64_t p = 0; p < P; ++p)
          for (std::int64_t n = 0; n < N; ++n)
            states.data()[states.offset({b, c, h, p, n})] = tail * R[p * N + n];
      }
    }
  }

  Outputs result;
  result.add("states", std::move(states));
  return result;
}

}  // namespace ssd
