// SSDChunkCouplingFwd in fp32: CB = C_c * B_c^T per (batch, chunk, group), dot operands in the
// common dot dtype, fp32 accumulation, seq_idx mask, stored in the output dtype.
#include "emu.h"
#include "ssd/reference/bind.h"
#include "ssd/reference/parallel.h"

namespace ssd::emu {

void chunk_coupling_kernel(const Ctx& ctx, const OpDims& d, const float* C, const float* B, const SeqIds& seq,
                           float* cb) {
  const ChunkGrid grid = d.grid();
  const std::int64_t Q = d.chunk, G = d.groups, N = d.dstate, S = d.seqlen;
  // b_c_swapped: rows from B and columns from C (the transpose).
  const float* rows = ctx.has(Flaw::b_c_swapped) ? B : C;
  const float* cols = ctx.has(Flaw::b_c_swapped) ? C : B;
#pragma omp parallel for schedule(static) if (worth_parallel(d.batch * d.chunks * G, 2 * Q * Q * N))
  for (std::int64_t block = 0; block < d.batch * d.chunks * G; ++block) {
    const std::int64_t b = block / (d.chunks * G), c = (block / G) % d.chunks, g = block % G;
    const std::int64_t L = grid.length(c), t0 = grid.start(c);
    float* out = cb + block * Q * Q;
    for (std::int64_t i = 0; i < Q; ++i)
      for (std::int64_t j = 0; j < Q; ++j) {
        float v = 0.0f;  // rows and columns of the padded tail are 0
        if (i < L && j < L && (!seq.present() || seq(b, t0 + i) == seq(b, t0 + j))) {
          const float* ri = rows + ((b * S + t0 + i) * G + g) * N;
          const float* cj = cols + ((b * S + t0 + j) * G + g) * N;
          v = ctx.sum(N, [&](std::int64_t n) { return ctx.mul(ri[n], cj[n]); });
        }
        out[i * Q + j] = v;
      }
  }
}

Outputs chunk_coupling(const Problem& p, const InputSet& in, const Ctx& ctx) {
  const ChunkCouplingArgs a = bind_chunk_coupling(p, in);
  const OpDims d = validate(a);
  const std::int64_t Q = d.chunk, G = d.groups;

  // Both operands converted to the dot dtype (a bf16 or f16 operand pulls the other down).
  const DType dot = dot_dtype(a.C->dtype(), a.B->dtype());
  std::vector<float> C = ctx.load(*a.C), B = ctx.load(*a.B);
  round_all(C, dot);
  round_all(B, dot);
  ctx.dot_operands(C, dot);
  ctx.dot_operands(B, dot);
  const Shape shape{d.batch, d.chunks, G, Q, Q};
  std::vector<float> cb(static_cast<std::size_t>(element_count(shape)));
  chunk_coupling_kernel(ctx, d, C.data(), B.data(), SeqIds(a.seq_idx, d.seqlen, ctx), cb.data());

  // Causal: the entries above the diagonal are computed here but, as in the oracle, undefined.
  std::vector<std::uint8_t> defined;
  if (a.causal) {
    defined.assign(cb.size(), 1);
    for (std::int64_t block = 0; block < d.batch * d.chunks * G; ++block)
      for (std::int64_t i = 0; i < Q; ++i)
        for (std::int64_t j = i + 1; j < Q; ++j) defined[static_cast<std::size_t>((block * Q + i) * Q + j)] = 0;
  }
  Outputs out;
  out.add("CB", to_tensor(output_dtype(p, "CB"), shape, cb), std::move(defined));
  return out;
}

}  // namespace ssd::emu
