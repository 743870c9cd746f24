// SSDRecurrentFwd in fp32 (selective_state_update, as serving engines call it): per row, the
// state read from its slot (the column num_accepted_tokens picks in a [Bt,T] table), then per
// token dt' = softplus(dt + bias) (no clamp), h = h * exp(A * dt') + (B * dt') * x carried in fp32,
// `out` from that unrounded h: sum_n h * C + x * D, times z * sigmoid(z); the state stored, rounded
// to its dtype, after the last token (or after every token to its column's write slot).
#include <algorithm>

#include "emu.h"
#include "ssd/reference/bind.h"

namespace ssd::emu {
namespace {

// Where a row reads and stores, resolved the way a kernel does it (apart from the oracle's plan,
// so that the calibration checks one against the other). -1: no slot.
struct RowSlots {
  std::int64_t read = -1;
  std::vector<std::int64_t> store;  // per token
};

RowSlots row_slots(const RecurrentArgs& a, const OpDims& d, std::int64_t b, std::int64_t length, const Ctx& ctx) {
  const std::int64_t T = std::max<std::int64_t>(d.tokens, 1);
  const Tensor* reads = a.state_batch_indices;
  const bool per_token = reads && reads->rank() == 2;
  const std::int64_t columns = per_token ? T : 1;
  auto is_pad = [&](std::int64_t slot) { return slot < 0 || slot == a.pad_slot_id; };
  auto wrap = [&](std::int64_t slot) { return (slot % d.slots + d.slots) % d.slots; };  // Python's state[slot]
  RowSlots s;
  s.store.assign(static_cast<std::size_t>(T), -1);
  if (!reads) {
    s.read = b;
  } else {
    std::int64_t flat = b * columns;
    if (a.num_accepted_tokens) {
      const auto accepted = static_cast<std::int64_t>((*a.num_accepted_tokens)[b]);
      // accepted_index_unbounded: the column accepted - 1 unclamped, so 0 accepted tokens reads
      // the entry before the row (vLLM #50021's unbounded init_token_idx).
      if (ctx.has(Flaw::accepted_index_unbounded)) flat = std::max<std::int64_t>(flat + accepted - 1, 0);
      else flat += std::max<std::int64_t>(accepted - 1, 0);
    }
    s.read = static_cast<std::int64_t>((*reads)[flat]);
  }
  const bool padding = reads && is_pad(s.read);
  if (padding) {
    if (ctx.has(Flaw::padding_row_updates)) s.read = 0;         // a padding row updates slot 0
    else if (ctx.has(Flaw::pad_slot_wraps)) s.read = wrap(s.read);  // mamba #792, FlashInfer #2865
    else return {-1, s.store};
  }
  if (a.disable_state_update) return s;
  const Tensor* writes = a.dst_state_batch_indices && !ctx.has(Flaw::dst_ignored) ? a.dst_state_batch_indices : reads;
  // The last token only, or every token with [Bt,T] tables; a row without tokens stores nothing.
  for (std::int64_t t = per_token ? 0 : std::max<std::int64_t>(length - 1, 0); t < length; ++t) {
    std::int64_t slot = per_token ? static_cast<std::int64_t>((*writes)[b * columns + t])
                        : writes && writes != reads ? static_cast<std::int64_t>((*writes)[b])
                                                    : s.read;
    if (padding) slot = ctx.has(Flaw::padding_row_updates) ? 0 : wrap(slot);
    else if (is_pad(slot)) slot = ctx.has(Flaw::pad_token_stored) ? wrap(slot) : -1;  // a skipped store
    s.store[static_cast<std::size_t>(t)] = slot;
  }
  return s;
}

}  // namespace

Outputs recurrent(const Problem& p, const InputSet& in, const Ctx& ctx) {
  const RecurrentArgs a = bind_recurrent(p, in);
  const OpDims d = validate(a);
  const std::int64_t H = d.heads, P = d.headdim, G = d.groups, N = d.dstate, T = std::max<std::int64_t>(d.tokens, 1);

  const std::vector<float> state_in = ctx.load(*a.state), x = ctx.load(*a.x), dt = ctx.load(*a.dt),
                           A = ctx.load(*a.A), B = ctx.load(*a.B), C = ctx.load(*a.C), D = ctx.load(a.D),
                           z = ctx.load(a.z), bias = ctx.load(a.dt_bias);
  // b_c_swapped: C drives the update and B reads the output.
  const float* Bsrc = ctx.has(Flaw::b_c_swapped) ? C.data() : B.data();
  const float* Csrc = ctx.has(Flaw::b_c_swapped) ? B.data() : C.data();
  const DType state_dtype = output_dtype(p, "state");

  // The whole state tensor after the call; slots nobody stores keep their input values.
  Tensor state(state_dtype, a.state->shape(), a.state->values());
  std::vector<float> out(static_cast<std::size_t>(a.x->numel()), 0.0f);
  std::vector<float> inter(a.intermediate_states ? static_cast<std::size_t>(d.batch * T * H * P * N) : 0, 0.0f);
  std::vector<float> h_new(static_cast<std::size_t>(N));
  // Serial over rows, each reading the input state: deterministic even when a planted flaw makes
  // two rows store one slot (the later row wins).
  for (std::int64_t b = 0; b < d.batch; ++b) {
    // Where the row's tokens lie: b*T, or from cu_seqlens[b] in a varlen call.
    const std::int64_t first = a.cu_seqlens ? static_cast<std::int64_t>((*a.cu_seqlens)[b]) : b * T;
    const std::int64_t length = a.cu_seqlens ? static_cast<std::int64_t>((*a.cu_seqlens)[b + 1]) - first : T;
    const RowSlots slots = row_slots(a, d, b, length, ctx);
    if (slots.read < 0) continue;  // padding: state untouched, outputs "don't care"
    for (std::int64_t h = 0; h < H; ++h) {
      const std::int64_t g = ctx.group(d, h);
      for (std::int64_t pp = 0; pp < P; ++pp) {
        const std::int64_t hp = h * P + pp;
        for (std::int64_t n = 0; n < N; ++n)
          h_new[static_cast<std::size_t>(n)] = state_in[static_cast<std::size_t>(((slots.read * H + h) * P + pp) * N + n)];
        for (std::int64_t t = 0; t < length; ++t) {
          const std::int64_t token = (first + t) * H + h, i = token * P + pp, grid = ((b * T + t) * H + h) * P + pp;
          const float* Bv = Bsrc + ((first + t) * G + g) * N;
          const float* Cv = Csrc + ((first + t) * G + g) * N;
          const float dtp = process_dt(ctx, dt[static_cast<std::size_t>(i)],
                                       a.dt_bias ? bias.data() + hp : nullptr, a.dt_softplus, false, 0.0f, 0.0f);
          const float xv = x[static_cast<std::size_t>(i)];
          const std::int64_t store = slots.store[static_cast<std::size_t>(t)];
          for (std::int64_t n = 0; n < N; ++n) {
            const float dA = ctx.exp(ctx.mul(A[static_cast<std::size_t>(hp * N + n)], dtp));
            const float dB = ctx.mul(Bv[n], dtp);
            float v = ctx.add(ctx.mul(h_new[static_cast<std::size_t>(n)], dA), ctx.mul(dB, xv));
            // state_rounded_each_token: the carried state rounded to its storage dtype after every
            // token, where the contract keeps it in fp32 until it is stored (mlx-lm #988, vLLM #13466).
            if (ctx.has(Flaw::state_rounded_each_token)) v = round_float(state_dtype, v);
            h_new[static_cast<std::size_t>(n)] = v;
            if (a.intermediate_states) inter[static_cast<std::size_t>(grid * N + n)] = v;
            if (store >= 0) {
              const float stored = ctx.has(Flaw::states_rounded_bf16) ? round_float(DType::bf16, v) : v;
              state.set(((store * H + h) * P + pp) * N + n, static_cast<double>(stored));
            }
          }
          // shape_dependent_sum: a kernel that picks its reduction by the call's shape (right to left
          // for more than one row or token per row): within every bound, but a row's out then
          // depends on its batch, and a token's on how many tokens follow it.
          const bool reversed = ctx.has(Flaw::shape_dependent_sum) && (d.batch > 1 || d.tokens > 1);
          float y = ctx.sum(N, [&](std::int64_t n) {
            const std::int64_t k = reversed ? N - 1 - n : n;
            return ctx.mul(h_new[static_cast<std::size_t>(k)], Cv[k]);
          });
          if (a.D) y = ctx.add(y, ctx.mul(xv, D[static_cast<std::size_t>(hp)]));
          if (a.z) y = ctx.gate(y, z[static_cast<std::size_t>(i)]);
          out[static_cast<std::size_t>(i)] = y;
        }
      }
    }
  }
  Outputs result;
  result.add("out", to_tensor(output_dtype(p, "out"), a.x->shape(), out));
  result.add("state", std::move(state));
  if (a.intermediate_states)
    result.add("intermediate_states", to_tensor(output_dtype(p, "intermediate_states"), {d.batch, T, H, P, N}, inter));
  return result;
}

}  // namespace ssd::emu
