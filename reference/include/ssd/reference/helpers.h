// The named building blocks both oracle forms share: the dt pipeline, the decays, the stable
// segment sum, the chunk grid and seq_idx rules. Each rule of the contract lives here once.
#pragma once
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ssd/reference/oracle.h"
#include "ssd/reference/tensor.h"

namespace ssd {

// softplus with PyTorch's threshold 20: x for x > 20, log1p(exp(x)) otherwise (evaluated accurately).
double softplus_thr20(double x);

// The prefill dt pipeline: bias -> softplus (threshold 20) -> clamp to [lo, hi]. Padding (i >= L_c)
// is applied by the caller, after the clamp.
double process_dt(double raw_dt, double bias, bool softplus, DtLimit limit);

// Decays, all from differences of the within-chunk inclusive cumsum dA (ops.md section 0).
// Within a chunk, token k -> token i (k <= i), and token k -> chunk end: exp(min(delta, 0)).
inline double within_chunk_decay(double dA_to, double dA_from);
// Chunk start -> token i: exp(dA[i]), not clamped.
double chunk_start_decay(double dA_i);
// Whole chunk: exp(dA[Q-1]), not clamped.
double chunk_total_decay(double dA_last);

// Stable segment sum of a[0..T-1]: out(i,j) = sum_{m=j+1..i} a[m] for i >= j (exactly 0 on the
// diagonal), -inf above the diagonal. Sums the terms directly instead of differencing a cumsum.
Eigen::MatrixXd segsum(const Eigen::Ref<const Eigen::VectorXd>& a);
// decay_states: exp(cumsum[T-1] - cumsum[i]) (last element exactly 1).
Eigen::VectorXd decay_states(const Eigen::Ref<const Eigen::VectorXd>& cumsum);

// The chunk grid of a sequence of S tokens with chunk size Q.
struct ChunkGrid {
  std::int64_t S = 0, Q = 0;
  std::int64_t count() const { return (S + Q - 1) / Q; }                    // NC
  std::int64_t start(std::int64_t c) const { return c * Q; }                // first token
  std::int64_t length(std::int64_t c) const { return std::min(Q, S - c * Q); }  // L_c
};

// seq_idx rules. A well-formed row is a non-decreasing run of non-negative ids followed by an
// optional tail of negative (padding) ids. Throws ArgumentError naming `op` and 'seq_idx' otherwise,
// or when the shape is not [Bt,S] or the dtype not i32.
void check_seq_idx(const char* op, const Tensor& seq_idx, std::int64_t batch, std::int64_t seqlen);
// The id before the first token of every row (mamba_ssm's "previous id" convention).
constexpr std::int64_t kSeqIdBeforeStart = 0;
// One byte per token of a [Bt,S] grid, 0 where seq_idx is negative (outputs there are don't-care),
// repeated `inner` times per token (e.g. H*P for a [Bt,S,H,P] output). Empty without seq_idx.
std::vector<std::uint8_t> token_defined_mask(const Tensor* seq_idx, std::int64_t inner);

inline double within_chunk_decay(double dA_to, double dA_from) {
  const double delta = dA_to - dA_from;
  return std::exp(delta < 0.0 ? delta : 0.0);
}

}  // namespace ssd
