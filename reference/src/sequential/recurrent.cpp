// Sequential oracle of SSDRecurrentFwd: selective_state_update token by token, element by element
// (rows of T tokens, or of cu_seqlens[b+1] - cu_seqlens[b] tokens in a varlen call).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ssd/reference/decode_plan.h"
#include "ssd/reference/helpers.h"
#include "ssd/reference/oracle.h"
#include "ssd/reference/validate.h"

namespace ssd {

Outputs recurrent_sequential(const RecurrentArgs& args) {
  const OpDims d = validate(args);  // throws on any bad argument; the shapes read below are then consistent
  const DecodePlan plan = decode_plan(args, d);
  const Tensor& state = *args.state;
  const Tensor& x = *args.x;
  const std::int64_t Bt = d.batch, T = plan.tokens, H = d.heads, P = d.headdim, G = d.groups, N = d.dstate;
  const bool packed = args.cu_seqlens != nullptr;
  const bool multi = d.tokens > 0 && !packed;
  const std::int64_t heads_per_group = H / G;
  // Token t of row b in x-like and B-like tensors: [Bt,H,P], [Bt,T,H,P], or in a varlen call
  // [tokens,H,P] from the row's start cu_seqlens[b].
  auto offset = [&](const Tensor& t, std::int64_t b, std::int64_t tok, std::int64_t i, std::int64_t j) {
    if (packed) return t.offset({static_cast<std::int64_t>(args.cu_seqlens->at({b})) + tok, i, j});
    return multi ? t.offset({b, tok, i, j}) : t.offset({b, i, j});
  };
  auto xi = [&](const Tensor& t, std::int64_t b, std::int64_t tok, std::int64_t h, std::int64_t p) {
    return t[offset(t, b, tok, h, p)];
  };
  auto bi = [&](const Tensor& t, std::int64_t b, std::int64_t tok, std::int64_t g, std::int64_t n) {
    return t[offset(t, b, tok, g, n)];
  };

  Tensor out(DType::f64, x.shape());
  std::vector<std::uint8_t> out_defined(static_cast<std::size_t>(out.numel()), 0);
  Tensor new_state(DType::f64, state.shape(), state.values());  // slots nobody stores keep their input
  Tensor inter(DType::f64, args.intermediate_states ? Shape{Bt, T, H, P, N} : Shape{0});
  std::vector<std::uint8_t> inter_defined(static_cast<std::size_t>(inter.numel()), 0);
  std::vector<double> h(static_cast<std::size_t>(N));
  for (std::int64_t b = 0; b < Bt; ++b) {
    const DecodeRow& row = plan.rows[static_cast<std::size_t>(b)];
    if (row.padding()) continue;  // nothing stored; its outputs stay undefined
    for (std::int64_t hd = 0; hd < H; ++hd) {
      const std::int64_t g = hd / heads_per_group;
      for (std::int64_t p = 0; p < P; ++p) {
        for (std::int64_t n = 0; n < N; ++n) h[static_cast<std::size_t>(n)] = state.at({row.read, hd, p, n});
        const std::int64_t length =
            packed ? static_cast<std::int64_t>(args.cu_seqlens->at({b + 1}) - args.cu_seqlens->at({b})) : T;
        for (std::int64_t t = 0; t < length; ++t) {
          // The decode path has no dt_limit clamp (Mamba2.step never clamps).
          double dtp = xi(*args.dt, b, t, hd, p) + (args.dt_bias != nullptr ? args.dt_bias->at({hd, p}) : 0.0);
          if (args.dt_softplus) dtp = softplus_thr20(dtp);
          const double xv = xi(x, b, t, hd, p);
          double y = 0.0;
          for (std::int64_t n = 0; n < N; ++n) {
            double& hn = h[static_cast<std::size_t>(n)];
            hn = hn * std::exp(args.A->at({hd, p, n}) * dtp) + dtp * bi(*args.B, b, t, g, n) * xv;
            y += hn * bi(*args.C, b, t, g, n);
            if (args.intermediate_states) {
              const std::int64_t at = inter.offset({b, t, hd, p, n});
              inter.data()[at] = hn;
              inter_defined[static_cast<std::size_t>(at)] = 1;
            }
            if (const std::int64_t w = row.writes[static_cast<std::size_t>(t)]; w >= 0)
              new_state.data()[new_state.offset({w, hd, p, n})] = hn;
          }
          if (args.D != nullptr) y += args.D->at({hd, p}) * xv;
          if (args.z != nullptr) {
            const double zv = xi(*args.z, b, t, hd, p);
            y *= zv / (1.0 + std::exp(-zv));
          }
          const std::int64_t at = offset(out, b, t, hd, p);
          out.data()[at] = y;
          out_defined[static_cast<std::size_t>(at)] = 1;
        }
      }
    }
  }

  // Only padding rows stay undefined; with none, the mask is empty (every element defined).
  auto all_set = [](const std::vector<std::uint8_t>& m) { return std::find(m.begin(), m.end(), 0) == m.end(); };
  if (all_set(out_defined)) out_defined.clear();
  if (all_set(inter_defined)) inter_defined.clear();
  Outputs result;
  result.add("out", std::move(out), std::move(out_defined));
  result.add("state", std::move(new_state));
  if (args.intermediate_states) result.add("intermediate_states", std::move(inter), std::move(inter_defined));
  return result;
}

}  // namespace ssd
