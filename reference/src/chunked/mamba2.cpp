// Mamba2Fwd, chunked form: one fused pass per (batch, head) over the chunks, carrying the state.
// It shares only the named helpers with the stage ops (dt pipeline, stable segsum, decays), so the
// stage ops composed and this fused pass are two implementations that a property test compares.
#include <algorithm>
#include <optional>
#include <vector>

#include "eigen_views.h"
#include "gating.h"
#include "ssd/reference/helpers.h"
#include "ssd/reference/oracle.h"
#include "ssd/reference/parallel.h"
#include "ssd/reference/validate.h"
#include "../check.h"
#include "../slices.h"

namespace ssd {
namespace {

// A packed batch, one sequence at a time: each sequence's inputs cut out of the row, computed as
// a batch of its own (from its initial state or zero, its chunk grid starting at its first
// token), and its outputs put back. Padding tokens are left undefined; final_states is the state
// at the end of the row (zero after padding, as the kernels give it).
Outputs mamba2_per_sequence(const Mamba2Args& a, const OpDims& d) {
  const PackedSequences packed = Check{"mamba2"}.packed_sequences(*a.seq_idx);
  const std::int64_t HP = d.heads * d.headdim, HPN = HP * d.dstate;
  Tensor out(DType::f64, {1, d.seqlen, d.heads, d.headdim}), final_states(DType::f64, {1, d.heads, d.headdim, d.dstate});
  Tensor varlen_states(DType::f64, {packed.count(), d.heads, d.headdim, d.dstate});
  for (std::int64_t j = 0; j < packed.count(); ++j) {
    const std::int64_t start = packed.start[static_cast<std::size_t>(j)], length = packed.length[static_cast<std::size_t>(j)];
    const Tensor x = token_slice(*a.x, start, length), dt = token_slice(*a.dt, start, length);
    const Tensor B = token_slice(*a.B, start, length), C = token_slice(*a.C, start, length);
    const std::optional<Tensor> z = a.z ? std::optional(token_slice(*a.z, start, length)) : std::nullopt;
    const bool has = a.initial_states && (!a.has_initial_states || (*a.has_initial_states)[j] != 0.0);
    const std::optional<Tensor> init = has ? std::optional(row_slice(*a.initial_states, j)) : std::nullopt;
    Mamba2Args one = a;
    one.x = &x;
    one.dt = &dt;
    one.B = &B;
    one.C = &C;
    one.z = z ? &*z : nullptr;
    one.initial_states = init ? &*init : nullptr;
    one.seq_idx = nullptr;
    one.varlen = false;
    one.has_initial_states = nullptr;
    one.cu_seqlens = one.chunk_indices = one.chunk_offsets = nullptr;
    one.cu_chunk_seqlens = one.chunk_seq_idx = one.last_chunk_indices = nullptr;
    const Outputs sequence = mamba2_chunked(one);
    std::copy_n(sequence.get("out").value.data(), length * HP, out.data() + start * HP);
    std::copy_n(sequence.get("final_states").value.data(), HPN, varlen_states.data() + j * HPN);
  }
  if (packed.padding() == 0)
    std::copy_n(varlen_states.data() + (packed.count() - 1) * HPN, HPN, final_states.data());
  Outputs result;
  result.add("out", std::move(out), token_defined_mask(a.seq_idx, HP));
  result.add("final_states", std::move(final_states));
  result.add("varlen_states", std::move(varlen_states));
  return result;
}

}  // namespace

Outputs mamba2_chunked(const Mamba2Args& a) {
  const OpDims d = validate(a);
  if (a.varlen) return mamba2_per_sequence(a, d);
  const ChunkGrid grid = d.grid();
  const std::int64_t S = d.seqlen, NC = d.chunks;
  const std::int64_t H = d.heads, P = d.headdim, G = d.groups, N = d.dstate;

  // C_c * B_c^T per (batch, chunk, group), shared by the heads of a group, masked to same-sequence pairs.
  std::vector<RowMatrix> coupling(static_cast<std::size_t>(d.batch * NC * G));
#pragma omp parallel for schedule(static) if (worth_parallel(d.batch * NC * G, 2 * d.chunk * d.chunk * N))
  for (std::int64_t block = 0; block < d.batch * NC * G; ++block) {
    const std::int64_t b = block / (NC * G), c = (block / G) % NC, g = block % G;
    const std::int64_t L = grid.length(c), offset = ((b * S + grid.start(c)) * G + g) * N;
    RowMatrix cb = strided(a.C->data() + offset, L, N, G * N) * strided(a.B->data() + offset, L, N, G * N).transpose();
    if (a.seq_idx) {
      const double* ids = a.seq_idx->data() + b * S + grid.start(c);
      for (std::int64_t i = 0; i < L; ++i)
        for (std::int64_t j = 0; j < L; ++j)
          if (ids[i] != ids[j]) cb(i, j) = 0.0;
    }
    coupling[static_cast<std::size_t>(block)] = std::move(cb);
  }

  Tensor out(DType::f64, {d.batch, S, H, P}), final_states(DType::f64, {d.batch, H, P, N});
#pragma omp parallel for schedule(dynamic) if (worth_parallel(d.batch * H, NC * (2 * d.chunk * (d.chunk + 2 * N) * P + 20 * d.chunk * d.chunk)))
  for (std::int64_t bh = 0; bh < d.batch * H; ++bh) {
    const std::int64_t b = bh / H, h = bh % H, g = d.group_of(h);
    const double A = (*a.A)[h];
    const double bias = a.dt_bias ? (*a.dt_bias)[h] : 0.0;
    const double* ids = a.seq_idx ? a.seq_idx->data() + b * S : nullptr;
    RowMatrix M = a.initial_states ? RowMatrix(strided(a.initial_states->data() + bh * P * N, P, N, N))
                                   : RowMatrix::Zero(P, N);
    double previous_id = static_cast<double>(kSeqIdBeforeStart);  // id at the end of the previous chunk

    for (std::int64_t c = 0; c < NC; ++c) {
      const std::int64_t L = grid.length(c), t0 = grid.start(c);
      Eigen::VectorXd dtp(L), decay_step(L);
      for (std::int64_t k = 0; k < L; ++k) {
        dtp(k) = process_dt((*a.dt)[(b * S + t0 + k) * H + h], bias, a.dt_softplus, a.dt_limit);
        decay_step(k) = A * dtp(k);
      }
      const Eigen::MatrixXd seg = segsum(decay_step);  // seg(i,k) = sum of steps k+1..i
      const std::int64_t x_offset = (b * S + t0) * H * P + h * P;
      auto X = strided(a.x->data() + x_offset, L, P, H * P);
      const std::int64_t bc_offset = ((b * S + t0) * G + g) * N;
      auto C = strided(a.C->data() + bc_offset, L, N, G * N);
      auto B = strided(a.B->data() + bc_offset, L, N, G * N);
      const RowMatrix& cb = coupling[static_cast<std::size_t>((b * NC + c) * G + g)];

      // Output: carried-in state (for tokens of the sequence active at the previous chunk's end),
      // plus the causal within-chunk term.
      RowMatrix Y = C * M.transpose();
      double cumsum = 0.0;
      for (std::int64_t i = 0; i < L; ++i) {
        cumsum += decay_step(i);
        const bool carries = !ids || ids[t0 + i] == previous_id;
        Y.row(i) *= carries ? chunk_start_decay(cumsum) : 0.0;
      }
      RowMatrix coefficient = RowMatrix::Zero(L, L);
      for (std::int64_t i = 0; i < L; ++i)
        for (std::int64_t k = 0; k <= i; ++k) coefficient(i, k) = cb(i, k) * std::exp(std::min(seg(i, k), 0.0)) * dtp(k);
      Y.noalias() += coefficient * X;
      for (std::int64_t i = 0; i < L; ++i)
        for (std::int64_t p = 0; p < P; ++p) {
          const std::int64_t flat = x_offset + i * H * P + p;
          const double y = Y(i, p) + skip_coefficient(a.D, d.d_has_hdim, h, p, P) * X(i, p);
          out.data()[flat] = a.z ? gate(y, (*a.z)[flat]) : y;
        }

      // State update: this chunk's own state holds only tokens of the sequence active at its last
      // token (none if that token is padding); the carried state survives only if that sequence
      // is the one the previous chunk ended in.
      const double last_id = ids ? ids[t0 + L - 1] : 0.0;
      Eigen::VectorXd w(L);
      for (std::int64_t k = 0; k < L; ++k) {
        const bool same_sequence = !ids || (last_id >= 0 && ids[t0 + k] == last_id);
        w(k) = same_sequence ? std::exp(std::min(seg(L - 1, k), 0.0)) * dtp(k) : 0.0;
      }
      const double carry = (!ids || last_id == previous_id) ? chunk_total_decay(cumsum) : 0.0;
      RowMatrix chunk_state = X.transpose() * (w.asDiagonal() * B);
      M = carry * M + chunk_state;
      previous_id = last_id;
    }
    strided(final_states.data() + bh * P * N, P, N, N) = M;
  }
  Outputs result;
  result.add("out", std::move(out), token_defined_mask(a.seq_idx, H * P));
  result.add("final_states", std::move(final_states));
  return result;
}

}  // namespace ssd
