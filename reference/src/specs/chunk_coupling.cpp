// OpSpec of SSDChunkCouplingFwd (_bmm_chunk_fwd(C, B)).
#include "specs.h"

#include "../tolerance/ops.h"
#include "ssd/reference/bind.h"

namespace ssd {

ChunkCouplingArgs bind_chunk_coupling(const Problem& p, const InputSet& in) {
  ChunkCouplingArgs a;
  a.C = in.find("C");
  a.B = in.find("B");
  a.chunk_size = p.q;
  a.seq_idx = in.find("seq_idx");
  a.causal = p.causal;
  return a;
}

namespace specs {
OpSpec chunk_coupling() {
  OpSpec s;
  s.op = Op::chunk_coupling;
  s.name = "chunk_coupling";
  s.benchmark_name = "SSDChunkCouplingFwd";
  s.dims = {'b', 's', 'g', 'n', 'q'};
  s.flags = {"seq", "causal", "out", "dots"};
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
  s.bounds = tolerance::chunk_coupling_bounds;
  s.huge = "chunk_coupling:bf16 b1 s1048577 g8 n16 q256";  // CB [1, 4097, 8, 256, 256]: just over 2^31 elements
  s.abi = make_abi_binding<Op::chunk_coupling, &ssd_kernel_table::chunk_coupling>(offsetof(ssd_chunk_coupling_args, stream));
  s.abi.tensors = {
      {"C", offsetof(ssd_chunk_coupling_args, C)},
      {"B", offsetof(ssd_chunk_coupling_args, B)},
      {"seq_idx", offsetof(ssd_chunk_coupling_args, seq_idx), abi::mark_seq},
      {"CB", offsetof(ssd_chunk_coupling_args, CB)}};
  s.abi.scalars = {abi::chunk_size(offsetof(ssd_chunk_coupling_args, chunk_size)), abi::causal(offsetof(ssd_chunk_coupling_args, causal))};
  s.abi.sizes = {{"b", "C", 0}, {"s", "C", 1}, {"g", "C", 2}, {"n", "C", 3}};
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

}  // namespace specs
}  // namespace ssd
