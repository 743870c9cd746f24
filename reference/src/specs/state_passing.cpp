// OpSpec of SSDStatePassingFwd (_state_passing_fwd).
#include "specs.h"

#include "../tolerance/ops.h"
#include "ssd/reference/bind.h"

namespace ssd {

StatePassingArgs bind_state_passing(const Problem& p, const InputSet& in) {
  StatePassingArgs a;
  a.states = in.find("states");
  a.dA_chunk_cumsum = in.find("dA_chunk_cumsum");
  a.initial_states = in.find("initial_states");
  a.seq_idx = in.find("seq_idx");
  a.chunk_size = p.q;
  return a;
}

namespace specs {
OpSpec state_passing() {
  OpSpec s;
  s.op = Op::state_passing;
  s.name = "state_passing";
  s.benchmark_name = "SSDStatePassingFwd";
  s.dims = {'b', 's', 'q', 'h', 'd'};
  s.flags = {"init", "seq", "out"};
  s.primary_dtypes = {DType::f32, DType::f16, DType::bf16};
  s.fills = {"default", "bench", "A_zero", "underflow"};
  s.inputs = {
      {"states", true, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.b, chunks_of(p), p.h, p.d}; },
       [](const Problem&) { return normal(); }},
      {"dA_chunk_cumsum", false, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.b, p.h, chunks_of(p)}; },
       [](const Problem& p) { return regime(p, "A_zero") ? uniform(0, 0) : regime(p, "underflow") ? uniform(-1000, -100) : uniform(-2, 0); }},
      {"initial_states", false, DType::f32, true, [](const Problem& p) { return p.init; },
       [](const Problem& p) { return Shape{p.b, p.h, p.d}; }, [](const Problem&) { return normal(); }},
      seq_idx_role(),
  };
  s.outputs = {{"out",
                [](const Problem& p) {
                  auto it = p.dtypes.find("out");
                  return it != p.dtypes.end() ? it->second : role_dtype(p, "states");
                },
                nullptr},
               {"final_states", [](const Problem&) { return DType::f32; }, nullptr}};
  s.outputs[0].shape = [](const Problem& p) { return Shape{p.b, chunks_of(p), p.h, p.d}; };
  s.outputs[1].shape = [](const Problem& p) { return Shape{p.b, p.h, p.d}; };
  s.chunked = [](const Problem& p, const InputSet& in) { return state_passing_chunked(bind_state_passing(p, in)); };
  s.sequential = [](const Problem& p, const InputSet& in) { return state_passing_sequential(bind_state_passing(p, in)); };
  s.bounds = tolerance::state_passing_bounds;
  s.abi = make_abi_binding<Op::state_passing, &ssd_kernel_table::state_passing>(offsetof(ssd_state_passing_args, stream));
  s.abi.tensors = {
      {"states", offsetof(ssd_state_passing_args, states)},
      {"dA_chunk_cumsum", offsetof(ssd_state_passing_args, dA_chunk_cumsum)},
      {"initial_states", offsetof(ssd_state_passing_args, initial_states), abi::mark_init},
      {"seq_idx", offsetof(ssd_state_passing_args, seq_idx), abi::mark_seq},
      {"out", offsetof(ssd_state_passing_args, out)},
      {"final_states", offsetof(ssd_state_passing_args, final_states)}};
  s.abi.scalars = {{"chunk_size", offsetof(ssd_state_passing_args, chunk_size), AbiScalarField::Type::i64,
       [](const Problem& p) { return static_cast<double>(p.q); },
       // Without seq_idx the chunk size only matters through NC, which the tensors carry.
       [](Problem& p, double v) { p.q = v > 0 ? static_cast<std::int64_t>(v) : 1; }}};
  s.abi.sizes = {{"b", "states", 0}, {"h", "states", 2}, {"d", "states", 3}, {"s", "seq_idx", 1}, {"s", "states", 1, true}};
  s.smoke = [] {
    return parse_all({
        "state_passing:f32 b1 s64 q16 h2 d8 seed=1",
        "state_passing:f16 b2 s100 q16 h3 d16 +init seed=2",
        "state_passing:bf16 b2 s100 q16 h3 d16 +init seq=rand seed=3",
        "state_passing:f32 b1 s64 q8 h2 d4 +init seq=0:8,9,7,24,-16 seed=4",
        "state_passing:f32 b1 s5 q16 h2 d4 +init seed=5",
        "state_passing:bf16 b1 s40 q8 h2 d8 +init seq=1:20,20 out=f32 seed=6",
        "state_passing:f32 b1 s64 q8 h2 d4 +init seq=0:7,9,48 seed=7",
    });
  };
  s.workloads = [] {
    return parse_all({
        "state_passing:f16 b1 s4096 q256 h64 d128 fill=bench seed=0",
        "state_passing:bf16 b1 s4096 q256 h64 d128 fill=bench seed=0",
        "state_passing:f16 b2 s32768 q256 h80 d128 fill=bench seed=0",
        "state_passing:f16 b1 s4096 q256 h64 d128 +init fill=bench seed=0",
        "state_passing:bf16 b1 s4096 q256 h64 d128 +init fill=bench seed=0",
        "state_passing:f32 b1 s4096 q256 h64 d8192 +init fill=bench seed=0",
    });
  };
  return s;
}

}  // namespace specs
}  // namespace ssd
