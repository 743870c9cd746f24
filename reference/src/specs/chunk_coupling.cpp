// OpSpec of SSDChunkCouplingFwd (_bmm_chunk_fwd(C, B)).
#include "specs.h"
#include "ssd/bind.h"

namespace ssd::specs {
OpSpec chunk_coupling() {
  OpSpec s;
  s.op = Op::chunk_coupling;
  s.name = "chunk_coupling";
  s.benchmark_name = "SSDChunkCouplingFwd";
  s.dims = {'b', 's', 'g', 'n', 'q'};
  s.flags = {"seq", "causal", "out"};
  s.primary_dtypes = {DType::f32, DType::f16, DType::bf16};
  s.fills = {"default", "bench"};
  s.inputs = {
      {"C", true, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.b, p.s, p.g, p.n}; },
       [](const Problem&) { return normal(); }},
      {"B", true, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.b, p.s, p.g, p.n}; },
       [](const Problem&) { return normal(); }},
      seq_idx_role(),
  };
  s.outputs = {{"CB",
                [](const Problem& p) {
                  auto it = p.dtypes.find("out");
                  return it != p.dtypes.end() ? it->second : role_dtype(p, "C");
                },
                nullptr}};
  s.outputs[0].shape = [](const Problem& p) { return Shape{p.b, chunks_of(p), p.g, p.q, p.q}; };
  s.chunked = [](const Problem& p, const InputSet& in) { return chunk_coupling_chunked(bind_chunk_coupling(p, in)); };
  s.sequential = [](const Problem& p, const InputSet& in) { return chunk_coupling_sequential(bind_chunk_coupling(p, in)); };
  s.smoke = [] {
    return parse_all({
        "chunk_coupling:f32 b1 s16 g1 n8 q8 seed=1",
        "chunk_coupling:f16 b2 s37 g2 n16 q16 seed=2",
        "chunk_coupling:bf16 b2 s37 g2 n16 q16 seq=rand seed=3",
        "chunk_coupling:bf16 b1 s40 g1 n8 q8 +causal seq=0:8,9,7,-16 seed=4",
        "chunk_coupling:f32 b1 s5 g1 n4 q16 +causal seed=5",
        "chunk_coupling:f32 b1 s24 g3 n8 q7 B=bf16 out=f32 seed=6",
    });
  };
  s.workloads = [] {
    return parse_all({
        "chunk_coupling:f16 b1 s4096 g1 n128 q256 fill=bench seed=0",
        "chunk_coupling:bf16 b4 s2048 g1 n128 q256 fill=bench seed=0",
        "chunk_coupling:f16 b3 s3072 g8 n128 q256 fill=bench seed=0",
    });
  };
  return s;
}

}  // namespace ssd::specs
