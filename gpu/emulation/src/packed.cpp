// Packed varlen batches in fp32, as the global-grid kernels run them (vLLM up to 0.10, mamba_ssm's
// chunk_state_varlen): where each sequence starts, its initial state decayed from its start, and
// each sequence's state at its last token.
#include "emu.h"
#include "ssd/reference/parallel.h"

namespace ssd::emu {

std::int64_t PackedStarts::sequence_of(std::int64_t t) const {
  for (std::size_t j = 0; j < start.size(); ++j)
    if (t >= start[j] && t < end[j]) return static_cast<std::int64_t>(j);
  return -1;
}

float PackedStarts::decay_from_start(const Ctx& ctx, const OpDims& d, std::int64_t h, std::int64_t c, std::int64_t j,
                                     std::int64_t to) const {
  const float* dAc = dA + (h * d.chunks + c) * d.chunk;
  const std::int64_t o = start[static_cast<std::size_t>(j)] - c * d.chunk;
  // init_decay_step_short reads the base one token late: the first step of the sequence is lost.
  const std::int64_t base = ctx.has(Flaw::init_decay_step_short) ? o : o - 1;
  return ctx.exp(base >= 0 ? ctx.sub(dAc[to], dAc[base]) : dAc[to]);
}

PackedStarts packed_starts(const Ctx& ctx, const Tensor& seq_idx, const float* init, const Tensor* has,
                           const float* dA) {
  PackedStarts s;
  const std::int64_t S = seq_idx.numel();
  for (std::int64_t t = 0; t < S; ++t) {
    const auto id = static_cast<std::int64_t>(seq_idx[t]);
    if (id < 0) break;
    if (t == 0 || id != static_cast<std::int64_t>(seq_idx[t - 1])) {
      s.start.push_back(t);
      s.end.push_back(t + 1);
    } else {
      s.end.back() = t + 1;
    }
  }
  s.init = init;
  if (ctx.has(Flaw::single_sequence_init_dropped) && s.start.size() == 1) s.init = nullptr;
  for (std::size_t j = 0; j < s.start.size(); ++j)
    s.has.push_back(has == nullptr || ctx.has(Flaw::has_initial_states_ignored) || (*has)[static_cast<std::int64_t>(j)] != 0.0);
  s.dA = dA;
  return s;
}

void varlen_states_kernel(const Ctx& ctx, const OpDims& d, const PackedStarts& packed, const float* B, const float* x,
                          DType x_dtype, const float* dt, const float* running, float* varlen_states) {
  const std::int64_t Q = d.chunk, H = d.heads, P = d.headdim, G = d.groups, N = d.dstate, NC = d.chunks;
  const auto count = static_cast<std::int64_t>(packed.start.size());
#pragma omp parallel for schedule(static) if (worth_parallel(count * H, 2 * Q * P * N))
  for (std::int64_t item = 0; item < count * H; ++item) {
    const std::int64_t j = item / H, h = item % H, g = ctx.group(d, h);
    const std::int64_t last = packed.end[static_cast<std::size_t>(j)] - 1, c = last / Q, e = last - c * Q;
    const std::int64_t first = std::max<std::int64_t>(packed.start[static_cast<std::size_t>(j)] - c * Q, 0);
    const bool began_before = packed.start[static_cast<std::size_t>(j)] < c * Q;
    const float* dAc = packed.dA + (h * NC + c) * Q;
    const float* dtc = dt + (h * NC + c) * Q;
    std::vector<float> Bw(static_cast<std::size_t>((e - first + 1) * N));
    for (std::int64_t k = first; k <= e; ++k) {
      const float w = ctx.mul(ctx.exp(std::fmin(ctx.sub(dAc[e], dAc[k]), 0.0f)), dtc[k]);
      const float* Bk = B + ((c * Q + k) * G + g) * N;
      for (std::int64_t n = 0; n < N; ++n)
        Bw[static_cast<std::size_t>((k - first) * N + n)] = ctx.dot_operand(round_float(x_dtype, ctx.mul(Bk[n], w)), x_dtype);
    }
    const float carry = began_before ? ctx.exp(dAc[e]) : packed.has_init(j) ? packed.decay_from_start(ctx, d, h, c, j, e) : 0.0f;
    const float* entering = began_before ? running + (c * H + h) * P * N
                                         : packed.has_init(j) ? packed.init + (j * H + h) * P * N : nullptr;
    for (std::int64_t p = 0; p < P; ++p)
      for (std::int64_t n = 0; n < N; ++n) {
        const float carried = entering ? ctx.mul(carry, entering[p * N + n]) : 0.0f;
        varlen_states[(j * H + h) * P * N + p * N + n] = ctx.sum(
            e - first + 1,
            [&](std::int64_t k) {
              return ctx.mul(ctx.dot_operand(x[((c * Q + first + k) * H + h) * P + p], x_dtype),
                             Bw[static_cast<std::size_t>(k * N + n)]);
            },
            carried);
      }
  }
}

}  // namespace ssd::emu
