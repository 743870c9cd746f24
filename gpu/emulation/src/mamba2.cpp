// Mamba2Fwd in fp32: the pipeline of mamba_chunk_scan_combined (ops.md section 1), built from the
// same stage kernels as the stand-alone ops:
//   chunk_cumsum (f32 dA_cumsum, dt') -> chunk_state (f32 states; B*w rounded to x's dtype) ->
//   state_passing (entering states stored in C's dtype, final f32) -> coupling CB (f32, dot
//   operands in the dot dtype, seq-masked, non-causal) -> chunk_scan -> out in x's dtype.
#include "emu.h"
#include "ssd/reference/bind.h"
#include "ssd/reference/helpers.h"

namespace ssd::emu {

Outputs mamba2(const Problem& p, const InputSet& in, const Ctx& ctx) {
  const Mamba2Args a = bind_mamba2(p, in);
  const OpDims d = validate(a);
  const std::int64_t Bt = d.batch, S = d.seqlen, H = d.heads, P = d.headdim, G = d.groups, N = d.dstate;
  const std::int64_t Q = d.chunk, NC = d.chunks;
  const DType x_dtype = a.x->dtype(), C_dtype = a.C->dtype();
  const SeqIds seq(a.seq_idx, S, ctx);

  const std::vector<float> x = ctx.load(*a.x), dt = ctx.load(*a.dt), A = ctx.load(*a.A), B = ctx.load(*a.B),
                           C = ctx.load(*a.C), D = ctx.load(a.D), z = ctx.load(a.z), bias = ctx.load(a.dt_bias),
                           init = ctx.load(a.initial_states);

  // 1. dA_cumsum and dt', f32 [Bt,H,NC,Q].
  const auto chunk_major = static_cast<std::size_t>(Bt * H * NC * Q);
  std::vector<float> dA(chunk_major), dtp(chunk_major);
  chunk_cumsum_kernel(ctx, d, dt.data(), A.data(), a.dt_bias ? bias.data() : nullptr, a.dt_softplus, a.dt_limit,
                      dA.data(), dtp.data());

  // 2. Chunk states, f32 [Bt,NC,H,P,N].
  const auto state_count = static_cast<std::size_t>(Bt * NC * H * P * N);
  std::vector<float> states(state_count);
  chunk_state_kernel(ctx, d, B.data(), x.data(), x_dtype, dtp.data(), dA.data(), seq, states.data());

  // A packed batch: where each sequence starts, its initial state (fp32, and stored in the state
  //    dtype for the scan).
  const DType entering_dtype = p.dtypes.contains("state") ? p.dtypes.at("state") : C_dtype;
  std::vector<float> init_entering = init;
  round_all(init_entering, entering_dtype);
  ctx.dot_operands(init_entering, entering_dtype);
  std::optional<PackedStarts> packed;
  if (a.varlen) {
    packed = packed_starts(ctx, *a.seq_idx, a.initial_states ? init.data() : nullptr, a.has_initial_states, dA.data());
    packed->init_entering = a.initial_states ? init_entering.data() : nullptr;
  }
  const PackedStarts* starts = packed ? &*packed : nullptr;

  // 3. State passing over the flattened P*N axis with the chunk totals dA[..., Q-1]: the running
  //    states in fp32 (the entering states are stored in the state dtype when the scan reads
  //    them), the final states in fp32.
  std::vector<float> alpha(static_cast<std::size_t>(Bt * H * NC));
  for (std::int64_t e = 0; e < Bt * H * NC; ++e) alpha[static_cast<std::size_t>(e)] = dA[static_cast<std::size_t>(e * Q + Q - 1)];
  OpDims dp = d;
  dp.flat = P * N;
  std::vector<float> prev(state_count), final_states(static_cast<std::size_t>(Bt * H * P * N));
  state_passing_kernel(ctx, dp, states.data(), alpha.data(), a.initial_states ? init.data() : nullptr, seq, DType::f32,
                       prev.data(), final_states.data(), starts);
  if (ctx.has(Flaw::entering_states_bf16)) round_all(prev, DType::bf16);

  // 4. CB = C B^T in f32, operands in the dot dtype, masked by seq_idx.
  const DType dot = dot_dtype(C_dtype, a.B->dtype());
  std::vector<float> Cdot = C, Bdot = B;
  round_all(Cdot, dot);
  round_all(Bdot, dot);
  ctx.dot_operands(Cdot, dot);
  ctx.dot_operands(Bdot, dot);
  std::vector<float> cb(static_cast<std::size_t>(Bt * NC * G * Q * Q));
  chunk_coupling_kernel(ctx, d, Cdot.data(), Bdot.data(), seq, cb.data());

  // 5. Chunk scan.
  ScanInputs s;
  s.cb = cb.data();  // b_c_swapped already acted in the coupling (CB = B C^T)
  s.x = x.data();
  s.x_dtype = x_dtype;
  s.dt = dtp.data();
  s.dA = dA.data();
  s.C = C.data();
  s.C_dtype = C_dtype;
  s.states = prev.data();
  s.states_dtype = entering_dtype;
  s.D = a.D ? D.data() : nullptr;
  s.d_has_hdim = d.d_has_hdim;
  s.z = a.z ? z.data() : nullptr;
  const Shape shape{Bt, S, H, P};
  std::vector<float> out(static_cast<std::size_t>(element_count(shape))), out_x(a.z ? out.size() : 0);
  chunk_scan_kernel(ctx, d, s, seq, out.data(), out_x.data(), starts);

  Outputs result;
  result.add("out", to_tensor(output_dtype(p, "out"), shape, out), token_defined_mask(a.seq_idx, H * P));
  result.add("final_states", to_tensor(output_dtype(p, "final_states"), {Bt, H, P, N}, final_states));
  if (packed) {
    // 6. Each sequence's state at its last token (mamba_ssm's chunk_state_varlen).
    const std::int64_t count = static_cast<std::int64_t>(packed->start.size());
    std::vector<float> varlen(static_cast<std::size_t>(count * H * P * N));
    varlen_states_kernel(ctx, d, *packed, B.data(), x.data(), x_dtype, dtp.data(), prev.data(), varlen.data());
    if (ctx.has(Flaw::states_rounded_bf16)) round_all(varlen, DType::bf16);
    result.add("varlen_states", to_tensor(output_dtype(p, "varlen_states"), {count, H, P, N}, varlen));
  }
  return result;
}

}  // namespace ssd::emu
