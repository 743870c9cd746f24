// Shared pieces of the per-element bounds.
#include "common.h"

#include <algorithm>
#include <limits>

#include "ssd/reference/errors.h"
#include "ssd/reference/suspicion.h"

namespace ssd {

namespace tolerance {

Tensor absolute(const Tensor& t) {
  Tensor out(DType::f64, t.shape());
  for (std::int64_t i = 0; i < t.numel(); ++i) out.data()[i] = std::fabs(t[i]);
  return out;
}

std::optional<Tensor> absolute(const Tensor* t) {
  if (t == nullptr) return std::nullopt;
  return absolute(*t);
}

Tensor product(const Tensor& a, const Tensor& b) {
  Tensor out(DType::f64, a.shape());
  for (std::int64_t i = 0; i < a.numel(); ++i) out.data()[i] = a[i] * b[i];
  return out;
}

Tensor scaled(const Tensor& a, double s) {
  Tensor out(DType::f64, a.shape());
  for (std::int64_t i = 0; i < a.numel(); ++i) out.data()[i] = a[i] * s;
  return out;
}

Tensor sum(const Tensor& a, const Tensor& b) {
  Tensor out(DType::f64, a.shape());
  for (std::int64_t i = 0; i < a.numel(); ++i) out.data()[i] = a[i] + b[i];
  return out;
}

Tensor filled(const Shape& shape, double value) {
  Tensor out(DType::f64, shape);
  std::fill_n(out.data(), out.numel(), value);
  return out;
}

Tensor token_cumsum_magnitude(const Tensor& dA, std::int64_t seqlen, std::int64_t headdim) {
  const std::int64_t batch = dA.dim(0), heads = dA.dim(1), chunks = dA.dim(2), Q = dA.dim(3);
  Tensor out(DType::f64, {batch, seqlen, heads, headdim});
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t t = 0; t < seqlen; ++t)
      for (std::int64_t h = 0; h < heads; ++h) {
        const double m = std::fabs(dA[((b * heads + h) * chunks + t / Q) * Q + t % Q]);
        for (std::int64_t p = 0; p < headdim; ++p) out.data()[((b * seqlen + t) * heads + h) * headdim + p] = m;
      }
  return out;
}

Tensor chunk_total_magnitude(const Tensor& dA, std::int64_t headdim, std::int64_t dstate) {
  const std::int64_t batch = dA.dim(0), heads = dA.dim(1), chunks = dA.dim(2), Q = dA.dim(3);
  Tensor out(DType::f64, {batch, chunks, heads, headdim, dstate});
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t c = 0; c < chunks; ++c)
      for (std::int64_t h = 0; h < heads; ++h) {
        const double m = std::fabs(dA[((b * heads + h) * chunks + c) * Q + Q - 1]);
        std::fill_n(out.data() + ((b * chunks + c) * heads + h) * headdim * dstate, headdim * dstate, m);
      }
  return out;
}

double conversion_roundoff(DType from, DType to) {
  if (from == to) return 0.0;
  // f32 -> anything narrower, or between the two 16-bit formats (neither contains the other).
  if (to == DType::f32 || to == DType::f64) return 0.0;
  return unit_roundoff(to);
}

double tf32_operand_roundoff(const Problem& p, DType operand) {
  return p.dots == DotPrecision::tf32 && operand == DType::f32 ? 0x1p-10 : 0.0;
}

double half_subnormal(DType t) {
  switch (t) {
    case DType::f16: return 0x1p-25;
    case DType::bf16: return 0x1p-134;
    default: return 0.0;
  }
}

namespace {
thread_local std::vector<BoundTermShares>* collector = nullptr;

BoundTermShares* shares_of(const std::string& name) {
  if (collector == nullptr) return nullptr;
  for (BoundTermShares& s : *collector)
    if (s.output == name) return &s;
  collector->push_back(BoundTermShares{name, 0, {}, {}});
  return &collector->back();
}

void add_terms(BoundTermShares* shares, const std::array<double, kBoundTermNames.size()>& term, double bound) {
  if (shares == nullptr || !(bound > 0) || !std::isfinite(bound)) return;
  ++shares->elements;
  std::size_t largest = 0;
  for (std::size_t t = 0; t < term.size(); ++t) {
    shares->share_sum[t] += term[t] / bound;
    if (term[t] > term[largest]) largest = t;
  }
  ++shares->dominant[largest];
}
}  // namespace

TermCollector::TermCollector(std::vector<BoundTermShares>& terms) : previous_(collector) { collector = &terms; }
TermCollector::~TermCollector() { collector = previous_; }

OutputBound make_bound(const Problem& p, const Output& oracle, const BoundTerms& terms) {
  const OutputRole& role = op_spec(p.op).output(oracle.name);
  const DType stored = role.dtype(p);
  const ToleranceConstants& c = role.tolerance;
  const double u_out = unit_roundoff(stored);
  const double tau = smallest_normal(stored);
  const double phi = std::sqrt(static_cast<double>(terms.reduction_length)) + c.c_phi;
  const double accumulation = c.k * kAccumulationRoundoff * phi;
  const double exponent = c.k_exp * kAccumulationRoundoff * phi;

  OutputBound b;
  b.name = oracle.name;
  b.reduction_length = terms.reduction_length;
  b.bound = Tensor(DType::f64, oracle.value.shape());
  b.exact.assign(static_cast<std::size_t>(oracle.value.numel()), 0);
  b.sigma = Tensor(DType::f64, oracle.value.shape());  // zeros: no statistic where the bound is 0 or inf
  bool any_exact = false;
  BoundTermShares* shares = shares_of(oracle.name);
  for (std::int64_t i = 0; i < oracle.value.numel(); ++i) {
    const double y = oracle.value[i];
    const double S = (*terms.shadow)[i];
    const double E = terms.exponent ? (*terms.exponent)[i] : 0.0;
    // Near or beyond fp32's range the contract's arithmetic itself overflows (e.g. a decode step
    // with negative dt' and no clamp; the margin covers intermediates larger than the terms):
    // any stored value is as good as another, so nothing is demanded.
    const double carried_in = terms.carried ? (*terms.carried)[i] : 0.0;
    if (!std::isfinite(y) || !std::isfinite(S) || !std::isfinite(E) || !std::isfinite(carried_in) || S > kFp32OverflowShadow) {
      b.bound.data()[i] = std::numeric_limits<double>::infinity();
      continue;
    }
    const double carried = carried_in;
    if (S == 0.0 && E == 0.0 && carried == 0.0) {
      b.exact[static_cast<std::size_t>(i)] = 1;
      any_exact = true;
      continue;  // bound 0
    }
    const double F = terms.floor ? (*terms.floor)[i] : 0.0;
    // A per-path charge that is not finite (an overflowing value's magnitude) falls back to u_mid S.
    const double path = terms.intermediate ? (*terms.intermediate)[i] : 0.0;
    const double mid = terms.intermediate && std::isfinite(path) ? path : terms.intermediate_roundoff * S;
    const std::array<double, kBoundTermNames.size()> term{c.rounding * u_out * std::fabs(y),
                                                          c.rounding * mid,
                                                          c.rounding * terms.floor_unit * F,
                                                          accumulation * S,
                                                          exponent * E,
                                                          carried,
                                                          tau};
    b.bound.data()[i] = c.rounding * (u_out * std::fabs(y) + mid + terms.floor_unit * F) + accumulation * S +
                        exponent * E + carried + tau;
    if (shares != nullptr) add_terms(shares, term, b.bound[i]);
    // The same terms without the safety factors, in quadrature, charged on the size of the partial
    // values rather than on the shadow S (ssd/reference/suspicion.h): max(|y*|, S / sqrt(n)), the
    // result, or where it cancels the random-walk size of n terms whose magnitudes sum to S.
    const double y_abs = std::fabs(y);
    const double walk = std::max(y_abs, S / std::sqrt(static_cast<double>(terms.reduction_length)));
    // The floors stay absolute: below the normal range the roundings are not relative to anything.
    // The intermediate roundings keep their sum u_mid on every path here (a per-path charge is a
    // worst-case statement; TF32's truncation and the roundings of one path are not a random walk
    // of their own), and a carried error enters as an effective unit on S.
    const double mid_sigma = terms.intermediate_roundoff * walk;
    const double carried_sigma = S > 0 ? carried / S * walk : carried;
    const double growth = terms.running_sum ? static_cast<double>(terms.reduction_length) : phi;
    b.sigma.data()[i] = element_sigma(u_out * y_abs, std::hypot(mid_sigma, carried_sigma), std::hypot(terms.floor_unit * F, tau),
                                      kAccumulationRoundoff * growth * walk, S > 0 ? kAccumulationRoundoff * growth * E * walk / S : 0.0);
  }
  if (!any_exact) b.exact.clear();
  return b;
}

double dt_softplus_error(const Problem& p, double raw, double bias, double dt) {
  if (!p.softplus) return 0.0;
  const double x = raw + bias;
  const double slope = 1.0 / (1.0 + std::exp(-x));  // sigmoid(x), softplus's derivative
  return kSoftplusAllowance * (1.0 + std::fabs(dt)) + (bias != 0.0 ? slope * std::fabs(x) : 0.0);
}

std::vector<bool> exempt_overflowing_decays(const Tensor& dA, std::int64_t seqlen, bool carry_totals, Tensor& shadow) {
  const std::int64_t batch = dA.dim(0), heads = dA.dim(1), chunks = dA.dim(2), Q = dA.dim(3);
  const std::int64_t headdim = shadow.dim(3);
  std::vector<bool> total_overflows(static_cast<std::size_t>(batch * heads), false);
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t h = 0; h < heads; ++h) {
      bool carried = false;  // an earlier chunk's total decay may be inf
      for (std::int64_t c = 0; c < chunks; ++c) {
        const double* row = dA.data() + ((b * heads + h) * chunks + c) * Q;
        for (std::int64_t i = 0; i < Q && c * Q + i < seqlen; ++i)
          if (carried || fp32_exp_may_overflow(row[i]))
            std::fill_n(shadow.data() + ((b * seqlen + c * Q + i) * heads + h) * headdim, headdim, HUGE_VAL);
        carried = carried || (carry_totals && fp32_exp_may_overflow(row[Q - 1]));
      }
      total_overflows[static_cast<std::size_t>(b * heads + h)] = carried;
    }
  return total_overflows;
}

void mark_exact(OutputBound& b, std::int64_t flat) {
  if (b.exact.empty()) b.exact.assign(static_cast<std::size_t>(b.bound.numel()), 0);
  b.exact[static_cast<std::size_t>(flat)] = 1;
  b.bound.data()[flat] = 0.0;
}

}  // namespace tolerance
}  // namespace ssd
