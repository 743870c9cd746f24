// OpSpec of SSDChunkCumsumFwd (_chunk_cumsum_fwd).
#include "specs.h"

#include "../tolerance/ops.h"
#include "ssd/reference/bind.h"

namespace ssd {

ChunkCumsumArgs bind_chunk_cumsum(const Problem& p, const InputSet& in) {
  ChunkCumsumArgs a;
  a.dt = in.find("dt");
  a.A = in.find("A");
  a.chunk_size = p.q;
  a.dt_bias = in.find("dt_bias");
  a.dt_softplus = p.softplus;
  if (p.dt_limit) a.dt_limit = *p.dt_limit;
  return a;
}

namespace specs {
OpSpec chunk_cumsum() {
  OpSpec s;
  s.op = Op::chunk_cumsum;
  s.name = "chunk_cumsum";
  s.benchmark_name = "SSDChunkCumsumFwd";
  s.dims = {'b', 's', 'h', 'q'};
  s.flags = {"dt_bias", "softplus", "limit"};
  s.primary_dtypes = {DType::f32, DType::f16, DType::bf16};
  s.fills = {"default", "bench", "dt_edge", "A_zero", "underflow", "dt_overflow"};
  s.inputs = {
      {"dt", true, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.b, p.s, p.h}; },
       [](const Problem& p) { return raw_dt(p); }},
      {"A", false, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.h}; },
       [](const Problem& p) { return decay_rate(p); }},
      {"dt_bias", false, DType::f32, true, [](const Problem& p) { return p.dt_bias; },
       [](const Problem& p) { return Shape{p.h}; },
       [](const Problem& p) { return bench(p) ? uniform(0, 1) : uniform(-0.5, 0.5); }},
  };
  s.outputs = {{"dA_cumsum", [](const Problem&) { return DType::f32; }, nullptr},
               {"dt_out", [](const Problem&) { return DType::f32; }, nullptr}};
  s.outputs[0].shape = [](const Problem& p) { return Shape{p.b, p.h, chunks_of(p), p.q}; };
  s.outputs[1].shape = [](const Problem& p) { return Shape{p.b, p.h, chunks_of(p), p.q}; };
  s.chunked = [](const Problem& p, const InputSet& in) { return chunk_cumsum_chunked(bind_chunk_cumsum(p, in)); };
  s.sequential = [](const Problem& p, const InputSet& in) { return chunk_cumsum_sequential(bind_chunk_cumsum(p, in)); };
  s.bounds = tolerance::chunk_cumsum_bounds;
  s.abi = make_abi_binding<Op::chunk_cumsum, &ssd_kernel_table::chunk_cumsum>(offsetof(ssd_chunk_cumsum_args, stream));
  s.abi.tensors = {
      {"dt", offsetof(ssd_chunk_cumsum_args, dt)},
      {"A", offsetof(ssd_chunk_cumsum_args, A)},
      {"dt_bias", offsetof(ssd_chunk_cumsum_args, dt_bias), abi::mark_dt_bias},
      {"dA_cumsum", offsetof(ssd_chunk_cumsum_args, dA_cumsum)},
      {"dt_out", offsetof(ssd_chunk_cumsum_args, dt_out)}};
  s.abi.scalars = {abi::chunk_size(offsetof(ssd_chunk_cumsum_args, chunk_size)), abi::dt_softplus(offsetof(ssd_chunk_cumsum_args, dt_softplus)), abi::dt_limit_lo(offsetof(ssd_chunk_cumsum_args, dt_limit_lo)), abi::dt_limit_hi(offsetof(ssd_chunk_cumsum_args, dt_limit_hi))};
  s.abi.sizes = {{"b", "dt", 0}, {"s", "dt", 1}, {"h", "dt", 2}};
  s.smoke = [] {
    return parse_all({
        "chunk_cumsum:f32 b1 s16 h2 q8 seed=1",
        "chunk_cumsum:f16 b2 s37 h3 q16 +softplus seed=2",
        "chunk_cumsum:bf16 b2 s37 h3 q16 +dt_bias +softplus seed=3",
        "chunk_cumsum:f32 b1 s5 h2 q16 +softplus limit=0.05,0.5 seed=4",
        "chunk_cumsum:f32 b1 s1 h1 q4 seed=5",
        "chunk_cumsum:bf16 b1 s30 h2 q7 +dt_bias limit=-0.1,0.2 A=bf16 seed=6",
        "chunk_cumsum:bf16 b2 s37 h3 q16 +dt_bias +softplus layout=strided seed=7",
        "chunk_cumsum:bf16 b2 s20 h2 q8 +softplus +far layout=strided seed=8",
    });
  };
  s.workloads = [] {
    return parse_all({
        "chunk_cumsum:f16 b1 s4096 h48 q256 +softplus fill=bench seed=0",
        "chunk_cumsum:bf16 b8 s2048 h64 q256 +softplus fill=bench seed=0",
        "chunk_cumsum:f16 b1 s4096 h48 q256 +dt_bias +softplus fill=bench seed=0",
        "chunk_cumsum:bf16 b8 s2048 h64 q256 +dt_bias +softplus fill=bench seed=0",
        "chunk_cumsum:f16 b2 s32768 h80 q256 +dt_bias +softplus fill=bench seed=0",
    });
  };
  return s;
}

}  // namespace specs
}  // namespace ssd
