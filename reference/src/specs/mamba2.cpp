// OpSpec of Mamba2Fwd (mamba_chunk_scan_combined).
#include "specs.h"

#include "../tolerance/ops.h"
#include "ssd/reference/bind.h"
#include "ssd/reference/varlen.h"

namespace ssd {

Mamba2Args bind_mamba2(const Problem& p, const InputSet& in) {
  Mamba2Args a;
  a.x = in.find("x");
  a.dt = in.find("dt");
  a.A = in.find("A");
  a.B = in.find("B");
  a.C = in.find("C");
  a.chunk_size = p.q;
  a.D = in.find("D");
  a.z = in.find("z");
  a.dt_bias = in.find("dt_bias");
  a.initial_states = in.find("initial_states");
  a.seq_idx = in.find("seq_idx");
  a.varlen = p.varlen;
  a.has_initial_states = in.find("has_initial_states");
  a.cu_seqlens = in.find("cu_seqlens");
  a.chunk_indices = in.find("chunk_indices");
  a.chunk_offsets = in.find("chunk_offsets");
  a.cu_chunk_seqlens = in.find("cu_chunk_seqlens");
  a.chunk_seq_idx = in.find("chunk_seq_idx");
  a.last_chunk_indices = in.find("last_chunk_indices");
  a.dt_softplus = p.softplus;
  if (p.dt_limit) a.dt_limit = *p.dt_limit;
  return a;
}

namespace specs {
namespace {

std::int64_t sequences(const Problem& p) { return packed_sequences(p).count(); }

// The length of each varlen encoding tensor (ssd/reference/varlen.h).
std::int64_t encoding_length(const Problem& p, const std::string& role) {
  return static_cast<std::int64_t>(varlen_encoding(p, role).size());
}

InputRole encoding_role(const std::string& name) {
  return {name, false, DType::i32, false, [](const Problem& p) { return p.varlen; },
          [name](const Problem& p) { return Shape{encoding_length(p, name)}; },
          [](const Problem&) { return FillRule{FillRule::Kind::varlen_encoding}; }};
}

// Returned states: the state dtype when state= gives one, else f32.
DType returned_state_dtype(const Problem& p) {
  auto it = p.dtypes.find("state");
  return it == p.dtypes.end() ? DType::f32 : it->second;
}

}  // namespace

OpSpec mamba2() {
  OpSpec s;
  s.op = Op::mamba2;
  s.name = "mamba2";
  s.benchmark_name = "Mamba2Fwd";
  s.dims = {'b', 's', 'h', 'p', 'g', 'n', 'q'};
  s.zxbcdt = {"z", "x", "B", "C", "dt"};
  s.flags = {"dt_bias", "softplus", "limit", "D", "Dhp", "z", "init", "seq", "varlen", "state", "dots"};
  s.primary_dtypes = {DType::f32, DType::f16, DType::bf16};
  s.fills = {"default", "bench", "dt_edge", "A_zero", "underflow", "dt_overflow"};
  s.inputs = {
      {"x", true, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.b, p.s, p.h, p.p}; },
       [](const Problem&) { return normal(); }},
      {"dt", false, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.b, p.s, p.h}; },
       [](const Problem& p) { return raw_dt(p); }},
      {"A", false, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.h}; },
       [](const Problem& p) { return decay_rate(p); }},
      {"B", true, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.b, p.s, p.g, p.n}; },
       [](const Problem&) { return normal(); }},
      {"C", true, DType::f32, true, nullptr, [](const Problem& p) { return Shape{p.b, p.s, p.g, p.n}; },
       [](const Problem&) { return normal(); }},
      {"D", false, DType::f32, true, [](const Problem& p) { return p.D != DMode::none; },
       [](const Problem& p) { return p.D == DMode::per_head ? Shape{p.h} : Shape{p.h, p.p}; },
       [](const Problem&) { return normal(); }},
      {"z", true, DType::f32, true, [](const Problem& p) { return p.z; },
       [](const Problem& p) { return Shape{p.b, p.s, p.h, p.p}; }, [](const Problem&) { return normal(); }},
      {"dt_bias", false, DType::f32, true, [](const Problem& p) { return p.dt_bias; },
       [](const Problem& p) { return Shape{p.h}; },
       [](const Problem& p) { return bench(p) ? uniform(0, 1) : uniform(-0.5, 0.5); }},
      {"initial_states", false, DType::f32, true, [](const Problem& p) { return p.init; },
       [](const Problem& p) { return Shape{p.varlen ? sequences(p) : p.b, p.h, p.p, p.n}; },
       [](const Problem&) { return normal(); }},
      seq_idx_role(),
      {"has_initial_states", false, DType::i32, false, [](const Problem& p) { return p.varlen && p.init; },
       [](const Problem& p) { return Shape{sequences(p)}; },
       [](const Problem&) { return FillRule{FillRule::Kind::has_initial_states}; }},
      encoding_role("cu_seqlens"),
      encoding_role("chunk_indices"),
      encoding_role("chunk_offsets"),
      encoding_role("cu_chunk_seqlens"),
      encoding_role("chunk_seq_idx"),
      encoding_role("last_chunk_indices"),
  };
  s.invalid_reason = [](const Problem& p) -> std::optional<std::string> {
    if (!p.varlen) return std::nullopt;
    if (p.b != 1) return "+varlen packs its sequences into one row: b must be 1, got " + std::to_string(p.b);
    if (p.seq.kind == SeqSpec::Kind::none) return "+varlen needs seq= (where each sequence of the row lies)";
    if (p.seq.kind == SeqSpec::Kind::runs && p.seq.first_id != 0)
      return "+varlen numbers its sequences from 0: seq= must start with id 0, got " + std::to_string(p.seq.first_id);
    if (p.seq.kind == SeqSpec::Kind::runs && p.seq.runs.front() < 0)
      return "+varlen needs at least one sequence before the padding";
    // A negative dt' makes dA rise inside a chunk, where the kernels' exp(min(delta, 0)) clamp
    // gives results that depend on where the chunks are cut: per sequence or over the packed row.
    if (p.dt_limit && p.dt_limit->lo < 0)
      return "+varlen needs dt_limit lo >= 0 (with dt' < 0 the result depends on the chunk grid)";
    return std::nullopt;
  };
  s.outputs = {{"out", [](const Problem& p) { return role_dtype(p, "x"); }, nullptr},
               {"final_states", returned_state_dtype, nullptr},
               {"varlen_states", returned_state_dtype, [](const Problem& p) { return p.varlen; }}};
  s.outputs[0].shape = [](const Problem& p) { return Shape{p.b, p.s, p.h, p.p}; };
  s.outputs[1].shape = [](const Problem& p) { return Shape{p.b, p.h, p.p, p.n}; };
  s.outputs[2].shape = [](const Problem& p) { return Shape{sequences(p), p.h, p.p, p.n}; };
  s.chunked = [](const Problem& p, const InputSet& in) { return mamba2_chunked(bind_mamba2(p, in)); };
  s.sequential = [](const Problem& p, const InputSet& in) { return mamba2_sequential(bind_mamba2(p, in)); };
  s.bounds = tolerance::mamba2_bounds;
  s.huge = "mamba2:bf16 b1 s524289 h64 p64 g1 n16 q256 +softplus +D";  // x [1, 524289, 64, 64]: 2^31 + 4096 elements, the last chunk ragged
  s.abi = make_abi_binding<Op::mamba2, &ssd_kernel_table::mamba2>(offsetof(ssd_mamba2_args, stream));
  s.abi.tensors = {
      {"x", offsetof(ssd_mamba2_args, x)},
      {"dt", offsetof(ssd_mamba2_args, dt)},
      {"A", offsetof(ssd_mamba2_args, A)},
      {"B", offsetof(ssd_mamba2_args, B)},
      {"C", offsetof(ssd_mamba2_args, C)},
      {"D", offsetof(ssd_mamba2_args, D), abi::mark_D},
      {"z", offsetof(ssd_mamba2_args, z), abi::mark_z},
      {"dt_bias", offsetof(ssd_mamba2_args, dt_bias), abi::mark_dt_bias},
      {"initial_states", offsetof(ssd_mamba2_args, initial_states), abi::mark_init},
      {"seq_idx", offsetof(ssd_mamba2_args, seq_idx), abi::mark_seq},
      {"out", offsetof(ssd_mamba2_args, out)},
      {"final_states", offsetof(ssd_mamba2_args, final_states)},
      {"has_initial_states", offsetof(ssd_mamba2_args, has_initial_states), nullptr, 3},
      {"cu_seqlens", offsetof(ssd_mamba2_args, cu_seqlens), abi::mark_varlen, 3},
      {"chunk_indices", offsetof(ssd_mamba2_args, chunk_indices), nullptr, 3},
      {"chunk_offsets", offsetof(ssd_mamba2_args, chunk_offsets), nullptr, 3},
      {"cu_chunk_seqlens", offsetof(ssd_mamba2_args, cu_chunk_seqlens), nullptr, 3},
      {"chunk_seq_idx", offsetof(ssd_mamba2_args, chunk_seq_idx), nullptr, 3},
      {"last_chunk_indices", offsetof(ssd_mamba2_args, last_chunk_indices), nullptr, 3},
      {"varlen_states", offsetof(ssd_mamba2_args, varlen_states), nullptr, 3}};
  s.abi.scalars = {abi::chunk_size(offsetof(ssd_mamba2_args, chunk_size)), abi::dt_softplus(offsetof(ssd_mamba2_args, dt_softplus)),
                   abi::dt_limit_lo(offsetof(ssd_mamba2_args, dt_limit_lo)), abi::dt_limit_hi(offsetof(ssd_mamba2_args, dt_limit_hi)),
                   abi::state_dtype(offsetof(ssd_mamba2_args, state_dtype))};
  s.abi.sizes = {{"b", "x", 0}, {"s", "x", 1}, {"h", "x", 2}, {"p", "x", 3}, {"g", "B", 2}, {"n", "B", 3}};
  s.smoke = [] {
    return parse_all({
        "mamba2:f32 b1 s16 h2 p4 g1 n4 q8 seed=1",
        "mamba2:bf16 b2 s37 h4 p8 g2 n8 q16 +softplus +D +z layout=zxbcdt dt=bf16 seed=15",
        "mamba2:bf16 b2 s37 h4 p8 g2 n8 q16 +softplus +D +z seed=2",
        "mamba2:f16 b2 s37 h4 p8 g4 n8 q16 +dt_bias +softplus +Dhp +init seed=3",
        "mamba2:f32 b2 s50 h4 p4 g2 n8 q16 +softplus +init seq=rand seed=4",
        "mamba2:bf16 b1 s5 h2 p4 g1 n4 q16 +softplus +init seed=5",
        "mamba2:f32 b1 s1 h2 p4 g2 n4 q4 +softplus +init +z seed=6",
        "mamba2:f16 b1 s40 h2 p4 g1 n8 q8 limit=0.01,0.2 +D +init seq=0:8,9,7,-16 seed=7",
        "mamba2:bf16 b2 s33 h4 p8 g2 n8 q16 +softplus +init seq=1:16,17 seed=8",
        "mamba2:f32 b1 s24 h2 p4 g1 n4 q7 +dt_bias +softplus B=bf16 C=f16 seed=9",
        "mamba2:f32 b1 s20 h2 p4 g1 n4 q8 +D seed=10",
        "mamba2:bf16 b1 s64 h2 p4 g1 n4 q16 +softplus +init seq=0:15,1,16,17,15 seed=11",
        "mamba2:f32 b1 s40 h2 p4 g1 n4 q8 +softplus +init +varlen seq=0:5,20,15 seed=12",
        "mamba2:bf16 b1 s20 h2 p4 g2 n4 q8 +softplus +init +varlen seq=0:20 seed=13",
        "mamba2:f16 b1 s37 h2 p4 g2 n8 q16 +softplus +init state=bf16 seed=14",
    });
  };
  s.workloads = [] {
    return parse_all({
        "mamba2:bf16 b1 s2048 h80 p64 g1 n128 q256 +softplus fill=bench seed=0",
        "mamba2:f16 b1 s8192 h64 p64 g1 n128 q256 +softplus fill=bench seed=0",
        "mamba2:bf16 b1 s2048 h80 p64 g1 n128 q256 +softplus +init fill=bench seed=0",
        "mamba2:f16 b1 s8192 h64 p64 g1 n128 q256 +softplus +init fill=bench seed=0",
        "mamba2:bf16 b1 s2048 h80 p64 g1 n128 q256 +dt_bias +softplus fill=bench seed=0",
        "mamba2:f16 b1 s8192 h64 p64 g1 n128 q256 +dt_bias +softplus fill=bench seed=0",
        "mamba2:bf16 b1 s2048 h80 p64 g1 n128 q256 +dt_bias +softplus +init fill=bench seed=0",
        "mamba2:f16 b1 s8192 h64 p64 g1 n128 q256 +dt_bias +softplus +init fill=bench seed=0",
    });
  };
  return s;
}

}  // namespace specs
}  // namespace ssd
