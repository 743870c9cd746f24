// SSDChunkScanFwd in fp32: carried-in term (entering states rounded to C's dtype, C.state dot,
// times the unclamped exp(dA[i]), seq-masked), plus the causal within-chunk term whose
// coefficient cb * exp(min(dA[i] - dA[k], 0)) * dt[k] is rounded to x's dtype before the dot with
// x, plus D*x, then the z gate. One fp32 accumulator per output element, as in the kernel.
#include "emu.h"
#include "ssd/reference/bind.h"
#include "ssd/reference/parallel.h"
#include "ssd/reference/helpers.h"

namespace ssd::emu {

void chunk_scan_kernel(const Ctx& ctx, const OpDims& d, const ScanInputs& in, const SeqIds& seq, float* out,
                       float* out_x, const PackedStarts* packed) {
  const ChunkGrid grid = d.grid();
  const std::int64_t Q = d.chunk, H = d.heads, P = d.headdim, G = d.groups, N = d.dstate, S = d.seqlen;
  // Number of within-chunk terms of row i (k = 0 .. count-1): k <= i, or a flawed causal mask.
  auto terms = [&](std::int64_t i, std::int64_t L) -> std::int64_t {
    if (ctx.has(Flaw::diagonal_dropped)) return i;
    if (ctx.has(Flaw::superdiagonal_added)) return std::min(i + 2, L);
    return i + 1;
  };
#pragma omp parallel for schedule(dynamic) if (worth_parallel(d.batch * d.chunks * H, 2 * Q * (Q + N) * P + 20 * Q * Q))
  for (std::int64_t item = 0; item < d.batch * d.chunks * H; ++item) {
    const std::int64_t b = item / (d.chunks * H), c = (item / H) % d.chunks, h = item % H;
    const std::int64_t g = ctx.group(d, h);
    const std::int64_t L = grid.length(c), t0 = grid.start(c);
    const std::int64_t chunk_base = ((b * H + h) * d.chunks + c) * Q;
    const float* dA = in.dA + chunk_base;
    const float* dt = in.dt + chunk_base;
    const float* cb = in.cb + ((b * d.chunks + c) * G + g) * Q * Q;

    // Entering states in the state dtype (C's dtype unless given).
    const DType entering_dtype = in.states_dtype.value_or(in.C_dtype);
    std::vector<float> prev(static_cast<std::size_t>(P * N));
    for (std::int64_t e = 0; e < P * N; ++e)
      prev[static_cast<std::size_t>(e)] =
          ctx.dot_operand(round_float(entering_dtype, in.states[item * P * N + e]), entering_dtype);
    // Within-chunk coefficients (cb * decay) * dt, rounded to x's dtype.
    std::vector<float> coefficient(static_cast<std::size_t>(L * L), 0.0f);
    for (std::int64_t i = 0; i < L; ++i)
      for (std::int64_t k = 0; k < terms(i, L); ++k) {
        const float cbv = in.cb_transposed ? cb[k * Q + i] : cb[i * Q + k];
        const float decay = ctx.exp(std::fmin(ctx.sub(ctx.decay_arg(dA[i]), ctx.decay_arg(dA[k])), 0.0f));
        coefficient[static_cast<std::size_t>(i * L + k)] =
            ctx.dot_operand(round_float(in.x_dtype, ctx.mul(ctx.mul(cbv, decay), dt[k])), in.x_dtype);
      }

    // packing_dependent_sum: a kernel that picks its reduction by the batch's composition (right to
    // left when it packs more than two sequences): within every bound, but a sequence's out then
    // depends on its neighbours, and a token's on whether later sequences follow.
    const bool reversed = ctx.has(Flaw::packing_dependent_sum) && packed && packed->start.size() > 2;
    // The id before the chunk: 0 before the first (mamba_ssm), none in a packed batch.
    const std::int64_t previous_id = c >= 1 && seq.present() ? seq(b, t0 - 1) : packed ? -1 : 0;
    for (std::int64_t i = 0; i < L; ++i) {
      const std::int64_t t = t0 + i;
      const bool carries = !seq.present() || seq(b, t) == previous_id;
      // A packed sequence that starts in this chunk reads its own initial state instead, decayed
      // from its start.
      const std::int64_t j = packed && !carries ? seq(b, t) : -1;
      const bool own_init = j >= 0 && packed->has_init(j);
      const float scale = carries ? ctx.exp(ctx.decay_arg(dA[i])) : own_init ? packed->decay_from_start(ctx, d, h, c, j, i) : 0.0f;
      const float* Ct = in.C + ((b * S + t) * G + g) * N;
      const float* row = coefficient.data() + i * L;
      for (std::int64_t p = 0; p < P; ++p) {
        const float* prev_p = own_init ? packed->init_entering + (j * H + h) * P * N + p * N : prev.data() + p * N;
        const float off = ctx.mul(
            ctx.sum(N, [&](std::int64_t n) { return ctx.mul(ctx.dot_operand(Ct[n], in.C_dtype), prev_p[n]); }), scale);
        const float* xp = in.x + ((b * S + t0) * H + h) * P + p;
        const std::int64_t count = terms(i, L);
        float y = ctx.sum(
            count,
            [&](std::int64_t m) {
              const std::int64_t k = reversed ? count - 1 - m : m;
              return ctx.mul(row[k], ctx.dot_operand(xp[k * H * P], in.x_dtype));
            },
            off);
        const std::int64_t flat = ((b * S + t) * H + h) * P + p;
        if (in.D) y = ctx.add(y, ctx.mul(in.x[flat], in.d_has_hdim ? in.D[h * P + p] : in.D[h]));
        if (in.z) {
          out_x[flat] = y;
          y = ctx.gate(y, in.z[flat]);
        }
        out[flat] = y;
      }
    }
  }
}

Outputs chunk_scan(const Problem& p, const InputSet& in, const Ctx& ctx) {
  const ChunkScanArgs a = bind_chunk_scan(p, in);
  const OpDims d = validate(a);

  const std::vector<float> cb = ctx.load(*a.cb), x = ctx.load(*a.x), dt = ctx.load(*a.dt), dA = ctx.load(*a.dA_cumsum),
                           C = ctx.load(*a.C), states = ctx.load(*a.states), D = ctx.load(a.D), z = ctx.load(a.z);
  ScanInputs s;
  s.cb = cb.data();
  s.cb_transposed = ctx.has(Flaw::b_c_swapped);  // no C/B pair here: the flaw reads cb transposed
  s.x = x.data();
  s.x_dtype = a.x->dtype();
  s.dt = dt.data();
  s.dA = dA.data();
  s.C = C.data();
  s.C_dtype = a.C->dtype();
  s.states = states.data();
  s.D = a.D ? D.data() : nullptr;
  s.d_has_hdim = d.d_has_hdim;
  s.z = a.z ? z.data() : nullptr;
  const Shape shape{d.batch, d.seqlen, d.heads, d.headdim};
  std::vector<float> out(static_cast<std::size_t>(element_count(shape))), out_x(a.z ? out.size() : 0);
  chunk_scan_kernel(ctx, d, s, SeqIds(a.seq_idx, d.seqlen, ctx), out.data(), out_x.data());

  Outputs result;
  result.add("out", to_tensor(output_dtype(p, "out"), shape, out), token_defined_mask(a.seq_idx, d.heads * d.headdim));
  if (a.z)
    result.add("out_x", to_tensor(output_dtype(p, "out_x"), shape, out_x),
               token_defined_mask(a.seq_idx, d.heads * d.headdim));
  return result;
}

}  // namespace ssd::emu
