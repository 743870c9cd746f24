// The fp32 emulation's building blocks (internal to the emulation): IEEE fp32 arithmetic with an
// optional planted "everything in bf16" flaw, the two summation orders, the kernels' softplus and
// dt pipeline, seq_idx lookup (with the late-boundary flaw), and the stage kernels that both the
// stand-alone ops and the Mamba2Fwd pipeline run.
//
// Every arithmetic operation below is a float operation. No double intermediates, no std::fma;
// the project builds ISO C++ (-ffp-contract=off) without -march, so nothing is contracted either.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "ssd/reference/dtype.h"
#include "ssd/emulation/emulation.h"
#include "ssd/reference/op_spec.h"
#include "ssd/reference/tensor.h"
#include "ssd/reference/validate.h"

namespace ssd::emu {

// Rounds a float to a storage dtype (round to nearest even); f32 (and f64) leave it as it is.
inline float round_float(DType t, float v) {
  if (t == DType::f32 || t == DType::f64) return v;
  return static_cast<float>(round_to(t, static_cast<double>(v)));
}

// The arithmetic of one emulated kernel run: options plus the fp32 operations, each followed by a
// rounding to bf16 under Flaw::all_bf16.
class Ctx {
 public:
  explicit Ctx(const EmulationOptions& o)
      : order_(o.order),
        flaw_(o.flaw),
        bf16_(o.flaw == Flaw::all_bf16),
        // tf32_undeclared: the dots read TF32 while the library's table declares IEEE.
        tf32_(o.tf32_dots || o.flaw == Flaw::tf32_undeclared) {}

  // A dot-product operand stored in `t`: with TF32 dots an f32 operand keeps 10 mantissa bits
  // (truncated, the worse of the two hardware behaviours); 16-bit operands are exact in TF32.
  float dot_operand(float v, DType t) const {
    if (!tf32_ || t != DType::f32 || !std::isfinite(v)) return v;
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    bits &= 0xFFFFE000u;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  void dot_operands(std::vector<float>& values, DType t) const {
    for (float& v : values) v = dot_operand(v, t);
  }

  bool has(Flaw f) const { return flaw_ == f; }
  // A dA cumsum value as the decays read it: decay_cumsum_bf16 rounds it to bf16 first.
  float decay_arg(float v) const { return has(Flaw::decay_cumsum_bf16) ? round_float(DType::bf16, v) : v; }
  SumOrder order() const { return order_; }

  float r(float v) const { return bf16_ ? round_float(DType::bf16, v) : v; }
  float add(float a, float b) const { return r(a + b); }
  float sub(float a, float b) const { return r(a - b); }
  float mul(float a, float b) const { return r(a * b); }
  float div(float a, float b) const { return r(a / b); }
  float exp(float v) const { return r(std::exp(v)); }
  float log(float v) const { return r(std::log(v)); }
  // The kernels' softplus: log(exp(x) + 1) in fp32 for x <= 20, x above (not log1p).
  // softplus_bf16 evaluates it on the bf16-rounded argument and rounds the result to bf16.
  float softplus(float v) const {
    if (has(Flaw::softplus_bf16)) {
      const float x = round_float(DType::bf16, v);
      return round_float(DType::bf16, x <= 20.0f ? log(add(exp(x), 1.0f)) : x);
    }
    return v <= 20.0f ? log(add(exp(v), 1.0f)) : v;
  }
  // Triton's sigmoid 1 / (1 + exp(-z)); the gate is y * (z * sigmoid(z)).
  float sigmoid(float v) const { return div(1.0f, add(1.0f, exp(-v))); }
  float gate(float y, float z) const { return mul(y, mul(z, sigmoid(z))); }

  // A loaded input element (exact: inputs are representable in their dtype, at most f32 wide).
  float load(double v) const { return r(static_cast<float>(v)); }
  std::vector<float> load(const Tensor& t) const {
    std::vector<float> out(static_cast<std::size_t>(t.numel()));
    for (std::int64_t i = 0; i < t.numel(); ++i) out[static_cast<std::size_t>(i)] = load(t[i]);
    return out;
  }
  std::vector<float> load(const Tensor* t) const { return t ? load(*t) : std::vector<float>{}; }

  // The group of head h (Flaw::group_index_modulo reads h % G instead of h / (H/G)).
  std::int64_t group(const OpDims& d, std::int64_t h) const {
    return has(Flaw::group_index_modulo) ? h % d.groups : d.group_of(h);
  }

  // init + sum_{k<n} term(k) in the configured order. Sequential: the accumulator starts at init
  // and adds the terms left to right. Blocked: each block of 8 consecutive terms summed left to
  // right, the block sums combined pairwise (a balanced tree), then added to init.
  template <class F>
  float sum(std::int64_t n, F&& term, float init = 0.0f) const {
    if (order_ == SumOrder::sequential) {
      float acc = init;
      for (std::int64_t k = 0; k < n; ++k) acc = add(acc, term(k));
      return acc;
    }
    if (n <= 0) return init;
    const std::int64_t nb = (n + kBlock - 1) / kBlock;
    float stack[256];
    std::vector<float> heap;
    float* blocks = stack;
    if (nb > 256) {
      heap.resize(static_cast<std::size_t>(nb));
      blocks = heap.data();
    }
    for (std::int64_t j = 0; j < nb; ++j) {
      const std::int64_t k0 = j * kBlock, k1 = std::min(n, k0 + kBlock);
      float s = term(k0);
      for (std::int64_t k = k0 + 1; k < k1; ++k) s = add(s, term(k));
      blocks[j] = s;
    }
    for (std::int64_t m = nb; m > 1; m = (m + 1) / 2) {
      for (std::int64_t i = 0; i < m / 2; ++i) blocks[i] = add(blocks[2 * i], blocks[2 * i + 1]);
      if (m % 2 == 1) blocks[m / 2] = blocks[m - 1];
    }
    return add(init, blocks[0]);
  }

  // sum() with the accumulator held in bf16 (state_sum_bf16): each partial sum rounded to bf16.
  template <class F>
  float sum_bf16(std::int64_t n, F&& term) const {
    float acc = 0.0f;
    for (std::int64_t k = 0; k < n; ++k) acc = round_float(DType::bf16, add(acc, term(k)));
    return acc;
  }

  // Inclusive prefix sum out[i] = in[0] + ... + in[i]. Sequential: one running sum. Blocked: a
  // running sum inside each block of 8, added to the running sum of the previous block totals.
  void cumsum(const float* in, float* out, std::int64_t n) const {
    if (order_ == SumOrder::sequential) {
      float acc = 0.0f;
      for (std::int64_t i = 0; i < n; ++i) out[i] = acc = add(acc, in[i]);
      return;
    }
    float prefix = 0.0f;
    for (std::int64_t k0 = 0; k0 < n; k0 += kBlock) {
      const std::int64_t k1 = std::min(n, k0 + kBlock);
      float local = 0.0f;
      for (std::int64_t k = k0; k < k1; ++k) {
        local = k == k0 ? in[k] : add(local, in[k]);
        out[k] = add(prefix, local);
      }
      prefix = add(prefix, local);
    }
  }

 private:
  static constexpr std::int64_t kBlock = 8;
  SumOrder order_;
  Flaw flaw_;
  bool bf16_;
  bool tf32_;
};

// seq_idx lookup: s[b,t], or under Flaw::seq_boundary_late the id of the previous token s[b,t-1]
// (with s[b,-1] = 0, the contract's id before the first token).
class SeqIds {
 public:
  SeqIds(const Tensor* seq_idx, std::int64_t seqlen, const Ctx& ctx)
      : t_(seq_idx), S_(seqlen), late_(ctx.has(Flaw::seq_boundary_late)) {}
  bool present() const { return t_ != nullptr; }
  std::int64_t operator()(std::int64_t b, std::int64_t t) const {
    if (late_) --t;
    if (t < 0) return 0;
    return static_cast<std::int64_t>((*t_)[b * S_ + t]);
  }

 private:
  const Tensor* t_;
  std::int64_t S_;
  bool late_;
};

// The prefill dt pipeline in fp32: bias -> softplus -> clamp (when `clamp`). Padding is the
// caller's. Flaws: no_softplus, bias_after_softplus, no_dt_clamp.
inline float process_dt(const Ctx& ctx, float raw, const float* bias, bool softplus, bool clamp, float lo, float hi) {
  const bool bias_late = ctx.has(Flaw::bias_after_softplus) && softplus;
  float v = raw;
  if (bias && !bias_late) v = ctx.add(v, *bias);
  if (softplus && !ctx.has(Flaw::no_softplus)) v = ctx.softplus(v);
  if (bias && bias_late) v = ctx.add(v, *bias);
  if (clamp && ctx.has(Flaw::dt_limit_floor)) lo = std::fmax(lo, 1e-3f);
  if (clamp && !ctx.has(Flaw::no_dt_clamp)) v = std::fmin(std::fmax(v, lo), hi);
  return v;
}

// dot_dtype of _bmm_chunk_fwd: bf16 if either operand is bf16, else f16 if either is f16, else f32.
inline DType dot_dtype(DType a, DType b) {
  if (a == DType::bf16 || b == DType::bf16) return DType::bf16;
  if (a == DType::f16 || b == DType::f16) return DType::f16;
  return DType::f32;
}

inline void round_all(std::vector<float>& v, DType t) {
  if (t == DType::f32 || t == DType::f64) return;
  for (float& e : v) e = round_float(t, e);
}

// The dtype a kernel stores the named output in (OpSpec::outputs[i].dtype(problem)).
DType output_dtype(const Problem& p, std::string_view name);
// A tensor of the given dtype holding the values (rounded to it).
Tensor to_tensor(DType t, Shape shape, const std::vector<float>& values);

// ---- Stage kernels (float buffers, the contract's layouts) ----

// chunk_cumsum: raw dt [Bt,S,H], A [H], bias [H] or null -> dA [Bt,H,NC,Q] and dt_out (same).
// Uses d.batch, seqlen, heads, chunk, chunks.
void chunk_cumsum_kernel(const Ctx& ctx, const OpDims& d, const float* dt, const float* A, const float* bias,
                         bool softplus, DtLimit limit, float* dA, float* dt_out);

// chunk_coupling: C, B [Bt,S,G,N] already in the dot dtype -> cb [Bt,NC,G,Q,Q] in fp32 (unrounded).
void chunk_coupling_kernel(const Ctx& ctx, const OpDims& d, const float* C, const float* B, const SeqIds& seq,
                           float* cb);

// chunk_state: B [Bt,S,G,N], x [Bt,S,H,P], dt, dA [Bt,H,NC,Q] -> states [Bt,NC,H,P,N] in fp32.
void chunk_state_kernel(const Ctx& ctx, const OpDims& d, const float* B, const float* x, DType x_dtype,
                        const float* dt, const float* dA, const SeqIds& seq, float* states);

// The sequences of a packed batch (Bt = 1) and where each starts, as the global-grid kernels of
// vLLM up to 0.10 see them: a sequence that starts inside a chunk (offset o) brings its initial
// state in there, decayed by exp(dA[i] - dA[o-1]) to token i of that chunk.
struct PackedStarts {
  std::vector<std::int64_t> start, end;  // token range of each sequence
  const float* init = nullptr;           // [nseq,H,P*N] in fp32; null = none
  const float* init_entering = nullptr;  // the same stored in the entering dtype (what chunk_scan reads)
  std::vector<char> has;                 // has_initial_states
  const float* dA = nullptr;             // the within-chunk cumsum [1,H,NC,Q]
  std::int64_t sequence_of(std::int64_t t) const;  // -1 for padding
  bool has_init(std::int64_t j) const { return init != nullptr && j >= 0 && has[static_cast<std::size_t>(j)]; }
  // exp(dA[c, to] - dA[c, o - 1]) with dA[c, -1] = 0, where o is sequence j's start in chunk c.
  float decay_from_start(const Ctx& ctx, const OpDims& d, std::int64_t h, std::int64_t c, std::int64_t j,
                         std::int64_t to) const;
};
PackedStarts packed_starts(const Ctx& ctx, const Tensor& seq_idx, const float* init, const Tensor* has,
                           const float* dA);

// state_passing: states [Bt,NC,H,D], dA_chunk [Bt,H,NC], init [Bt,H,D] or null -> out (rounded to
// out_dtype) and final (fp32). Uses d.batch, chunks, heads, flat, and chunk/seqlen with seq_idx.
// With `packed` the initial states are per sequence instead (init is then ignored).
void state_passing_kernel(const Ctx& ctx, const OpDims& d, const float* states, const float* dA_chunk,
                          const float* init, const SeqIds& seq, DType out_dtype, float* out, float* final_states,
                          const PackedStarts* packed = nullptr);

// chunk_scan: cb [Bt,NC,G,Q,Q], x, dt, dA, C, entering states [Bt,NC,H,P,N], D ([H] or [H,P]) and z
// optional -> out (and out_x with z) [Bt,S,H,P] in fp32 (the caller stores them in x's dtype).
struct ScanInputs {
  const float* cb = nullptr;
  bool cb_transposed = false;  // read cb[k][i] for cb[i][k] (chunk_scan's b_c_swapped)
  const float* x = nullptr;
  DType x_dtype = DType::f32;
  const float* dt = nullptr;
  const float* dA = nullptr;
  const float* C = nullptr;
  DType C_dtype = DType::f32;
  const float* states = nullptr;
  std::optional<DType> states_dtype;  // where the entering states are stored; C's dtype by default
  const float* D = nullptr;
  bool d_has_hdim = false;
  const float* z = nullptr;
};
void chunk_scan_kernel(const Ctx& ctx, const OpDims& d, const ScanInputs& in, const SeqIds& seq, float* out,
                       float* out_x, const PackedStarts* packed = nullptr);

// Each packed sequence's state at its last token [nseq,H,P,N] in fp32: the part of its last chunk
// (B * w rounded to x's dtype, as chunk_state) plus what enters that chunk: the running state
// `running` [1,NC,H,P*N] (fp32, before any rounding) if the sequence began in an earlier chunk,
// else its own initial state.
void varlen_states_kernel(const Ctx& ctx, const OpDims& d, const PackedStarts& packed, const float* B, const float* x,
                          DType x_dtype, const float* dt, const float* running, float* varlen_states);

// ---- The ops ----
Outputs mamba2(const Problem& p, const InputSet& in, const Ctx& ctx);
Outputs chunk_cumsum(const Problem& p, const InputSet& in, const Ctx& ctx);
Outputs chunk_coupling(const Problem& p, const InputSet& in, const Ctx& ctx);
Outputs chunk_state(const Problem& p, const InputSet& in, const Ctx& ctx);
Outputs state_passing(const Problem& p, const InputSet& in, const Ctx& ctx);
Outputs chunk_scan(const Problem& p, const InputSet& in, const Ctx& ctx);
Outputs recurrent(const Problem& p, const InputSet& in, const Ctx& ctx);
Outputs discretize_segsum(const Problem& p, const InputSet& in, const Ctx& ctx);

}  // namespace ssd::emu
