// Bounds of Mamba2Fwd, from the shadows of its pipeline: the chunk states, the inter-chunk scan
// (whose exponent charge is the sensitivity to the chunk totals), and the scan of each chunk.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>

#include "common.h"
#include "ops.h"
#include "ssd/reference/helpers.h"

namespace ssd::tolerance {

namespace {
// The state dtype: where the entering states are stored (state=, else C's dtype).
DType entering_state_dtype(const Problem& p, const InputSet& in) {
  auto it = p.dtypes.find("state");
  return it == p.dtypes.end() ? in.at("C").dtype() : it->second;
}
}  // namespace

double softplus_charge_scale(const Problem& p, bool packed) {
  const std::int64_t NC = (p.s + p.q - 1) / p.q + (packed ? 1 : 0);
  double smallest = HUGE_VAL;
  for (const char* name : {"out", "final_states"}) {
    const ToleranceConstants& c = op_spec(p.op).output(name).tolerance;
    const std::int64_t n = (std::string_view(name) == "out" ? std::max(p.q, p.n) : p.q) + NC;
    smallest = std::min(smallest, c.k_exp * (std::sqrt(static_cast<double>(n)) + c.c_phi));
  }
  return 1.0 / smallest;
}

double dt_step_charge(const Problem& p, double a, double raw, double bias, double dt, double scale) {
  if (dt == 0.0) return 0.0;
  return a * (std::fabs(dt) + scale * dt_softplus_error(p, raw, bias, dt));
}

Bounds mamba2_row_bounds(const Problem& p, const InputSet& in, const Outputs& oracle, const GridSlack* slack) {
  const std::int64_t extra_chunks = slack ? 1 : 0;
  const Tensor* seq = in.find("seq_idx");
  const std::int64_t NC = (p.s + p.q - 1) / p.q, PN = p.p * p.n;
  DtLimit limit;
  if (p.dt_limit) limit = *p.dt_limit;
  const Outputs cumsum = chunk_cumsum_chunked({&in.at("dt"), &in.at("A"), p.q, in.find("dt_bias"), p.softplus, limit});
  const Tensor& dA = cumsum.get("dA_cumsum").value;
  const Tensor& raw_dt = in.at("dt");
  const Tensor* dt_bias = in.find("dt_bias");
  // The raw dt and bias of chunk-major position (row, i), row = (b H + h) NC + c.
  auto raw_at = [&](std::int64_t row, std::int64_t i) {
    const std::int64_t b = row / (NC * p.h), h = (row / NC) % p.h, t = (row % NC) * p.q + i;
    return t < p.s ? raw_dt[(b * p.s + t) * p.h + h] : 0.0;
  };
  auto bias_at = [&](std::int64_t row) { return dt_bias ? (*dt_bias)[(row / NC) % p.h] : 0.0; };
  // Processed dt: the shadows carry |dt'|. Softplus's error on dt' (log(exp(x) + 1) in fp32, about
  // an ulp of 1 + exp(x), bounded by dt_softplus_error) is carried apart: dt_err is u_acc times it,
  // and the shadows run on it give what it adds to each output, linearly (`carried`).
  const Tensor dt_mag = absolute(cumsum.get("dt_out").value);
  Tensor dt_err(DType::f64, dt_mag.shape());
  if (p.softplus)
    for (std::int64_t i = 0; i < dt_mag.numel(); ++i)
      if (dt_mag[i] != 0.0)
        dt_err.data()[i] = kAccumulationRoundoff * dt_softplus_error(p, raw_at(i / p.q, i % p.q), bias_at(i / p.q), dt_mag[i]);

  // Error magnitude of the cumsum the decays come from, per chunk position: sum of |A| (|dt'| +
  // dt's own error). Softplus's error is absolute, so a strongly decaying head (large |A|) charges
  // its exponents far more than |dA| alone would say.
  Tensor charge(DType::f64, dA.shape());
  {
    const Tensor& dt_out = cumsum.get("dt_out").value;
    const Tensor& A = in.at("A");
    const double scale = softplus_charge_scale(p, slack != nullptr);
    double previous_chunk = 0.0;  // the charge the previous chunk's steps add up to (same row and head)
    for (std::int64_t row = 0; row < dA.numel() / p.q; ++row) {
      const double a = std::fabs(A[(row / NC) % p.h]);
      // Another chunk grid (a packed batch's) may start a chunk anywhere in the previous chunk of
      // this one, or, for the first, inside the tokens before the row: its running charge is at
      // most this chunk's plus the whole previous one's (or the leading tokens').
      const std::int64_t c = row % NC;
      double running = !slack ? 0.0 : c == 0 ? slack->leading_charge[static_cast<std::size_t>((row / NC) % p.h)] : previous_chunk;
      double own = 0.0;
      for (std::int64_t i = 0; i < p.q; ++i) {
        const double step = dt_step_charge(p, a, raw_at(row, i), bias_at(row), dt_out[row * p.q + i], scale);
        running += step;
        own += step;
        charge.data()[row * p.q + i] = std::max(running, std::fabs(dA[row * p.q + i]));
      }
      previous_chunk = own;
    }
  }

  const Tensor absx = absolute(in.at("x")), absB = absolute(in.at("B")), absC = absolute(in.at("C"));
  const std::optional<Tensor> absD = absolute(in.find("D")), abs_init = absolute(in.find("initial_states"));

  // Chunk states and their exponent charge (|dA[Q-1]| + |dA[k]| per token).
  const Tensor states_S = chunk_state_chunked({&absB, &absx, &dt_mag, &dA, seq}).get("states").value;
  const Tensor weighted_dt = product(dt_mag, charge);
  const Tensor states_E = sum(product(chunk_total_magnitude(charge, p.p, p.n), states_S),
                              chunk_state_chunked({&absB, &absx, &weighted_dt, &dA, seq}).get("states").value);

  // Inter-chunk scan. Each carried term travels a path of chunk totals computed by the cumsum;
  // its exponent charge is |sum of totals on the path|, the derivative of the scan's shadow with
  // respect to scaling every total (all totals are <= 0 when A <= 0 and dt' >= 0).
  Tensor totals(DType::f64, {p.b, p.h, NC});
  for (std::int64_t i = 0; i < totals.numel(); ++i) totals.data()[i] = dA[i * p.q + p.q - 1];
  constexpr double eta = 0x1p-20;
  // Moving each total toward zero by eta times its charge: the derivative is sum |term| x (sum of
  // the charges on its path).
  Tensor scaled_totals = totals;
  for (std::int64_t i = 0; i < totals.numel(); ++i) scaled_totals.data()[i] += eta * charge[i * p.q + p.q - 1];
  const Tensor flat_S = states_S.reshaped({p.b, NC, p.h, PN}), flat_E = states_E.reshaped({p.b, NC, p.h, PN});
  std::optional<Tensor> flat_init;
  if (abs_init) flat_init = abs_init->reshaped({p.b, p.h, PN});
  const Outputs pass_S = state_passing_chunked({&flat_S, &totals, ptr(flat_init), seq, p.q});
  const Outputs pass_moved = state_passing_chunked({&flat_S, &scaled_totals, ptr(flat_init), seq, p.q});
  const Outputs pass_E = state_passing_chunked({&flat_E, &totals, nullptr, seq, p.q});
  // Every chunk step also rounds its exp and its update: a charge per step on the path, the
  // derivative with respect to shifting every total by the same amount.
  Tensor shifted_totals = totals;
  for (std::int64_t i = 0; i < shifted_totals.numel(); ++i) shifted_totals.data()[i] += eta;
  const Outputs pass_shifted = state_passing_chunked({&flat_S, &shifted_totals, ptr(flat_init), seq, p.q});
  auto path_charge = [&](const char* name) {
    const Tensor& a = pass_S.get(name).value;
    const Tensor& b = pass_moved.get(name).value;
    const Tensor& c = pass_shifted.get(name).value;
    Tensor e(DType::f64, a.shape());
    for (std::int64_t i = 0; i < a.numel(); ++i)
      e.data()[i] = (std::fabs(b[i] - a[i]) + std::fabs(c[i] - a[i])) / eta + pass_E.get(name).value[i];
    return e;
  };
  const Tensor prev_S = pass_S.get("out").value.reshaped({p.b, NC, p.h, p.p, p.n});
  const Tensor prev_E = path_charge("out").reshaped({p.b, NC, p.h, p.p, p.n});
  Tensor final_S = pass_S.get("final_states").value.reshaped({p.b, p.h, p.p, p.n});
  const Tensor final_E = path_charge("final_states").reshaped({p.b, p.h, p.p, p.n});

  // Each chunk's scan on the shadows.
  const Tensor cb_S = chunk_coupling_chunked({&absC, &absB, p.q, seq, false}).get("CB").value;
  ScanShadow y = chunk_scan_shadow(p, {&cb_S, &absx, &dt_mag, &dA, &absC, &prev_S, ptr(absD), nullptr, seq}, charge,
                                   &prev_E);

  // Subnormal floor of the chunk states' rounding of B*w to x.dtype (sum_k |x_k| per chunk),
  // carried through the inter-chunk scan into the final states and, through C, into out.
  const Tensor ones_B = filled(absB.shape(), 1.0), ones_dt = filled(dA.shape(), 1.0), zero_dA = filled(dA.shape(), 0.0);
  const Tensor states_F = chunk_state_chunked({&ones_B, &absx, &ones_dt, &zero_dA, seq}).get("states").value;
  Tensor flat_F = states_F.reshaped({p.b, NC, p.h, PN});
  if (slack) {
    // A packed batch's grid may end a token's chunk up to Q - 1 tokens after this row's grid does,
    // so the rounding's floor can miss one chunk total of the decay charged here: each chunk's
    // floor is also carried into the next chunk undecayed (a bound of both; on the global grid a
    // token of the batch's last chunk reaches its sequence's state undecayed).
    const Tensor own = flat_F;
    for (std::int64_t b = 0; b < p.b; ++b)
      for (std::int64_t c = 1; c < NC; ++c)
        for (std::int64_t i = 0; i < p.h * PN; ++i) flat_F.data()[(b * NC + c) * p.h * PN + i] += own[(b * NC + c - 1) * p.h * PN + i];
  }
  const Outputs pass_F = state_passing_chunked({&flat_F, &totals, nullptr, seq, p.q});
  const Tensor final_F = pass_F.get("final_states").value.reshaped({p.b, p.h, p.p, p.n});
  const Tensor prev_F = pass_F.get("out").value.reshaped({p.b, NC, p.h, p.p, p.n});
  const Tensor zero_cb = filled(cb_S.shape(), 0.0);
  y.floor = sum(y.floor, chunk_scan_chunked({&zero_cb, &absx, &dt_mag, &dA, &absC, &prev_F, nullptr, nullptr, seq})
                             .get("out").value);

  // With a negative dt' (a negative dt_limit lower end) dA rises, and a chunk-start decay exp(dA[i])
  // or a chunk total exp(dA[Q-1]) can pass fp32's range: out downstream of it, and the final
  // states of that row and head, are then inf or NaN in any honest fp32 evaluation.
  const std::vector<bool> total_overflows = exempt_overflowing_decays(dA, p.s, true, y.with_skip);
  for (std::int64_t bh = 0; bh < p.b * p.h; ++bh)
    if (total_overflows[static_cast<std::size_t>(bh)]) std::fill_n(final_S.data() + bh * PN, PN, HUGE_VAL);
  // Growing decays can also take a state past its range: fp32 for the chunk states and the carried
  // states, C.dtype for the entering states the scan reads (a 16-bit rounding point; f16 overflows
  // past 65504). The shadows above are masked by seq_idx, but a kernel may apply a mask by
  // multiplying with 0, and inf x 0 is NaN: the magnitudes that matter are those of the unmasked
  // terms. From the first chunk of a row and head whose entering or own state (unmasked shadow)
  // may overflow, nothing downstream is demanded: out of that chunk on (the entering state) or of
  // the next chunk on (the chunk's own state), and the final states; an out element whose own
  // unmasked shadow may overflow is exempt too. Without seq_idx, or while dA never rises, the
  // masked shadows are the unmasked ones.
  {
    const bool masked = seq != nullptr && *std::max_element(dA.data(), dA.data() + dA.numel()) > 0.0;
    const Tensor states_u = masked ? chunk_state_chunked({&absB, &absx, &dt_mag, &dA, nullptr}).get("states").value : states_S;
    const Tensor flat_u = states_u.reshaped({p.b, NC, p.h, PN});
    const Tensor prev_u = masked ? state_passing_chunked({&flat_u, &totals, ptr(flat_init), nullptr, p.q}).get("out").value
                                 : prev_S.reshaped({p.b, NC, p.h, PN});
    Tensor out_u = y.without_skip;
    if (masked) {
      const Tensor cb_u = chunk_coupling_chunked({&absC, &absB, p.q, nullptr, false}).get("CB").value;
      const Tensor prev_u5 = prev_u.reshaped({p.b, NC, p.h, p.p, p.n});
      out_u = chunk_scan_chunked({&cb_u, &absx, &dt_mag, &dA, &absC, &prev_u5, nullptr, nullptr, nullptr}).get("out").value;
    }
    auto over = [](const double* v, std::int64_t n, double largest) {
      for (std::int64_t i = 0; i < n; ++i)
        if (!(v[i] <= largest)) return true;
      return false;
    };
    const double entering_limit = std::min(overflow_shadow(entering_state_dtype(p, in)), kFp32OverflowShadow);
    for (std::int64_t b = 0; b < p.b; ++b)
      for (std::int64_t h = 0; h < p.h; ++h) {
        bool poisoned = false;
        for (std::int64_t c = 0; c < NC; ++c) {
          poisoned = poisoned || over(prev_u.data() + ((b * NC + c) * p.h + h) * PN, PN, entering_limit);
          for (std::int64_t t = c * p.q; t < std::min(p.s, (c + 1) * p.q); ++t) {
            double* row = y.with_skip.data() + ((b * p.s + t) * p.h + h) * p.p;
            const double* row_u = out_u.data() + ((b * p.s + t) * p.h + h) * p.p;
            for (std::int64_t q = 0; q < p.p; ++q)
              if (poisoned || !(row_u[q] <= kFp32OverflowShadow)) row[q] = HUGE_VAL;
          }
          poisoned = poisoned || over(states_u.data() + ((b * NC + c) * p.h + h) * PN, PN, kFp32OverflowShadow);
        }
        if (poisoned) std::fill_n(final_S.data() + (b * p.h + h) * PN, PN, HUGE_VAL);
      }
  }

  // Rounding points granted on the path: B*w to x.dtype in the chunk states, the entering states
  // stored in the state dtype (C.dtype by default), the diagonal coefficient in x.dtype, and mixed
  // B/C converted for their dot.
  const DType dx = in.at("x").dtype(), dB = in.at("B").dtype(), dC = in.at("C").dtype();
  const DType d_entering = entering_state_dtype(p, in);
  const DType dot = (dC == DType::bf16 || dB == DType::bf16) ? DType::bf16
                    : (dC == DType::f16 || dB == DType::f16) ? DType::f16 : DType::f32;
  // Declared TF32 rounds every f32 operand of the four dots once more: B*w and x (chunk states),
  // C and B (coupling), C and the entering states, the coefficients and x (scan).
  const double u_states = conversion_roundoff(DType::f32, dx) + 2 * tf32_operand_roundoff(p, dx);
  const double u_out_path = u_states + conversion_roundoff(DType::f32, d_entering) + conversion_roundoff(DType::f32, dx) +
                            conversion_roundoff(dC, dot) + conversion_roundoff(dB, dot) + 2 * tf32_operand_roundoff(p, dot) +
                            tf32_operand_roundoff(p, dC) + tf32_operand_roundoff(p, d_entering) +
                            2 * tf32_operand_roundoff(p, dx);
  const std::int64_t n_out = std::max(p.q, p.n) + NC + extra_chunks, n_final = p.q + NC + extra_chunks;

  // Softplus's error carried through the pipeline: the shadows with dt_err in place of |dt'|.
  std::optional<Tensor> carried_out, carried_final;
  Tensor prev_C(DType::f64, prev_S.shape());
  if (p.softplus) {
    const Tensor states_C = chunk_state_chunked({&absB, &absx, &dt_err, &dA, seq}).get("states").value;
    const Tensor flat_C = states_C.reshaped({p.b, NC, p.h, PN});
    const Outputs pass_C = state_passing_chunked({&flat_C, &totals, nullptr, seq, p.q});
    prev_C = pass_C.get("out").value.reshaped({p.b, NC, p.h, p.p, p.n});
    carried_final = pass_C.get("final_states").value.reshaped({p.b, p.h, p.p, p.n});
    carried_out = chunk_scan_chunked({&cb_S, &absx, &dt_err, &dA, &absC, &prev_C, nullptr, nullptr, seq}).get("out").value;
  }

  // Each rounding point charged on the magnitude of what it rounds (its own path):
  //  - the coefficient cb.decay.dt rounded to x.dtype (and, under TF32, it and x): on the diagonal
  //    terms with |CB| itself (plus its own error bound) instead of CB's shadow |C| |B|^T;
  //  - B and C converted to the dot dtype: every product of CB, on the diagonal shadow;
  //  - B*w rounded to x.dtype in the chunk states: every term of every state, on the carried shadow;
  //  - the entering states rounded to the state dtype (and, under TF32, they and C): on the carried
  //    terms with |h| (the entering state's value plus its own error bound) instead of its shadow.
  // D x rounds nothing. The magnitudes computed in float64 from exact decays are raised by the
  // relative error the decays' exponent charge allows (decay_slack), and dt' by its softplus error.
  const double u_coefficient = conversion_roundoff(DType::f32, dx) + 2 * tf32_operand_roundoff(p, dx);
  const double u_dot = conversion_roundoff(dC, dot) + conversion_roundoff(dB, dot) + 2 * tf32_operand_roundoff(p, dot);
  const double u_entering = conversion_roundoff(DType::f32, d_entering) + tf32_operand_roundoff(p, dC) +
                            tf32_operand_roundoff(p, d_entering);
  const ToleranceConstants& c_out = op_spec(p.op).output("out").tolerance;
  const double phi_out = std::sqrt(static_cast<double>(n_out)) + c_out.c_phi;
  double largest_charge = 0.0;
  for (std::int64_t i = 0; i < charge.numel(); ++i) largest_charge = std::max(largest_charge, charge[i]);
  const double decay_slack = 1.0 + std::expm1(2.0 * c_out.k_exp * kAccumulationRoundoff * phi_out * largest_charge);
  Tensor per_path(DType::f64, y.without_skip.shape());
  if (slack == nullptr) {
    const Tensor zero_states(DType::f64, prev_S.shape());
    Tensor cb_mag = absolute(chunk_coupling_chunked({&in.at("C"), &in.at("B"), p.q, seq, false}).get("CB").value);
    const double cb_unit = 2.0 * u_dot + 2.0 * kAccumulationRoundoff * (std::sqrt(static_cast<double>(p.n)) + 4.0);
    for (std::int64_t i = 0; i < cb_mag.numel(); ++i)
      cb_mag.data()[i] = cb_mag[i] * (1.0 + 2.0 * kAccumulationRoundoff) + cb_unit * cb_S[i];
    const Tensor dt_coefficient = sum(dt_mag, dt_err);
    const Tensor diagonal_value =
        chunk_scan_chunked({&cb_mag, &absx, &dt_coefficient, &dA, &absC, &zero_states, nullptr, nullptr, seq}).get("out").value;
    // The entering states' values: the chunk states of the signed inputs, passed between chunks.
    const Tensor states_v = chunk_state_chunked({&in.at("B"), &in.at("x"), &cumsum.get("dt_out").value, &dA, seq}).get("states").value;
    const Tensor flat_v = states_v.reshaped({p.b, NC, p.h, PN});
    std::optional<Tensor> flat_init_v;
    if (const Tensor* init = in.find("initial_states")) flat_init_v = init->reshaped({p.b, p.h, PN});
    Tensor h_mag = absolute(state_passing_chunked({&flat_v, &totals, ptr(flat_init_v), seq, p.q}).get("out").value)
                       .reshaped(prev_S.shape());
    const double phi_final = std::sqrt(static_cast<double>(n_final)) + c_out.c_phi;
    for (std::int64_t i = 0; i < h_mag.numel(); ++i)
      h_mag.data()[i] += 2.0 * (u_states + c_out.k * kAccumulationRoundoff * phi_final) * prev_S[i] +
                         c_out.k_exp * kAccumulationRoundoff * phi_final * prev_E[i] + prev_C[i];
    const Tensor entering =
        chunk_scan_chunked({&zero_cb, &absx, &dt_mag, &dA, &absC, &h_mag, nullptr, nullptr, seq}).get("out").value;
    for (std::int64_t i = 0; i < per_path.numel(); ++i)
      per_path.data()[i] = decay_slack * (u_coefficient * diagonal_value[i] + u_entering * entering[i]) +
                              u_dot * y.diagonal[i] + u_states * std::max(0.0, y.without_skip[i] - y.diagonal[i]);
  }

  Bounds bounds;
  // A packed batch's sequence may be cut by another chunk grid (GridSlack): which terms are carried
  // in and which states are rounded is then the kernel's grid's, so every path takes every point.
  add_gated_bounds(p, oracle, in.find("z"), y, u_out_path, n_out, bounds,
                   std::max(half_subnormal(d_entering), half_subnormal(dx)), slack ? nullptr : &per_path,
                   ptr(carried_out));
  // In a packed batch (slack given) this row is one sequence and final_states its varlen state,
  // which kernels build from the stored entering state of the sequence's last chunk plus that
  // chunk's own part (mamba_ssm's and vLLM's chunk_state_varlen): the entering states' granted
  // rounding to the state dtype reaches it, charged here on the whole shadow.
  const double u_final = u_states + (slack ? conversion_roundoff(DType::f32, d_entering) : 0.0);
  bounds.add(make_bound(p, oracle.get("final_states"), {&final_S, &final_E, u_final, n_final, &final_F,
                                                        half_subnormal(dx), nullptr, ptr(carried_final)}));
  return bounds;
}

Bounds mamba2_bounds(const Problem& p, const InputSet& in, const Outputs& oracle) {
  return p.varlen ? mamba2_varlen_bounds(p, in, oracle) : mamba2_row_bounds(p, in, oracle, nullptr);
}

}  // namespace ssd::tolerance
