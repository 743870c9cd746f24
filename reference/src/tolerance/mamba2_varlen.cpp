// Bounds of a packed Mamba2Fwd batch (+varlen), one sequence at a time: each sequence is the
// problem of a row of its own (its tokens, its initial state if it has one), whose bounds are
// put back where the sequence lies in the packed outputs.
#include <algorithm>
#include <cmath>
#include <limits>

#include "../slices.h"
#include "ops.h"
#include "ssd/reference/helpers.h"
#include "ssd/reference/varlen.h"

namespace ssd::tolerance {

Bounds mamba2_varlen_bounds(const Problem& p, const InputSet& in, const Outputs& oracle) {
  const PackedSequences packed = packed_sequences(p);
  const std::int64_t HP = p.h * p.p, HPN = HP * p.n;
  const Tensor* has = in.find("has_initial_states");
  const Output& out_star = oracle.get("out");
  const Output& varlen_star = oracle.get("varlen_states");

  OutputBound out{"out", filled(out_star.value.shape(), std::numeric_limits<double>::infinity()), {}, 1};
  OutputBound varlen{"varlen_states", Tensor(DType::f64, varlen_star.value.shape()), {}, 1};
  out.exact.assign(static_cast<std::size_t>(out_star.value.numel()), 0);
  varlen.exact.assign(static_cast<std::size_t>(varlen_star.value.numel()), 0);
  std::optional<OutputBound> out_x;
  for (std::int64_t j = 0; j < packed.count(); ++j) {
    const std::int64_t start = packed.start[static_cast<std::size_t>(j)], length = packed.length[static_cast<std::size_t>(j)];
    Problem one = p;
    one.varlen = false;
    one.seq = {};
    one.s = length;
    one.init = p.init && (has == nullptr || (*has)[j] != 0.0);
    InputSet inputs;
    for (const char* role : {"x", "dt", "B", "C", "z"})
      if (const Tensor* t = in.find(role)) inputs.put(role, token_slice(*t, start, length));
    for (const char* role : {"A", "D", "dt_bias"})
      if (const Tensor* t = in.find(role)) inputs.put(role, *t);
    if (one.init) inputs.put("initial_states", row_slice(in.at("initial_states"), j));
    Outputs truth;
    truth.add("out", token_slice(out_star.value, start, length));
    truth.add("final_states", row_slice(varlen_star.value, j));

    // The batch's chunk grid may cut this sequence into one chunk more than its own grid does,
    // and its first chunk's cumsum starts in the tokens before it.
    GridSlack slack;
    slack.leading_charge.assign(static_cast<std::size_t>(p.h), 0.0);
    DtLimit limit;
    if (p.dt_limit) limit = *p.dt_limit;
    const Tensor& raw = in.at("dt");
    const Tensor* bias = in.find("dt_bias");
    const double scale = softplus_charge_scale(p, true);
    for (std::int64_t t = start - start % p.q; t < start; ++t)
      for (std::int64_t h = 0; h < p.h; ++h) {
        const double b = bias ? (*bias)[h] : 0.0;
        const double d = std::fabs(process_dt(raw[t * p.h + h], b, p.softplus, limit));
        slack.leading_charge[static_cast<std::size_t>(h)] += dt_step_charge(p, std::fabs(in.at("A")[h]), raw[t * p.h + h], b, d, scale);
      }
    const Bounds bounds = mamba2_row_bounds(one, inputs, truth, &slack);
    auto put = [&](OutputBound& into, const OutputBound& from, std::int64_t offset) {
      std::copy_n(from.bound.data(), from.bound.numel(), into.bound.data() + offset);
      for (std::int64_t i = 0; i < from.bound.numel(); ++i)
        into.exact[static_cast<std::size_t>(offset + i)] = from.is_exact(i) ? 1 : 0;
      into.reduction_length = std::max(into.reduction_length, from.reduction_length);
    };
    put(out, bounds.get("out"), start * HP);
    put(varlen, bounds.get("final_states"), j * HPN);
  }
  // The state at the end of the row: the last sequence's, or exactly zero after padding.
  OutputBound final_bound{"final_states", Tensor(DType::f64, {1, p.h, p.p, p.n}), {}, varlen.reduction_length};
  if (packed.padding() == 0) {
    std::copy_n(varlen.bound.data() + (packed.count() - 1) * HPN, HPN, final_bound.bound.data());
    final_bound.exact.assign(varlen.exact.end() - HPN, varlen.exact.end());
  } else {
    final_bound.exact.assign(static_cast<std::size_t>(HPN), 1);
  }
  Bounds result;
  result.add(std::move(out));
  result.add(std::move(final_bound));
  result.add(std::move(varlen));
  return result;
}

}  // namespace ssd::tolerance
