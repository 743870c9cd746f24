// Shared pieces of the per-element bounds (internal to ssd_reference): magnitude-shadow inputs,
// the bound formula, and exactness.
#pragma once
#include <cmath>
#include <optional>
#include <vector>

#include "ssd/reference/tolerance.h"

namespace ssd::tolerance {

inline constexpr double kAccumulationRoundoff = 0x1p-24;  // u_acc: fp32 arithmetic for every op
inline constexpr double kFp32Max = 0x1.fffffep127;         // largest finite fp32
// A shadow above this may overflow in the contract's fp32 arithmetic itself: nothing is demanded
// of such an element. The margin (16x) covers intermediates larger than the terms and the relative
// error of an exp at fp32's range end (about |argument| x 2^-23 < 1e-5) many times over.
inline constexpr double kFp32OverflowShadow = kFp32Max / 16;
// A decay exp(x) with x above log(kFp32OverflowShadow) (about 85.97) may be inf in fp32, and an
// inf decay times a zero (an empty state, a sequence reset) is NaN: whatever the float64 shadow
// of the term, nothing can be demanded downstream of it.
inline bool fp32_exp_may_overflow(double x) { return x > 85.97 && std::exp(x) > kFp32OverflowShadow; }
// The same for a value rounded to `t` at a rounding point (the entering states of Mamba2Fwd are
// rounded to C.dtype): f16 overflows past 65504, far below fp32. The value rounded is an fp32
// result within a relative 1e-3 of its exact value, which its shadow bounds, so half of f16's
// largest value leaves room to spare; fp32 and bf16 keep the 16x margin above.
inline double overflow_shadow(DType t) { return t == DType::f16 ? 65504.0 / 2 : kFp32OverflowShadow; }

// Where the chunk-start decay exp(dA[i]) of token t (and, when `carry_totals`, a chunk total
// exp(dA[Q-1]) of an earlier chunk of the same row and head) may overflow fp32, sets the shadow
// of every [b,t,h,:] element of `shadow` ([Bt,S,H,P]) to infinity: nothing is demanded there.
// Returns, per (b,h), whether any chunk total of the row may overflow (what the final states of
// the row and head then depend on).
std::vector<bool> exempt_overflowing_decays(const Tensor& dA, std::int64_t seqlen, bool carry_totals, Tensor& shadow);

// Elementwise |t| as a float64 tensor; nullopt for an absent tensor.
Tensor absolute(const Tensor& t);
std::optional<Tensor> absolute(const Tensor* t);
inline const Tensor* ptr(const std::optional<Tensor>& t) { return t ? &*t : nullptr; }
// a (.) b elementwise (same shapes), and a * s.
Tensor product(const Tensor& a, const Tensor& b);
Tensor scaled(const Tensor& a, double s);
Tensor sum(const Tensor& a, const Tensor& b);
Tensor filled(const Shape& shape, double value);

// |dA_i| spread over a token-major [Bt,S,H,P] grid from a chunk-major [Bt,H,NC,Q] cumsum.
Tensor token_cumsum_magnitude(const Tensor& dA, std::int64_t seqlen, std::int64_t headdim);
// |dA_{Q-1}| of each chunk spread over [Bt,NC,H,P,N] chunk states.
Tensor chunk_total_magnitude(const Tensor& dA, std::int64_t headdim, std::int64_t dstate);

// The unit roundoff of converting `from` to `to` (0 when `from` is already representable in `to`,
// i.e. `to` is at least as wide).
double conversion_roundoff(DType from, DType to);
// Relative error of one dot-product operand stored in `operand` when the problem declares TF32 dot
// products (dots=tf32): an f32 operand keeps 10 of its 23 mantissa bits, off by less than 2^-10 when
// the hardware truncates (tensor cores reading raw f32 bits) and 2^-11 when it rounds. 16-bit
// operands are exact in TF32, and IEEE dots round nothing: 0.
double tf32_operand_roundoff(const Problem& p, DType operand);

// Absolute error of rounding a value in the subnormal range of a 16-bit intermediate: half the
// subnormal spacing (f16 2^-25); 0 for f32, whose intermediates are not rounded further.
double half_subnormal(DType t);

// What one output's bound is built from.
struct BoundTerms {
  const Tensor* shadow = nullptr;    // S: sum of |terms|
  const Tensor* exponent = nullptr;  // E: |terms| weighted by their exponent magnitudes (optional)
  double intermediate_roundoff = 0;  // u_mid: roundings the contract grants on the path, charged on S
  std::int64_t reduction_length = 1; // n of phi(n)
  // Subnormal floor of the intermediate roundings: F = sum of |the factor each rounded value
  // multiplies|, charged as floor_unit * F (relative roundoff u_mid does not hold below the
  // normal range).
  const Tensor* floor = nullptr;
  double floor_unit = 0;
  // Where the op knows which rounding point acts on which part of the shadow: the charge of the
  // intermediate roundings per element, sum over the points of u_point x (the shadow of what that
  // point rounds), in place of u_mid S (charged, like it, times `rounding`).
  const Tensor* intermediate = nullptr;
  // Errors carried in from values the op computes itself and whose error is bounded on its own
  // (softplus's allowance on dt'), propagated to this element: added to the bound as they are.
  const Tensor* carried = nullptr;
  // A sequential prefix sum (a cumsum output): the roundings of a running sum of like-signed steps
  // line up instead of walking, so the statistic charges its accumulation n times, not phi(n)
  // (docs/tolerance.md, "Statistical verdict"); the rigorous bound is unchanged.
  bool running_sum = false;
};

// Softplus as the kernels evaluate it, log(exp(x) + 1) in fp32 for x <= 20: its absolute error is
// at most kSoftplusAllowance u_acc (1 + softplus(x)) (docs/tolerance.md, "Softplus allowance"):
// exp and log within 4 u_acc relative each (2 ulp; Triton's exp2-based exp adds 1.44 |x| u_acc,
// within the same), the add 1 u_acc of (1 + exp(x)), each at most the sizes 1 and softplus(x) carry.
inline constexpr double kSoftplusAllowance = 8.0;
// The error of dt' = softplus(raw + bias) in units of u_acc: the allowance, and the bias add's
// rounding u_acc |raw + bias| through softplus's slope sigmoid(x) <= 1. 0 without softplus (the
// add's rounding is then relative to dt' itself, charged with dt').
double dt_softplus_error(const Problem& p, double raw, double bias, double dt);

// While one lives (on this thread), make_bound adds the terms of every bound it builds to `terms`
// (compute_bounds_with_terms).
class TermCollector {
 public:
  explicit TermCollector(std::vector<BoundTermShares>& terms);
  ~TermCollector();
  TermCollector(const TermCollector&) = delete;
  TermCollector& operator=(const TermCollector&) = delete;

 private:
  std::vector<BoundTermShares>* previous_;
};

// B = rounding (u_out |y*| + u_mid S + floor_unit F) + k u_acc phi(n) S + k_exp u_acc phi(n) E
// + tau_out, with bound 0 and
// the exact flag where S == 0 and E == 0 (and no carried error) (every term vanished: an honest kernel stores exactly the
// oracle's zero). Non-finite oracle values get an infinite bound (they are checked apart).
OutputBound make_bound(const Problem& p, const Output& oracle, const BoundTerms& terms);

// Marks elements exact (bound 0) in an existing bound, e.g. the unit diagonal of L.
void mark_exact(OutputBound& b, std::int64_t flat);

}  // namespace ssd::tolerance
