// Sequential oracle of MambaDiscretizeSegsum: ops.md section 15 evaluated directly, unfused.
#include <cmath>
#include <cstdint>

#include "ssd/reference/helpers.h"
#include "ssd/reference/oracle.h"
#include "ssd/reference/validate.h"

namespace ssd {

Outputs discretize_segsum_sequential(const DiscretizeSegsumArgs& args) {
  validate(args);  // throws on any bad argument; the shapes read below are then consistent
  const Tensor& dt = *args.dt;
  const Tensor& A_log = *args.A_log;
  const Tensor& B = *args.B;
  const Tensor& C = *args.C;
  // hidden_states only fixes the shape; validation has matched it against dt, B and C.
  const std::int64_t Bt = dt.dim(0), NC = dt.dim(1), Q = dt.dim(2), H = dt.dim(3);
  const std::int64_t G = B.dim(3), N = B.dim(4);
  const std::int64_t heads_per_group = H / G;

  // A_discrete[b,h,c,l] = -exp(A_log[h]) * softplus(dt[b,c,l,h]): no bias, no clamp.
  Tensor A_discrete(DType::f64, {Bt, H, NC, Q});
  for (std::int64_t b = 0; b < Bt; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t c = 0; c < NC; ++c)
        for (std::int64_t l = 0; l < Q; ++l)
          A_discrete.data()[A_discrete.offset({b, h, c, l})] =
              -std::exp(A_log.at({h})) * softplus_thr20(dt.at({b, c, l, h}));

  Tensor A_cumsum(DType::f64, {Bt, H, NC, Q});
  Tensor decay_states(DType::f64, {Bt, H, NC, Q});
  Tensor L(DType::f64, {Bt, H, NC, Q, Q});  // zeros: the upper triangle is exactly 0
  for (std::int64_t b = 0; b < Bt; ++b) {
    for (std::int64_t h = 0; h < H; ++h) {
      for (std::int64_t c = 0; c < NC; ++c) {
        // Each prefix summed from scratch, independent of any running sum.
        for (std::int64_t i = 0; i < Q; ++i) {
          double sum = 0.0;
          for (std::int64_t k = 0; k <= i; ++k) sum += A_discrete.at({b, h, c, k});
          A_cumsum.data()[A_cumsum.offset({b, h, c, i})] = sum;
        }
        // decay_states is defined as a difference of the cumsum; at i = Q-1 it is exp(0) = 1 exactly.
        for (std::int64_t i = 0; i < Q; ++i)
          decay_states.data()[decay_states.offset({b, h, c, i})] =
              std::exp(A_cumsum.at({b, h, c, Q - 1}) - A_cumsum.at({b, h, c, i}));
        // The stable segment sum: L[i,j] = exp(sum_{m=j+1..i} A_discrete[m]) summed term by term
        // (never a difference of cumsums); the empty sum on the diagonal gives exp(0) = 1 exactly.
        for (std::int64_t j = 0; j < Q; ++j) {
          double segment = 0.0;
          for (std::int64_t i = j; i < Q; ++i) {
            if (i > j) segment += A_discrete.at({b, h, c, i});
            L.data()[L.offset({b, h, c, i, j})] = std::exp(segment);
          }
        }
      }
    }
  }

  // G is dense (no causal mask); M = G * L takes its zero upper triangle from L.
  Tensor Gm(DType::f64, {Bt, NC, Q, Q, H});
  Tensor M(DType::f64, {Bt, NC, Q, Q, H});
  for (std::int64_t b = 0; b < Bt; ++b) {
    for (std::int64_t c = 0; c < NC; ++c) {
      for (std::int64_t i = 0; i < Q; ++i) {
        for (std::int64_t j = 0; j < Q; ++j) {
          for (std::int64_t h = 0; h < H; ++h) {
            const std::int64_t g = h / heads_per_group;
            double dot = 0.0;
            for (std::int64_t n = 0; n < N; ++n) dot += C.at({b, c, i, g, n}) * B.at({b, c, j, g, n});
            const std::int64_t o = Gm.offset({b, c, i, j, h});
            Gm.data()[o] = dot;
            M.data()[o] = dot * L.at({b, h, c, i, j});
          }
        }
      }
    }
  }

  Outputs result;
  result.add("L", std::move(L));
  result.add("G", std::move(Gm));
  result.add("M", std::move(M));
  result.add("A_cumsum", std::move(A_cumsum));
  result.add("decay_states", std::move(decay_states));
  return result;
}

}  // namespace ssd
