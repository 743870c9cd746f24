// OpSpec of SSDChunkScanFwd (_chunk_scan_fwd).
#include "specs.h"
#include "ssd/bind.h"

namespace ssd::specs {
OpSpec chunk_scan() {
  OpSpec s;
  s.op = Op::chunk_scan;
  s.name = "chunk_scan";
  s.benchmark_name = "SSDChunkScanFwd";
  s.dims = {'b', 's', 'h', 'p', 'g', 'n', 'q'};
  s.flags = {"D", "Dhp", "z", "seq"};
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
  s.smoke = [] {
    return parse_all({
        "chunk_scan:f32 b1 s16 h2 p4 g1 n4 q8 seed=1",
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

}  // namespace ssd::specs
