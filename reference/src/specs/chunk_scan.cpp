// OpSpec of SSDChunkScanFwd (_chunk_scan_fwd).
#include "specs.h"

#include "../tolerance/ops.h"
#include "ssd/reference/bind.h"

namespace ssd {

ChunkScanArgs bind_chunk_scan(const Problem&, const InputSet& in) {
  ChunkScanArgs a;
  a.cb = in.find("cb");
  a.x = in.find("x");
  a.dt = in.find("dt");
  a.dA_cumsum = in.find("dA_cumsum");
  a.C = in.find("C");
  a.states = in.find("states");
  a.D = in.find("D");
  a.z = in.find("z");
  a.seq_idx = in.find("seq_idx");
  return a;
}

namespace specs {
OpSpec chunk_scan() {
  OpSpec s;
  s.op = Op::chunk_scan;
  s.name = "chunk_scan";
  s.benchmark_name = "SSDChunkScanFwd";
  s.dims = {'b', 's', 'h', 'p', 'g', 'n', 'q'};
  s.zxbcdt = {"z", "x", "C"};
  s.flags = {"D", "Dhp", "z", "seq", "dots"};
  s.primary_dtypes = {DType::f32, DType::f16, DType::bf16};
  s.fills = {"default", "bench", "A_zero", "underflow", "dA_rise"};
  auto chunk_major = [](const Problem& p) { return Shape{p.b, p.h, chunks_of(p), p.q}; };
  s.inputs = {
      {"cb", true, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.b, chunks_of(p), p.g, p.q, p.q}; },
       [](const Problem&) { return normal(); }},
      {"x", true, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.b, p.s, p.h, p.p}; },
       [](const Problem&) { return normal(); }},
      {"dt", false, DType::f32, true, nullptr, chunk_major,
       [](const Problem& p) { return FillRule{FillRule::Kind::chunk_dt, 0.0, bench(p) ? 0.1 : 0.5}; }},
      {"dA_cumsum", false, DType::f32, true, nullptr, chunk_major,
       [](const Problem& p) { return chunk_decay(p); }},
      {"C", true, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.b, p.s, p.g, p.n}; },
       [](const Problem&) { return normal(); }},
      {"states", false, DType::f32, true, nullptr,
       [](const Problem& p) { return Shape{p.b, chunks_of(p), p.h, p.p, p.n}; }, [](const Problem&) { return normal(); }},
      {"D", false, DType::f32, true, [](const Problem& p) { return p.D != DMode::none; },
       [](const Problem& p) { return p.D == DMode::per_head ? Shape{p.h} : Shape{p.h, p.p}; },
       [](const Problem&) { return normal(); }},
      {"z", true, DType::f32, true, [](const Problem& p) { return p.z; },
       [](const Problem& p) { return Shape{p.b, p.s, p.h, p.p}; }, [](const Problem&) { return normal(); }},
      seq_idx_role(),
  };
  s.outputs = {{"out", [](const Problem& p) { return role_dtype(p, "x"); }, nullptr},
               {"out_x", [](const Problem& p) { return role_dtype(p, "x"); }, [](const Problem& p) { return p.z; }}};
  s.outputs[0].shape = [](const Problem& p) { return Shape{p.b, p.s, p.h, p.p}; };
  s.outputs[1].shape = [](const Problem& p) { return Shape{p.b, p.s, p.h, p.p}; };
  s.chunked = [](const Problem& p, const InputSet& in) { return chunk_scan_chunked(bind_chunk_scan(p, in)); };
  s.sequential = [](const Problem& p, const InputSet& in) { return chunk_scan_sequential(bind_chunk_scan(p, in)); };
  s.bounds = tolerance::chunk_scan_bounds;
  s.huge = "chunk_scan:bf16 b1 s524289 h64 p64 g1 n16 q256";  // x [1, 524289, 64, 64]: 2^31 + 4096 elements, the last chunk ragged
  s.abi = make_abi_binding<Op::chunk_scan, &ssd_kernel_table::chunk_scan>(offsetof(ssd_chunk_scan_args, stream));
  s.abi.tensors = {
      {"cb", offsetof(ssd_chunk_scan_args, cb)},
      {"x", offsetof(ssd_chunk_scan_args, x)},
      {"dt", offsetof(ssd_chunk_scan_args, dt)},
      {"dA_cumsum", offsetof(ssd_chunk_scan_args, dA_cumsum)},
      {"C", offsetof(ssd_chunk_scan_args, C)},
      {"states", offsetof(ssd_chunk_scan_args, states)},
      {"D", offsetof(ssd_chunk_scan_args, D), abi::mark_D},
      {"z", offsetof(ssd_chunk_scan_args, z), abi::mark_z},
      {"seq_idx", offsetof(ssd_chunk_scan_args, seq_idx), abi::mark_seq},
      {"out", offsetof(ssd_chunk_scan_args, out)},
      {"out_x", offsetof(ssd_chunk_scan_args, out_x)}};
  s.abi.scalars = {};
  s.abi.sizes = {{"b", "x", 0}, {"s", "x", 1}, {"h", "x", 2}, {"p", "x", 3}, {"g", "C", 2}, {"n", "C", 3}, {"q", "cb", -1}};
  s.smoke = [] {
    return parse_all({
        "chunk_scan:f32 b1 s16 h2 p4 g1 n4 q8 seed=1",
        "chunk_scan:f16 b2 s37 h4 p8 g2 n8 q16 +D +z layout=zxbcdt seed=9",
        "chunk_scan:f16 b2 s37 h4 p8 g2 n8 q16 +D +z seed=2",
        "chunk_scan:bf16 b2 s37 h4 p8 g4 n8 q16 +Dhp +z seq=rand seed=3",
        "chunk_scan:bf16 b1 s40 h2 p4 g1 n8 q8 +D seq=0:8,9,7,-16 seed=4",
        "chunk_scan:f32 b1 s5 h2 p4 g2 n4 q16 +z seed=5",
        "chunk_scan:f32 b1 s1 h2 p4 g1 n4 q4 +Dhp seed=6",
        "chunk_scan:f16 b1 s24 h2 p4 g1 n4 q7 seq=1:3,13,8 C=bf16 seed=7",
    });
  };
  s.workloads = [] {
    return parse_all({
        "chunk_scan:f16 b1 s4096 h48 p64 g1 n128 q256 fill=bench seed=0",
        "chunk_scan:bf16 b1 s4096 h48 p64 g1 n128 q256 fill=bench seed=0",
        "chunk_scan:bf16 b4 s2048 h80 p64 g1 n128 q256 fill=bench seed=0",
        "chunk_scan:f16 b2 s32768 h64 p64 g1 n128 q256 fill=bench seed=0",
    });
  };
  return s;
}

}  // namespace specs
}  // namespace ssd
