// OpSpec of MambaDiscretizeSegsum (SOL-ExecBench L2/044).
#include "specs.h"

#include "../tolerance/ops.h"
#include "ssd/reference/bind.h"

namespace ssd {

DiscretizeSegsumArgs bind_discretize_segsum(const Problem&, const InputSet& in) {
  DiscretizeSegsumArgs a;
  a.hidden_states = in.find("hidden_states");
  a.dt = in.find("dt");
  a.A_log = in.find("A_log");
  a.B = in.find("B");
  a.C = in.find("C");
  return a;
}

namespace specs {
OpSpec discretize_segsum() {
  OpSpec s;
  s.op = Op::discretize_segsum;
  s.name = "discretize_segsum";
  s.benchmark_name = "MambaDiscretizeSegsum";
  s.whole_chunks = true;
  s.dims = {'b', 's', 'q', 'h', 'p', 'g', 'n'};
  s.flags = {};
  s.primary_dtypes = {DType::bf16, DType::f16, DType::f32};
  // default: SOL-ExecBench's generator (A_log U(-5,-1), the rest N(0,1)); dt_edge: softplus's corners;
  // dt_overflow: dt where fp32 exp overflows.
  s.fills = {"default", "dt_edge", "dt_overflow"};
  s.inputs = {
      {"hidden_states", true, DType::bf16, true, nullptr,
       [](const Problem& p) { return Shape{p.b, chunks_of(p), p.q, p.h, p.p}; }, [](const Problem&) { return normal(); }},
      {"dt", true, DType::bf16, true, nullptr, [](const Problem& p) { return Shape{p.b, chunks_of(p), p.q, p.h}; },
       [](const Problem& p) {
         return regime(p, "dt_edge") ? softplus_edges() : regime(p, "dt_overflow") ? exp_overflow() : normal();
       }},
      {"A_log", true, DType::bf16, true, nullptr, [](const Problem& p) { return Shape{p.h}; },
       [](const Problem&) { return uniform(-5, -1); }},
      {"B", true, DType::bf16, true, nullptr, [](const Problem& p) { return Shape{p.b, chunks_of(p), p.q, p.g, p.n}; },
       [](const Problem&) { return normal(); }},
      {"C", true, DType::bf16, true, nullptr, [](const Problem& p) { return Shape{p.b, chunks_of(p), p.q, p.g, p.n}; },
       [](const Problem&) { return normal(); }},
  };
  auto bf16 = [](const Problem&) { return DType::bf16; };
  auto f32 = [](const Problem&) { return DType::f32; };
  s.outputs = {{"L", bf16, nullptr}, {"G", bf16, nullptr}, {"M", bf16, nullptr},
               {"A_cumsum", f32, nullptr}, {"decay_states", f32, nullptr}};
  s.outputs[0].shape = [](const Problem& p) { return Shape{p.b, p.h, chunks_of(p), p.q, p.q}; };
  s.outputs[1].shape = [](const Problem& p) { return Shape{p.b, chunks_of(p), p.q, p.q, p.h}; };
  s.outputs[2].shape = [](const Problem& p) { return Shape{p.b, chunks_of(p), p.q, p.q, p.h}; };
  s.outputs[3].shape = [](const Problem& p) { return Shape{p.b, p.h, chunks_of(p), p.q}; };
  s.outputs[4].shape = [](const Problem& p) { return Shape{p.b, p.h, chunks_of(p), p.q}; };
  s.chunked = [](const Problem& p, const InputSet& in) { return discretize_segsum_chunked(bind_discretize_segsum(p, in)); };
  s.sequential = [](const Problem& p, const InputSet& in) { return discretize_segsum_sequential(bind_discretize_segsum(p, in)); };
  s.bounds = tolerance::discretize_segsum_bounds;
  s.abi = make_abi_binding<Op::discretize_segsum, &ssd_kernel_table::discretize_segsum>(offsetof(ssd_discretize_segsum_args, stream));
  s.abi.tensors = {
      {"hidden_states", offsetof(ssd_discretize_segsum_args, hidden_states)},
      {"dt", offsetof(ssd_discretize_segsum_args, dt)},
      {"A_log", offsetof(ssd_discretize_segsum_args, A_log)},
      {"B", offsetof(ssd_discretize_segsum_args, B)},
      {"C", offsetof(ssd_discretize_segsum_args, C)},
      {"L", offsetof(ssd_discretize_segsum_args, L)},
      {"G", offsetof(ssd_discretize_segsum_args, G)},
      {"M", offsetof(ssd_discretize_segsum_args, M)},
      {"A_cumsum", offsetof(ssd_discretize_segsum_args, A_cumsum)},
      {"decay_states", offsetof(ssd_discretize_segsum_args, decay_states)}};
  s.abi.scalars = {};
  s.abi.sizes = {{"b", "hidden_states", 0}, {"q", "hidden_states", 2}, {"h", "hidden_states", 3}, {"p", "hidden_states", 4}, {"g", "B", 3}, {"n", "B", 4}, {"s", "hidden_states", 1, true}};
  s.smoke = [] {
    return parse_all({
        "discretize_segsum:bf16 b1 s8 q8 h2 p4 g1 n4 seed=1",
        "discretize_segsum:bf16 b2 s48 q16 h4 p4 g2 n8 seed=2",
        "discretize_segsum:f32 b1 s14 q7 h3 p2 g3 n4 seed=3",
        "discretize_segsum:f16 b1 s4 q1 h2 p2 g1 n4 seed=4",
    });
  };
  s.workloads = [] {
    std::vector<Problem> list;
    const std::pair<int, int> cases[] = {{1, 1}, {1, 2}, {1, 3}, {1, 8}, {2, 2},  {2, 16}, {4, 1},  {4, 2},
                                         {4, 3}, {4, 5}, {8, 8}, {16, 1}, {16, 2}, {32, 1}, {32, 2}, {64, 1}};
    for (auto [batch, chunks] : cases)
      list.push_back(parse_problem("discretize_segsum:bf16 b" + std::to_string(batch) + " s" +
                                   std::to_string(chunks * 256) + " q256 h16 p160 g1 n256 seed=0"));
    return list;
  };
  return s;
}

}  // namespace specs
}  // namespace ssd
