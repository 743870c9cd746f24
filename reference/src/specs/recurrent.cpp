// OpSpec of SSDRecurrentFwd (selective_state_update, one decode step).
#include "specs.h"

#include "../tolerance/ops.h"
#include "ssd/reference/bind.h"

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
  a.dt_softplus = p.softplus;
  return a;
}

namespace specs {
namespace {

// "+tie": A constant along (P, N) and dt, dt_bias constant along P, as Mamba2.step's expanded views.
FillRule tied(FillRule rule, bool tie, std::int64_t inner) {
  rule.tie = tie ? inner : 1;
  return rule;
}

}  // namespace
OpSpec recurrent() {
  OpSpec s;
  s.op = Op::recurrent;
  s.name = "recurrent";
  s.benchmark_name = "SSDRecurrentFwd";
  s.dims = {'b', 'h', 'p', 'g', 'n'};
  s.flags = {"dt_bias", "softplus", "Dhp", "z", "sbi", "tie", "slots"};
  s.primary_dtypes = {DType::f32, DType::f16, DType::bf16};
  s.fills = {"default", "bench", "dt_edge", "A_zero", "underflow", "dt_overflow"};
  s.inputs = {
      {"state", false, DType::f32, true, nullptr,
       [](const Problem& p) { return Shape{p.sbi ? p.slots : p.b, p.h, p.p, p.n}; }, [](const Problem&) { return normal(); }},
      {"x", true, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.b, p.h, p.p}; },
       [](const Problem&) { return normal(); }},
      {"dt", false, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.b, p.h, p.p}; },
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
      {"B", true, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.b, p.g, p.n}; },
       [](const Problem&) { return normal(); }},
      {"C", true, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.b, p.g, p.n}; },
       [](const Problem&) { return normal(); }},
      {"D", false, DType::f32, true, [](const Problem& p) { return p.D != DMode::none; },
       [](const Problem& p) { return Shape{p.h, p.p}; }, [](const Problem&) { return normal(); }},
      {"z", true, DType::f32, true, [](const Problem& p) { return p.z; },
       [](const Problem& p) { return Shape{p.b, p.h, p.p}; }, [](const Problem&) { return normal(); }},
      {"dt_bias", false, DType::f32, true, [](const Problem& p) { return p.dt_bias; },
       [](const Problem& p) { return Shape{p.h, p.p}; },
       [](const Problem& p) { return tied(bench(p) ? uniform(0, 1) : uniform(-0.5, 0.5), p.tie, p.p); }},
      {"state_batch_indices", false, DType::i32, false, [](const Problem& p) { return p.sbi; },
       [](const Problem& p) { return Shape{p.b}; }, [](const Problem&) { return FillRule{FillRule::Kind::batch_indices}; }},
  };
  s.outputs = {{"out", [](const Problem& p) { return role_dtype(p, "x"); }, nullptr},
               {"state", [](const Problem& p) { return role_dtype(p, "state"); }, nullptr}};
  s.invalid_reason = [](const Problem& p) -> std::optional<std::string> {
    if (p.D == DMode::per_head) return "recurrent takes D as [H,P] only (+Dhp)";
    if (p.sbi && p.slots < p.b) return "slots must be at least b with +sbi";
    if (!p.sbi && p.slots != 0) return "slots= needs +sbi";
    return std::nullopt;
  };
  s.outputs[0].shape = [](const Problem& p) { return Shape{p.b, p.h, p.p}; };
  s.outputs[1].shape = [](const Problem& p) { return Shape{p.sbi ? p.slots : p.b, p.h, p.p, p.n}; };
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
      {"state_batch_indices", offsetof(ssd_recurrent_args, state_batch_indices), abi::mark_sbi},
      {"out", offsetof(ssd_recurrent_args, out)}};
  s.abi.scalars = {abi::dt_softplus(offsetof(ssd_recurrent_args, dt_softplus))};
  s.abi.sizes = {{"b", "x", 0}, {"h", "x", 1}, {"p", "x", 2}, {"g", "B", 1}, {"n", "B", 2}, {"slots", "state", 0, false, "state_batch_indices"}};
  s.smoke = [] {
    return parse_all({
        "recurrent:f32 b2 h2 p4 g1 n4 seed=1",
        "recurrent:f16 b3 h4 p8 g2 n8 +dt_bias +softplus +Dhp +z seed=2",
        "recurrent:bf16 b4 h4 p8 g4 n8 +dt_bias +softplus +Dhp +sbi slots=9 seed=3",
        "recurrent:f32 b2 h4 p4 g2 n8 +dt_bias +softplus +Dhp +tie seed=4",
        "recurrent:bf16 b1 h2 p4 g1 n4 +z state=bf16 seed=5",
        "recurrent:f16 b8 h2 p4 g1 n4 +softplus +sbi slots=8 seed=6",
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
