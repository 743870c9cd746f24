// OpSpec of SSDChunkStateFwd (_chunk_state_fwd).
#include "specs.h"

#include "../tolerance/ops.h"
#include "ssd/reference/bind.h"

namespace ssd {

ChunkStateArgs bind_chunk_state(const Problem&, const InputSet& in) {
  ChunkStateArgs a;
  a.B = in.find("B");
  a.x = in.find("x");
  a.dt = in.find("dt");
  a.dA_cumsum = in.find("dA_cumsum");
  a.seq_idx = in.find("seq_idx");
  return a;
}

namespace specs {
OpSpec chunk_state() {
  OpSpec s;
  s.op = Op::chunk_state;
  s.name = "chunk_state";
  s.benchmark_name = "SSDChunkStateFwd";
  s.dims = {'b', 's', 'h', 'p', 'g', 'n', 'q'};
  s.zxbcdt = {"x", "B"};
  s.flags = {"seq", "out", "dots"};
  s.primary_dtypes = {DType::f32, DType::f16, DType::bf16};
  s.fills = {"default", "bench", "A_zero", "underflow", "dA_rise"};
  auto chunk_major = [](const Problem& p) { return Shape{p.b, p.h, chunks_of(p), p.q}; };
  s.inputs = {
      {"B", true, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.b, p.s, p.g, p.n}; },
       [](const Problem&) { return normal(); }},
      {"x", true, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.b, p.s, p.h, p.p}; },
       [](const Problem&) { return normal(); }},
      {"dt", false, DType::f32, true, nullptr, chunk_major,
       [](const Problem& p) { return FillRule{FillRule::Kind::chunk_dt, 0.0, bench(p) ? 0.1 : 0.5}; }},
      {"dA_cumsum", false, DType::f32, true, nullptr, chunk_major,
       [](const Problem& p) { return chunk_decay(p); }},
      seq_idx_role(),
  };
  s.outputs = {{"states",
                [](const Problem& p) {
                  auto it = p.dtypes.find("out");
                  return it != p.dtypes.end() ? it->second : DType::f32;  // states_in_fp32 by default
                },
                nullptr}};
  s.outputs[0].shape = [](const Problem& p) { return Shape{p.b, chunks_of(p), p.h, p.p, p.n}; };
  s.chunked = [](const Problem& p, const InputSet& in) { return chunk_state_chunked(bind_chunk_state(p, in)); };
  s.sequential = [](const Problem& p, const InputSet& in) { return chunk_state_sequential(bind_chunk_state(p, in)); };
  s.bounds = tolerance::chunk_state_bounds;
  s.huge = "chunk_state:bf16 b1 s524289 h64 p64 g1 n16 q256";  // x [1, 524289, 64, 64]: 2^31 + 4096 elements, the last chunk ragged
  s.abi = make_abi_binding<Op::chunk_state, &ssd_kernel_table::chunk_state>(offsetof(ssd_chunk_state_args, stream));
  s.abi.tensors = {
      {"B", offsetof(ssd_chunk_state_args, B)},
      {"x", offsetof(ssd_chunk_state_args, x)},
      {"dt", offsetof(ssd_chunk_state_args, dt)},
      {"dA_cumsum", offsetof(ssd_chunk_state_args, dA_cumsum)},
      {"seq_idx", offsetof(ssd_chunk_state_args, seq_idx), abi::mark_seq},
      {"states", offsetof(ssd_chunk_state_args, states)}};
  s.abi.scalars = {};
  s.abi.sizes = {{"b", "x", 0}, {"s", "x", 1}, {"h", "x", 2}, {"p", "x", 3}, {"g", "B", 2}, {"n", "B", 3}, {"q", "dt", -1}};
  s.smoke = [] {
    return parse_all({
        "chunk_state:f32 b1 s16 h2 p4 g1 n4 q8 seed=1",
        "chunk_state:f16 b2 s37 h4 p8 g2 n8 q16 seed=2",
        "chunk_state:bf16 b2 s37 h4 p8 g4 n8 q16 seq=rand seed=3",
        "chunk_state:bf16 b1 s40 h2 p4 g1 n8 q8 seq=0:8,9,7,-16 seed=4",
        "chunk_state:f32 b1 s5 h2 p4 g2 n4 q16 seed=5",
        "chunk_state:f32 b1 s1 h2 p4 g1 n4 q4 out=bf16 seed=6",
        "chunk_state:f16 b1 s24 h2 p4 g1 n4 q7 seq=1:3,13,8 B=bf16 seed=7",
    });
  };
  s.workloads = [] {
    return parse_all({
        "chunk_state:f16 b1 s4096 h48 p64 g1 n128 q256 fill=bench seed=0",
        "chunk_state:bf16 b1 s4096 h48 p64 g1 n128 q256 fill=bench seed=0",
        "chunk_state:bf16 b4 s2048 h80 p64 g1 n128 q256 fill=bench seed=0",
        "chunk_state:f16 b1 s4096 h48 p64 g1 n128 q256 seq=rand fill=bench seed=0",
        "chunk_state:bf16 b1 s4096 h48 p64 g1 n128 q256 seq=rand fill=bench seed=0",
        "chunk_state:f16 b2 s32768 h64 p64 g1 n128 q256 seq=rand fill=bench seed=0",
    });
  };
  return s;
}

}  // namespace specs
}  // namespace ssd
