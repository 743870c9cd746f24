// Properties of the serving decode step (recurrent with tokens=, write slots, per-token tables):
// a row of T tokens is T one-token steps chained through an unrounded state, and a row gives the
// same outputs alone as packed between other rows. The slot rules are re-derived here from the
// contract's text (docs/contract.md §8.1), apart from the oracle's decode plan.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "ssd/fuzz/generators.h"
#include "ssd/reference/bind.h"
#include "ssd/reference/op_spec.h"
#include "support.h"

namespace ssd_test {
namespace {

using ssd::Outputs;
using ssd::Problem;
using ssd::RecurrentArgs;
using ssd::Shape;
using ssd::Tensor;

Problem gen_multi_token_problem() {
  const Problem p = *ssd::gen_problem(ssd::Op::recurrent);
  RC_PRE(p.tokens > 0);
  return p;
}

// Token t of every row of an x-like tensor ([Bt,T,...], or packed [tokens,...] with rows starting
// at first[b] and `length[b]` long) as the one-token [Bt,...] tensor; zeros where a row has no token t.
Tensor token_of(const Tensor& t, std::int64_t token, const std::vector<std::int64_t>& first,
                const std::vector<std::int64_t>& length) {
  const std::int64_t rows = static_cast<std::int64_t>(first.size());
  const std::int64_t inner = t.dim(t.rank() - 2) * t.dim(t.rank() - 1);
  Tensor one(t.dtype(), {rows, t.dim(t.rank() - 2), t.dim(t.rank() - 1)});
  for (std::int64_t b = 0; b < rows; ++b)
    if (token < length[static_cast<std::size_t>(b)])
      for (std::int64_t i = 0; i < inner; ++i)
        one.data()[b * inner + i] = t[(first[static_cast<std::size_t>(b)] + token) * inner + i];
  return one;
}

std::int64_t entry(const Tensor& table, std::int64_t b, std::int64_t column) {
  return static_cast<std::int64_t>(table.rank() == 2 ? table.at({b, column}) : table.at({b}));
}

RC_GTEST_PROP(Decode, MultiTokenRowIsChainedSteps, ()) {
  const Problem p = gen_multi_token_problem();
  RC_CLASSIFY(p.spec, "per-token tables");
  RC_CLASSIFY(p.accepted, "num_accepted_tokens");
  RC_CLASSIFY(p.dst, "write slots");
  RC_CLASSIFY(p.pad >= 0, "padding id is a slot");
  RC_CLASSIFY(p.varlen, "varlen rows");
  const ssd::InputSet in = ssd::make_inputs(p);
  const RecurrentArgs whole = ssd::bind_recurrent(p, in);
  const Outputs got = ssd::recurrent_chunked(whole);
  const std::int64_t T = p.tokens, H = p.h, P = p.p, N = p.n;

  // The rows' starting states, by the contract: column max(accepted - 1, 0) of the read table.
  const Tensor& state = in.at("state");
  Tensor carry(ssd::DType::f64, {p.b, H, P, N});
  std::vector<bool> padding(static_cast<std::size_t>(p.b), false);
  for (std::int64_t b = 0; b < p.b; ++b) {
    std::int64_t read = b;
    if (whole.state_batch_indices) {
      const std::int64_t column =
          whole.num_accepted_tokens ? std::max<std::int64_t>(static_cast<std::int64_t>(whole.num_accepted_tokens->at({b})) - 1, 0)
                                    : 0;
      read = entry(*whole.state_batch_indices, b, column);
    }
    padding[static_cast<std::size_t>(b)] = read < 0 || read == p.pad;
    if (padding[static_cast<std::size_t>(b)]) continue;
    for (std::int64_t i = 0; i < H * P * N; ++i) carry.data()[b * H * P * N + i] = state[read * H * P * N + i];
  }
  // Where each row's tokens lie: b*T, or cu_seqlens in a varlen call.
  std::vector<std::int64_t> first(static_cast<std::size_t>(p.b)), length(static_cast<std::size_t>(p.b), T);
  for (std::int64_t b = 0; b < p.b; ++b) {
    first[static_cast<std::size_t>(b)] = p.varlen ? static_cast<std::int64_t>(whole.cu_seqlens->at({b})) : b * T;
    if (p.varlen)
      length[static_cast<std::size_t>(b)] = static_cast<std::int64_t>(whole.cu_seqlens->at({b + 1})) - first[static_cast<std::size_t>(b)];
  }
  // T one-token calls on the carried rows (no slot tables: row b is slot b), stored by hand.
  Tensor want_state = state;
  for (std::int64_t t = 0; t < T; ++t) {
    const Tensor x = token_of(*whole.x, t, first, length), dt = token_of(*whole.dt, t, first, length),
                 B = token_of(*whole.B, t, first, length), C = token_of(*whole.C, t, first, length);
    const Tensor z = whole.z ? token_of(*whole.z, t, first, length) : Tensor(ssd::DType::f64, {0});
    RecurrentArgs step{.state = &carry, .x = &x, .dt = &dt, .A = whole.A, .B = &B, .C = &C, .D = whole.D,
                       .z = whole.z ? &z : nullptr, .dt_bias = whole.dt_bias, .dt_softplus = whole.dt_softplus};
    const Outputs one = ssd::recurrent_sequential(step);
    const Tensor& next = one.get("state").value;
    for (std::int64_t b = 0; b < p.b; ++b) {
      if (padding[static_cast<std::size_t>(b)] || t >= length[static_cast<std::size_t>(b)]) continue;
      for (std::int64_t i = 0; i < H * P; ++i) {
        const double want = one.get("out").value[b * H * P + i],
                     have = got.get("out").value[(first[static_cast<std::size_t>(b)] + t) * H * P + i];
        RC_ASSERT(std::fabs(have - want) <= 1e-12 * (1.0 + std::fabs(want)));
      }
      if (p.inter)
        for (std::int64_t i = 0; i < H * P * N; ++i) {
          const double want = next[b * H * P * N + i], have = got.get("intermediate_states").value[(b * T + t) * H * P * N + i];
          RC_ASSERT(std::fabs(have - want) <= 1e-12 * (1.0 + std::fabs(want)));
        }
      // Where the state after token t is stored: column t of a per-token table, else the last token only.
      std::int64_t slot = -1;
      const Tensor* writes = whole.dst_state_batch_indices ? whole.dst_state_batch_indices : whole.state_batch_indices;
      if (p.spec) slot = entry(*writes, b, t);
      else if (t == length[static_cast<std::size_t>(b)] - 1) slot = writes ? entry(*writes, b, 0) : b;
      if (p.nowrite || slot < 0 || slot == p.pad) continue;
      for (std::int64_t i = 0; i < H * P * N; ++i) want_state.data()[slot * H * P * N + i] = next[b * H * P * N + i];
    }
    // A row whose tokens ran out keeps its state (the one-token call above stepped it on zeros).
    for (std::int64_t b = 0; b < p.b; ++b)
      if (t < length[static_cast<std::size_t>(b)])
        for (std::int64_t i = 0; i < H * P * N; ++i) carry.data()[b * H * P * N + i] = next[b * H * P * N + i];
  }
  const Tensor& have_state = got.get("state").value;
  for (std::int64_t i = 0; i < have_state.numel(); ++i)
    RC_ASSERT(std::fabs(have_state[i] - want_state[i]) <= 1e-12 * (1.0 + std::fabs(want_state[i])));
}

RC_GTEST_PROP(Decode, RowAloneEqualsRowInTheBatch, ()) {
  const Problem p = *ssd::gen_problem(ssd::Op::recurrent);
  RC_PRE(p.b > 1 && !p.varlen);  // (a packed call's rows are not slices along axis 0)
  const ssd::InputSet in = ssd::make_inputs(p);
  const RecurrentArgs whole = ssd::bind_recurrent(p, in);
  const Outputs batch = ssd::recurrent_chunked(whole);
  const std::int64_t b = *rc::gen::inRange<std::int64_t>(0, p.b);
  // Row b alone: its slices of every per-row tensor, the same state buffer and padding id.
  auto row = [&](const Tensor* t) { return t ? t->row(b) : Tensor(ssd::DType::f64, {0}); };
  const Tensor x = row(whole.x), dt = row(whole.dt), B = row(whole.B), C = row(whole.C), z = row(whole.z),
               read = row(whole.state_batch_indices), write = row(whole.dst_state_batch_indices),
               accepted = row(whole.num_accepted_tokens);
  RecurrentArgs alone = whole;
  alone.x = &x, alone.dt = &dt, alone.B = &B, alone.C = &C;
  if (whole.z) alone.z = &z;
  if (whole.state_batch_indices) alone.state_batch_indices = &read;
  if (whole.dst_state_batch_indices) alone.dst_state_batch_indices = &write;
  if (whole.num_accepted_tokens) alone.num_accepted_tokens = &accepted;
  // Without slot tables row b is slot b: a one-row call has one slot, so give it row b's.
  Tensor own_state(ssd::DType::f64, {0});
  if (!whole.state_batch_indices) {
    own_state = row(whole.state);
    alone.state = &own_state;
  }
  const Outputs single = ssd::recurrent_chunked(alone);
  const ssd::Output& out_batch = batch.get("out");
  const ssd::Output& out_single = single.get("out");
  const std::int64_t per_row = out_single.value.numel();
  for (std::int64_t i = 0; i < per_row; ++i) {
    RC_ASSERT(out_single.is_defined(i) == out_batch.is_defined(b * per_row + i));
    if (out_single.is_defined(i)) RC_ASSERT(out_single.value[i] == out_batch.value[b * per_row + i]);
  }
  // Every slot the row stored holds the same value in both; the row alone stores nothing else.
  const Tensor& s_batch = batch.get("state").value;
  const Tensor& s_single = single.get("state").value;
  if (!whole.state_batch_indices) {
    for (std::int64_t i = 0; i < s_single.numel(); ++i) RC_ASSERT(s_single[i] == s_batch[b * s_single.numel() + i]);
    return;
  }
  const Tensor& input = in.at("state");
  for (std::int64_t i = 0; i < s_single.numel(); ++i)
    if (s_single[i] != input[i]) RC_ASSERT(s_single[i] == s_batch[i]);
}

}  // namespace
}  // namespace ssd_test
