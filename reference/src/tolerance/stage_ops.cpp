// Bounds of the stage ops: chunk_cumsum, chunk_coupling, chunk_state, state_passing, chunk_scan.
// Shadows come from the chunked oracle itself run on absolute values (the decays are positive
// already), and exponent terms from the same run with each token's weight scaled by |dA|.
#include <algorithm>

#include "common.h"
#include "ops.h"
#include "ssd/reference/helpers.h"
#include "ssd/reference/oracle.h"

namespace ssd::tolerance {
namespace {

std::int64_t chunks_of(const Problem& p) { return (p.s + p.q - 1) / p.q; }

}  // namespace

Bounds chunk_cumsum_bounds(const Problem& p, const InputSet& in, const Outputs& oracle) {
  const Tensor& dt = in.at("dt");
  const Tensor& A = in.at("A");
  const Tensor* bias = in.find("dt_bias");
  const Tensor& dt_out = oracle.get("dt_out").value;
  const ChunkGrid grid{p.s, p.q};
  const std::int64_t NC = chunks_of(p), Q = p.q;
  // S_dt: the shadow of dt' that dA_cumsum's terms carry (every error of dt' charged on the cumsum's
  // phi(Q), which is what keeps a long same-sign cumsum inside its bound: Known limits). dt_out's own
  // bound is that of one elementwise pipeline: |dt'| (the bias add, the clamp's fl32(limit)) and the
  // softplus error carried as derived (dt_softplus_error).
  Tensor S_dt(DType::f64, dt_out.shape()), S_dA(DType::f64, dt_out.shape());
  Tensor S_out(DType::f64, dt_out.shape()), carried_out(DType::f64, dt_out.shape());
  for (std::int64_t b = 0; b < p.b; ++b)
    for (std::int64_t h = 0; h < p.h; ++h)
      for (std::int64_t c = 0; c < NC; ++c) {
        double running = 0.0;
        for (std::int64_t i = 0; i < Q; ++i) {
          const std::int64_t at = ((b * p.h + h) * NC + c) * Q + i;
          double s = 0.0;
          if (i < grid.length(c)) {
            const double bias_h = bias ? (*bias)[h] : 0.0;
            const double raw = dt[(b * p.s + grid.start(c) + i) * p.h + h] + bias_h;
            // The bias add, and softplus as log(exp(x) + 1) in fp32: an absolute error of about
            // one ulp of (1 + exp(x)), i.e. of order 1 + dt', not of dt' itself.
            s = std::fabs(raw) + std::fabs(bias_h) + (p.softplus ? 1.0 + std::fabs(dt_out[at]) : 0.0);
            // The clamp compares with its limits converted to fp32 (0.001 is no fp32 number), so
            // where it binds the kernel stores fl32(limit), off by up to u |dt'|; |dt'| is then the
            // magnitude of the term that produced the value. Without it a raw dt of exactly 0
            // clamped to lo > 0 has shadow 0 and the exact rule demands lo itself, which no fp32
            // kernel can store.
            const double unclamped = p.softplus ? softplus_thr20(raw) : raw;
            if (dt_out[at] != unclamped) s += std::fabs(dt_out[at]);
            S_out.data()[at] = std::fabs(dt_out[at]);
            // The clamp is 1-Lipschitz: it passes the softplus error on, no larger.
            carried_out.data()[at] = kAccumulationRoundoff * dt_softplus_error(p, raw - bias_h, bias_h, std::fabs(unclamped));
          }
          S_dt.data()[at] = s;
          running += std::fabs(A[h]) * (std::fabs(dt_out[at]) + s);
          S_dA.data()[at] = running;  // flat over the padded tail, like the cumsum itself
        }
      }
  Bounds bounds;
  BoundTerms dA_terms{&S_dA, nullptr, 0.0, Q};
  dA_terms.running_sum = true;
  bounds.add(make_bound(p, oracle.get("dA_cumsum"), dA_terms));
  bounds.add(make_bound(p, oracle.get("dt_out"), {&S_out, nullptr, 0.0, 1, nullptr, 0.0, nullptr, &carried_out}));
  return bounds;
}

Bounds chunk_coupling_bounds(const Problem& p, const InputSet& in, const Outputs& oracle) {
  const Tensor absC = absolute(in.at("C")), absB = absolute(in.at("B"));
  const Outputs shadow = chunk_coupling_chunked({&absC, &absB, p.q, in.find("seq_idx"), p.causal});
  // Mixed inputs are converted to the dot dtype (bf16 if either is bf16, else f16 if either is f16).
  const DType dC = in.at("C").dtype(), dB = in.at("B").dtype();
  const DType dot = (dC == DType::bf16 || dB == DType::bf16) ? DType::bf16
                    : (dC == DType::f16 || dB == DType::f16) ? DType::f16 : DType::f32;
  const double u_mid = conversion_roundoff(dC, dot) + conversion_roundoff(dB, dot) + 2 * tf32_operand_roundoff(p, dot);
  // A converted input below the normal range is off by up to half a subnormal spacing, times the
  // other factor: sum_n |B_jn| + |C_in|.
  Tensor F(DType::f64, shadow.get("CB").value.shape());
  if (u_mid > 0) {
    const Tensor onesC = filled(absC.shape(), 1.0);
    F = sum(chunk_coupling_chunked({&onesC, &absB, p.q, in.find("seq_idx"), p.causal}).get("CB").value,
            chunk_coupling_chunked({&absC, &onesC, p.q, in.find("seq_idx"), p.causal}).get("CB").value);
  }
  Bounds bounds;
  bounds.add(make_bound(p, oracle.get("CB"), {&shadow.get("CB").value, nullptr, u_mid, p.n, &F, half_subnormal(dot)}));
  return bounds;
}

Bounds chunk_state_bounds(const Problem& p, const InputSet& in, const Outputs& oracle) {
  const Tensor absB = absolute(in.at("B")), absx = absolute(in.at("x")), absdt = absolute(in.at("dt"));
  const Tensor& dA = in.at("dA_cumsum");
  const Tensor* seq = in.find("seq_idx");
  const Tensor S = chunk_state_chunked({&absB, &absx, &absdt, &dA, seq}).get("states").value;
  // Exponent charge of token k's decay exp(dA[Q-1] - dA[k]): |dA[Q-1]| + |dA[k]| (both cumsums).
  const Tensor weighted_dt = product(absdt, absolute(dA));
  const Tensor E_k = chunk_state_chunked({&absB, &absx, &weighted_dt, &dA, seq}).get("states").value;
  const Tensor E = sum(product(chunk_total_magnitude(dA, p.p, p.n), S), E_k);
  // B*w is rounded to x.dtype before the dot with x; below the normal range that rounding is
  // absolute, charged on sum_k |x_k| (the oracle with unit B, dt and decays).
  const DType dx = in.at("x").dtype();
  // Both operands of the dot (B*w and x) are in x.dtype: declared TF32 rounds each once more.
  const double u_mid = conversion_roundoff(DType::f32, dx) + 2 * tf32_operand_roundoff(p, dx);
  const Tensor ones_B = filled(absB.shape(), 1.0), ones_dt = filled(absdt.shape(), 1.0), zero_dA = filled(dA.shape(), 0.0);
  const Tensor F = chunk_state_chunked({&ones_B, &absx, &ones_dt, &zero_dA, seq}).get("states").value;
  Bounds bounds;
  bounds.add(make_bound(p, oracle.get("states"), {&S, &E, u_mid, p.q, &F, half_subnormal(dx)}));
  return bounds;
}

Bounds state_passing_bounds(const Problem& p, const InputSet& in, const Outputs& oracle) {
  const Tensor abs_states = absolute(in.at("states"));
  const std::optional<Tensor> abs_init = absolute(in.find("initial_states"));
  const Tensor& totals = in.at("dA_chunk_cumsum");
  const Outputs S = state_passing_chunked({&abs_states, &totals, ptr(abs_init), in.find("seq_idx"), p.q});
  // The chunk totals are inputs, but every step on a term's path rounds an exp and an update:
  // E = sum |term| x (steps on its path), the derivative of S with respect to shifting every total.
  constexpr double eta = 0x1p-20;
  Tensor shifted = totals;
  for (std::int64_t i = 0; i < shifted.numel(); ++i) shifted.data()[i] += eta;
  const Outputs moved = state_passing_chunked({&abs_states, &shifted, ptr(abs_init), in.find("seq_idx"), p.q});
  auto steps = [&](const char* name) {
    Tensor e(DType::f64, S.get(name).value.shape());
    for (std::int64_t i = 0; i < e.numel(); ++i) e.data()[i] = std::fabs(moved.get(name).value[i] - S.get(name).value[i]) / eta;
    return e;
  };
  const Tensor E_out = steps("out"), E_final = steps("final_states");
  const std::int64_t n = chunks_of(p) + 1;
  Bounds bounds;
  bounds.add(make_bound(p, oracle.get("out"), {&S.get("out").value, &E_out, 0.0, n}));
  bounds.add(make_bound(p, oracle.get("final_states"), {&S.get("final_states").value, &E_final, 0.0, n}));
  return bounds;
}

ScanShadow chunk_scan_shadow(const Problem& p, const ChunkScanArgs& abs_args, const Tensor& charge,
                             const Tensor* exponent_states) {
  const Tensor& dA = *abs_args.dA_cumsum;
  ScanShadow s;
  ChunkScanArgs a = abs_args;
  a.D = nullptr;
  a.z = nullptr;
  s.without_skip = chunk_scan_chunked(a).get("out").value;
  // Subnormal floor of the two intermediate roundings (coefficients to x.dtype, entering states
  // to C.dtype): sum_{k<=i} |x_k| + sum_n |C_n|, the scan with unit cb, dt, decays and states.
  const Tensor ones_cb = filled(a.cb->shape(), 1.0), ones_dt = filled(a.dt->shape(), 1.0);
  const Tensor zero_dA = filled(dA.shape(), 0.0), ones_states = filled(a.states->shape(), 1.0);
  ChunkScanArgs f = a;
  f.cb = &ones_cb;
  f.dt = &ones_dt;
  f.dA_cumsum = &zero_dA;
  f.states = &ones_states;
  s.floor = chunk_scan_chunked(f).get("out").value;
  Tensor no_states(DType::f64, a.states->shape());
  ChunkScanArgs d = a;
  d.states = &no_states;
  s.diagonal = chunk_scan_chunked(d).get("out").value;
  // Exponents: the carried-in decay exp(dA[i]) and the diagonal exp(dA[i] - dA[k]) both charge
  // |dA[i]|; the diagonal also charges |dA[k]| (token weights dt * |dA|); the carried states bring
  // their own exponent charge (exponent_states, or none when the states are inputs).
  const Tensor weighted_dt = product(*a.dt, charge);
  Tensor zero_states(DType::f64, a.states->shape());
  ChunkScanArgs e = a;
  e.dt = &weighted_dt;
  e.states = exponent_states ? exponent_states : &zero_states;
  const Tensor E_k = chunk_scan_chunked(e).get("out").value;
  s.exponent = sum(product(token_cumsum_magnitude(charge, p.s, p.p), s.without_skip), E_k);
  // D*x: one product per element.
  s.with_skip = s.without_skip;
  if (abs_args.D) {
    const Tensor& x = *abs_args.x;
    const bool per_p = abs_args.D->rank() == 2;
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      const std::int64_t h = (i / p.p) % p.h, q = i % p.p;
      s.with_skip.data()[i] += (per_p ? (*abs_args.D)[h * p.p + q] : (*abs_args.D)[h]) * x[i];
    }
  }
  return s;
}

Tensor scan_path_charge(const ScanShadow& s, double u_diagonal, double u_carried) {
  Tensor m(DType::f64, s.without_skip.shape());
  for (std::int64_t i = 0; i < m.numel(); ++i)
    m.data()[i] = u_diagonal * s.diagonal[i] + u_carried * std::max(0.0, s.without_skip[i] - s.diagonal[i]);
  return m;
}

void add_gated_bounds(const Problem& p, const Outputs& oracle, const Tensor* z, const ScanShadow& s,
                      double u_mid, std::int64_t n, Bounds& bounds, double floor_unit, const Tensor* intermediate,
                      const Tensor* carried) {
  if (z == nullptr) {
    bounds.add(make_bound(p, oracle.get("out"),
                          {&s.with_skip, &s.exponent, u_mid, n, &s.floor, floor_unit, intermediate, carried}));
    return;
  }
  // out_x = y; out = y * silu(z): the gate scales y's shadow, and its own evaluation (exp, divide,
  // two products) adds a few roundings relative to |out|, charged as extra shadow |out|.
  if (oracle.has("out_x"))
    bounds.add(make_bound(p, oracle.get("out_x"),
                          {&s.with_skip, &s.exponent, u_mid, n, &s.floor, floor_unit, intermediate, carried}));
  Tensor S_out(DType::f64, s.with_skip.shape()), E_out(DType::f64, s.with_skip.shape());
  Tensor F_out(DType::f64, s.with_skip.shape());
  Tensor M_out(DType::f64, intermediate ? s.with_skip.shape() : Shape{0});
  Tensor C_out(DType::f64, carried ? s.with_skip.shape() : Shape{0});
  const Tensor& out = oracle.get("out").value;
  for (std::int64_t i = 0; i < out.numel(); ++i) {
    const double zi = (*z)[i], g = std::fabs(zi / (1.0 + std::exp(-zi)));
    S_out.data()[i] = g * s.with_skip[i] + std::fabs(out[i]);
    E_out.data()[i] = g * s.exponent[i];
    F_out.data()[i] = g * s.floor[i];
    if (intermediate) M_out.data()[i] = g * (*intermediate)[i];
    if (carried) C_out.data()[i] = g * (*carried)[i];
  }
  bounds.add(make_bound(p, oracle.get("out"), {&S_out, &E_out, u_mid, n, &F_out, floor_unit, intermediate ? &M_out : nullptr,
                                               carried ? &C_out : nullptr}));
}

Bounds chunk_scan_bounds(const Problem& p, const InputSet& in, const Outputs& oracle) {
  const Tensor abscb = absolute(in.at("cb")), absx = absolute(in.at("x")), absdt = absolute(in.at("dt"));
  const Tensor absC = absolute(in.at("C")), abs_states = absolute(in.at("states"));
  const std::optional<Tensor> absD = absolute(in.find("D"));
  const Tensor& dA = in.at("dA_cumsum");
  const ChunkScanArgs abs_args{&abscb, &absx, &absdt, &dA, &absC, &abs_states, ptr(absD), nullptr, in.find("seq_idx")};
  ScanShadow s = chunk_scan_shadow(p, abs_args, absolute(dA), nullptr);
  // A rising dA_cumsum can take the chunk-start decay exp(dA[i]) past fp32's range (the states
  // are inputs here, so no chunk total is on any path).
  exempt_overflowing_decays(dA, p.s, false, s.with_skip);
  // Entering states are rounded to C.dtype, the diagonal coefficient to x.dtype. The states come in
  // stored in their own dtype, so that rounding is the conversion between the two (none when the
  // states are already in C's dtype or narrower), not a rounding from f32.
  const DType dC = in.at("C").dtype(), dx = in.at("x").dtype(), dS = in.at("states").dtype();
  // Declared TF32: C and the states (C.dtype), the coefficients and x (x.dtype) rounded once more.
  // Each rounding point acts on its own path: the coefficient and x (the diagonal terms), the states
  // and C (the carried-in terms); D x rounds nothing.
  const double u_diagonal = conversion_roundoff(DType::f32, dx) + 2 * tf32_operand_roundoff(p, dx);
  const double u_carried = conversion_roundoff(dS, dC) + 2 * tf32_operand_roundoff(p, dC);
  const Tensor M = scan_path_charge(s, u_diagonal, u_carried);
  Bounds bounds;
  add_gated_bounds(p, oracle, in.find("z"), s, u_diagonal + u_carried, std::max(p.q, p.n), bounds,
                   std::max(half_subnormal(dC), half_subnormal(dx)), &M);
  return bounds;
}

}  // namespace ssd::tolerance
