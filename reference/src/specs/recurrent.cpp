// OpSpec of SSDRecurrentFwd (selective_state_update, one decode step).
#include "specs.h"

#include "../tolerance/ops.h"
#include "ssd/reference/bind.h"
#include "ssd/reference/decode_plan.h"
#include "ssd/reference/far_slots.h"

namespace ssd {

RecurrentArgs bind_recurrent(const Problem& p, const InputSet& in) {
  RecurrentArgs a;
  a.state = in.find("state");
  a.x = in.find("x");
  a.dt = in.find("dt");
  a.A = in.find("A");
  a.B = in.find("B");
  a.C = in.find("C");
  a.D = in.find("D");
  a.z = in.find("z");
  a.dt_bias = in.find("dt_bias");
  a.state_batch_indices = in.find("state_batch_indices");
  a.dst_state_batch_indices = in.find("dst_state_batch_indices");
  a.num_accepted_tokens = in.find("num_accepted_tokens");
  a.dt_softplus = p.softplus;
  a.disable_state_update = p.nowrite;
  a.intermediate_states = p.inter;
  a.pad_slot_id = p.pad;
  a.tokens = p.tokens;
  a.cu_seqlens = in.find("cu_seqlens");
  return a;
}

namespace specs {
namespace {

// "+tie": A constant along (P, N) and dt, dt_bias constant along P, as Mamba2.step's expanded views.
FillRule tied(FillRule rule, bool tie, std::int64_t inner) {
  rule.tie = tie ? inner : 1;
  return rule;
}

// Rows of a varlen decode call beyond which its lengths are not drawn (invalid_reason refuses them).
constexpr std::int64_t kMaxVarlenRows = std::int64_t{1} << 20;

// The tokens of all rows of a varlen decode call.
std::int64_t packed_tokens(const Problem& p) {
  if (p.b > kMaxVarlenRows) return p.b * std::max<std::int64_t>(p.tokens, 1);
  std::int64_t total = 0;
  for (std::int64_t n : decode_row_lengths(p)) total += n;
  return total;
}

// x-like [Bt,H,P], [Bt,T,H,P] with tokens=, or [tokens,H,P] with +varlen; B-like likewise.
Shape per_token(const Problem& p, std::int64_t inner, std::int64_t last) {
  if (p.varlen) return Shape{packed_tokens(p), inner, last};
  return p.tokens > 0 ? Shape{p.b, p.tokens, inner, last} : Shape{p.b, inner, last};
}
// The slot tables: [Bt], or [Bt,T] with +spec.
Shape slot_table(const Problem& p) { return p.spec ? Shape{p.b, p.tokens} : Shape{p.b}; }
void mark_read_slots(Problem& p, const Tensor& t) {
  p.sbi = true;
  p.spec = t.rank() == 2;
}
void mark_dst(Problem& p, const Tensor&) { p.dst = true; }
void mark_accepted(Problem& p, const Tensor&) { p.accepted = true; }
void mark_inter(Problem& p, const Tensor&) { p.inter = true; }

}  // namespace
OpSpec recurrent() {
  OpSpec s;
  s.op = Op::recurrent;
  s.name = "recurrent";
  s.benchmark_name = "SSDRecurrentFwd";
  s.dims = {'b', 'h', 'p', 'g', 'n'};
  s.zxbcdt = {"z", "x", "B", "C", "dt"};
  s.flags = {"dt_bias", "softplus", "Dhp", "z", "sbi", "tie", "slots", "tokens", "varlen", "rows", "dst", "spec",
             "accepted", "nowrite", "inter", "pad", "farslots"};
  s.primary_dtypes = {DType::f32, DType::f16, DType::bf16};
  s.fills = {"default", "bench", "dt_edge", "A_zero", "underflow", "dt_overflow"};
  s.inputs = {
      {"state", false, DType::f32, true, nullptr,
       [](const Problem& p) { return Shape{p.sbi ? p.slots : p.b, p.h, p.p, p.n}; }, [](const Problem&) { return normal(); }},
      {"x", true, DType::f32, true, nullptr, [](const Problem& p) { return per_token(p, p.h, p.p); },
       [](const Problem&) { return normal(); }},
      {"dt", false, DType::f32, true, nullptr, [](const Problem& p) { return per_token(p, p.h, p.p); },
       [](const Problem& p) {
         return tied(bench(p)                     ? uniform(0, 0.1)
                     : regime(p, "dt_edge")       ? softplus_edges()
                     : regime(p, "dt_overflow")   ? exp_overflow()
                     : p.softplus                 ? uniform(-3, 1)
                                                  : uniform(0, 0.3),
                     p.tie, p.p);
       }},
      {"A", false, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.h, p.p, p.n}; },
       [](const Problem& p) { return tied(bench(p) ? uniform(-1, 0) : decay_rate(p), p.tie, p.p * p.n); }},
      {"B", true, DType::f32, true, nullptr, [](const Problem& p) { return per_token(p, p.g, p.n); },
       [](const Problem&) { return normal(); }},
      {"C", true, DType::f32, true, nullptr, [](const Problem& p) { return per_token(p, p.g, p.n); },
       [](const Problem&) { return normal(); }},
      {"D", false, DType::f32, true, [](const Problem& p) { return p.D != DMode::none; },
       [](const Problem& p) { return Shape{p.h, p.p}; }, [](const Problem&) { return normal(); }},
      {"z", true, DType::f32, true, [](const Problem& p) { return p.z; },
       [](const Problem& p) { return per_token(p, p.h, p.p); }, [](const Problem&) { return normal(); }},
      {"dt_bias", false, DType::f32, true, [](const Problem& p) { return p.dt_bias; },
       [](const Problem& p) { return Shape{p.h, p.p}; },
       [](const Problem& p) { return tied(bench(p) ? uniform(0, 1) : uniform(-0.5, 0.5), p.tie, p.p); }},
      {"state_batch_indices", false, DType::i32, false, [](const Problem& p) { return p.sbi; }, slot_table,
       [](const Problem&) { return FillRule{FillRule::Kind::batch_indices}; }},
      {"dst_state_batch_indices", false, DType::i32, false, [](const Problem& p) { return p.dst; }, slot_table,
       [](const Problem&) { return FillRule{FillRule::Kind::batch_indices}; }},
      {"num_accepted_tokens", false, DType::i32, false, [](const Problem& p) { return p.accepted; },
       [](const Problem& p) { return Shape{p.b}; }, [](const Problem&) { return FillRule{FillRule::Kind::batch_indices}; }},
      {"cu_seqlens", false, DType::i32, false, [](const Problem& p) { return p.varlen; },
       [](const Problem& p) { return Shape{p.b + 1}; }, [](const Problem&) { return FillRule{FillRule::Kind::batch_indices}; }},
  };
  s.outputs = {{"out", [](const Problem& p) { return role_dtype(p, "x"); }, nullptr},
               {"state", [](const Problem& p) { return role_dtype(p, "state"); }, nullptr},
               {"intermediate_states", [](const Problem& p) { return role_dtype(p, "state"); },
                [](const Problem& p) { return p.inter; }}};
  s.invalid_reason = [](const Problem& p) -> std::optional<std::string> {
    if (p.D == DMode::per_head) return "recurrent takes D as [H,P] only (+Dhp)";
    if (!p.sbi && p.slots != 0) return "slots= needs +sbi";
    if (p.spec && p.tokens == 0) return "+spec needs tokens= (a [Bt,T] slot table has a column per token)";
    if (p.spec && !p.sbi) return "+spec needs +sbi (the slot tables)";
    if (p.dst && !p.sbi) return "+dst needs +sbi (write slots apart from the read slots)";
    if (p.accepted && !p.spec) return "+accepted needs +spec (it picks a column of the [Bt,T] table)";
    if (p.inter && p.tokens == 0) return "+inter needs tokens=";
    if (p.varlen && p.tokens == 0) return "+varlen needs tokens= (the most tokens of a row)";
    if (p.varlen && p.b > kMaxVarlenRows) return "+varlen takes at most 2^20 rows";
    if (!p.rows.empty()) {
      if (!p.varlen) return "rows= needs +varlen (it gives the rows' token counts)";
      if (static_cast<std::int64_t>(p.rows.size()) != p.b)
        return "rows= gives " + std::to_string(p.rows.size()) + " row lengths, b = " + std::to_string(p.b);
      std::int64_t total = 0;
      for (std::int64_t n : p.rows) {
        if (n > p.tokens) return "a row length of " + std::to_string(n) + " is more than tokens = " + std::to_string(p.tokens);
        total += n;
      }
      if (total == 0) return "rows= must give the call at least one token";
    }
    if (p.pad != -1 && !p.sbi) return "pad= needs +sbi";
    if (p.sbi && p.slots < decode_slots_needed(p))
      return p.dst || p.spec || p.pad >= 0
                 ? "slots must be at least " + std::to_string(decode_slots_needed(p)) +
                       " (distinct read slots per row and column, as many write slots with +dst, and the padding slot)"
                 : "slots must be at least b with +sbi";
    if (p.pad >= p.slots && p.sbi) return "pad= must be -1 or one of the slots";
    if (auto why = far_slots_reason(p)) return why;
    return std::nullopt;
  };
  s.outputs[0].shape = [](const Problem& p) { return per_token(p, p.h, p.p); };
  s.outputs[1].shape = [](const Problem& p) { return Shape{p.sbi ? p.slots : p.b, p.h, p.p, p.n}; };
  s.outputs[2].shape = [](const Problem& p) { return Shape{p.b, p.tokens, p.h, p.p, p.n}; };
  s.chunked = [](const Problem& p, const InputSet& in) { return recurrent_chunked(bind_recurrent(p, in)); };
  s.sequential = [](const Problem& p, const InputSet& in) { return recurrent_sequential(bind_recurrent(p, in)); };
  s.bounds = tolerance::recurrent_bounds;
  s.abi = make_abi_binding<Op::recurrent, &ssd_kernel_table::recurrent>(offsetof(ssd_recurrent_args, stream));
  s.abi.tensors = {
      {"state", offsetof(ssd_recurrent_args, state)},
      {"x", offsetof(ssd_recurrent_args, x)},
      {"dt", offsetof(ssd_recurrent_args, dt)},
      {"A", offsetof(ssd_recurrent_args, A)},
      {"B", offsetof(ssd_recurrent_args, B)},
      {"C", offsetof(ssd_recurrent_args, C)},
      {"D", offsetof(ssd_recurrent_args, D), abi::mark_D},
      {"z", offsetof(ssd_recurrent_args, z), abi::mark_z},
      {"dt_bias", offsetof(ssd_recurrent_args, dt_bias), abi::mark_dt_bias},
      {"state_batch_indices", offsetof(ssd_recurrent_args, state_batch_indices), mark_read_slots},
      {"out", offsetof(ssd_recurrent_args, out)},
      {"dst_state_batch_indices", offsetof(ssd_recurrent_args, dst_state_batch_indices), mark_dst, 4},
      {"num_accepted_tokens", offsetof(ssd_recurrent_args, num_accepted_tokens), mark_accepted, 4},
      {"intermediate_states", offsetof(ssd_recurrent_args, intermediate_states), mark_inter, 4},
      {"cu_seqlens", offsetof(ssd_recurrent_args, cu_seqlens), abi::mark_varlen, 4}};
  s.abi.scalars = {abi::dt_softplus(offsetof(ssd_recurrent_args, dt_softplus))};
  {
    using T = AbiScalarField::Type;
    AbiScalarField tokens{"tokens", offsetof(ssd_recurrent_args, tokens), T::i64,
                          [](const Problem& p) { return static_cast<double>(p.tokens); },
                          [](Problem& p, double v) { p.tokens = static_cast<std::int64_t>(v); }, 4};
    AbiScalarField pad{"pad_slot_id", offsetof(ssd_recurrent_args, pad_slot_id), T::i64,
                       [](const Problem& p) { return static_cast<double>(p.pad); },
                       [](Problem& p, double v) { p.pad = static_cast<std::int64_t>(v); }, 4};
    AbiScalarField nowrite{"disable_state_update", offsetof(ssd_recurrent_args, disable_state_update), T::i32,
                           [](const Problem& p) { return p.nowrite ? 1.0 : 0.0; },
                           [](Problem& p, double v) { p.nowrite = v != 0; }, 4};
    s.abi.scalars.push_back(tokens);
    s.abi.scalars.push_back(pad);
    s.abi.scalars.push_back(nowrite);
  }
  // Counted from the end, so the one-token and the multi-token layouts read alike; T from `tokens`.
  s.abi.sizes = {{"b", "cu_seqlens", 0, false, {}, true}, {"b", "x", 0}, {"h", "x", -2}, {"p", "x", -1},
                 {"g", "B", -2}, {"n", "B", -1}, {"slots", "state", 0, false, "state_batch_indices"}};
  s.smoke = [] {
    return parse_all({
        "recurrent:f32 b2 h2 p4 g1 n4 seed=1",
        "recurrent:f32 b2 h4 p4 g2 n8 +dt_bias +softplus +Dhp +z +tie layout=zxbcdt seed=9",
        "recurrent:f16 b3 h4 p8 g2 n8 +dt_bias +softplus +Dhp +z seed=2",
        "recurrent:bf16 b4 h4 p8 g4 n8 +dt_bias +softplus +Dhp +sbi slots=9 seed=3",
        "recurrent:f32 b2 h4 p4 g2 n8 +dt_bias +softplus +Dhp +tie seed=4",
        "recurrent:bf16 b1 h2 p4 g1 n4 +z state=bf16 seed=5",
        "recurrent:f16 b8 h2 p4 g1 n4 +softplus +sbi slots=8 seed=6",
        // The serving decode step: T tokens per row, write slots, speculative decoding, a null block.
        "recurrent:f32 b2 h2 p4 g1 n4 +softplus +inter tokens=3 state=bf16 seed=7",
        "recurrent:f32 b3 h2 p4 g1 n4 +dt_bias +softplus +sbi slots=4 tokens=3 seed=8",
        "recurrent:bf16 b4 h2 p4 g2 n8 +softplus +Dhp +sbi +dst slots=9 tokens=2 state=bf16 seed=9",
        "recurrent:f16 b3 h2 p4 g1 n4 +softplus +sbi +dst +spec +accepted +inter slots=20 tokens=3 pad=0 seed=18",
        "recurrent:f32 b2 h2 p4 g1 n4 +softplus +z +sbi +spec +accepted slots=8 tokens=4 seed=11",
        "recurrent:bf16 b2 h4 p4 g2 n4 +dt_bias +softplus +sbi +nowrite +inter slots=4 tokens=2 seed=12",
        "recurrent:f32 b4 h2 p4 g1 n4 +softplus +z +sbi +dst +inter +varlen slots=9 tokens=3 state=bf16 seed=13",
        // Slot ids whose element offset passes 2^32 (vLLM #35275): a state buffer of 16 GiB, a few KiB of it touched.
        "recurrent:f32 b2 h2 p2 g1 n4 +softplus +sbi +farslots slots=3 seed=1",
    });
  };
  s.workloads = [] {
    return parse_all({
        "recurrent:f16 b1 h64 p64 g1 n128 +dt_bias +Dhp fill=bench seed=0",
        "recurrent:bf16 b1 h64 p64 g1 n128 +dt_bias +Dhp fill=bench seed=0",
        "recurrent:f16 b8 h80 p64 g1 n128 +dt_bias +Dhp fill=bench seed=0",
        "recurrent:f16 b32 h48 p64 g1 n128 +dt_bias +Dhp fill=bench seed=0",
    });
  };
  return s;
}

}  // namespace specs
}  // namespace ssd
