// Shared building blocks of both oracle forms.
#include "ssd/reference/helpers.h"

#include <cmath>
#include <limits>

#include "check.h"
#include "ssd/reference/errors.h"

namespace ssd {

double softplus_thr20(double x) { return x > 20.0 ? x : std::log1p(std::exp(x)); }

double process_dt(double raw_dt, double bias, bool softplus, DtLimit limit) {
  double v = raw_dt + bias;
  if (softplus) v = softplus_thr20(v);
  return std::min(std::max(v, limit.lo), limit.hi);
}

double chunk_start_decay(double dA_i) { return std::exp(dA_i); }
double chunk_total_decay(double dA_last) { return std::exp(dA_last); }

Eigen::MatrixXd segsum(const Eigen::Ref<const Eigen::VectorXd>& a) {
  const Eigen::Index T = a.size();
  Eigen::MatrixXd out(T, T);
  for (Eigen::Index j = 0; j < T; ++j) {
    for (Eigen::Index i = 0; i < j; ++i) out(i, j) = -std::numeric_limits<double>::infinity();
    double sum = 0.0;
    out(j, j) = 0.0;
    for (Eigen::Index i = j + 1; i < T; ++i) {
      sum += a(i);
      out(i, j) = sum;
    }
  }
  return out;
}

Eigen::VectorXd decay_states(const Eigen::Ref<const Eigen::VectorXd>& cumsum) {
  const Eigen::Index T = cumsum.size();
  Eigen::VectorXd out(T);
  for (Eigen::Index i = 0; i < T; ++i) out(i) = std::exp(cumsum(T - 1) - cumsum(i));
  return out;
}

void check_seq_idx(const char* op, const Tensor& seq_idx, std::int64_t batch, std::int64_t seqlen) {
  Check{op}.seq_idx(seq_idx, batch, seqlen);
}

std::vector<std::uint8_t> token_defined_mask(const Tensor* seq_idx, std::int64_t inner) {
  if (seq_idx == nullptr) return {};
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(seq_idx->numel() * inner));
  for (std::int64_t t = 0; t < seq_idx->numel(); ++t) {
    const std::uint8_t defined = (*seq_idx)[t] >= 0 ? 1 : 0;
    std::fill_n(mask.begin() + t * inner, inner, defined);
  }
  return mask;
}

}  // namespace ssd
