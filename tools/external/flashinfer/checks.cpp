// The argument checks of FlashInfer's csrc/selective_state_update.cu (flashinfer-ai/flashinfer
// fb28d7242b35), ported check by check onto the shim's tensor descriptors, in csrc's order and with
// its messages, so that a call this shim accepts is one FlashInfer's binding accepts.
#include "ssu_internal.h"

namespace ssu {
namespace {

void check_cuda(Tensor const& t) { check(t.on_cuda(), t.name(), " must be a CUDA tensor"); }
void check_dim(int d, Tensor const& t) { check(t.dim() == d, t.name(), " must be a ", d, "D tensor"); }
void check_last_dim_contiguous(Tensor const& t) {
  check(t.stride(-1) == 1, t.name(), " must be contiguous at last dimension");
}
void check_contiguous(Tensor const& t) { check(t.is_contiguous(), t.name(), " must be contiguous"); }

void validate_state_tensor(Tensor const& state) {
  check_cuda(state);
  check_dim(4, state);  // state: {state_cache_size, nheads, dim, dstate}
  check(state.stride(3) == 1, "state dimension 3 (dstate) must have stride 1");
  check(state.stride(2) == state.size(3), "state dimension 2 (dim) must be contiguous with dimension 3");
  check(state.stride(1) == state.size(2) * state.size(3),
        "state dimension 1 (nheads) must be contiguous with dimension 2");
}

void validate_D_tensor(Tensor const& D, int64_t nheads, int64_t dim) {
  check_cuda(D);
  check_dim(2, D);
  check(D.size(0) == nheads, "D.size(0) must equal nheads");
  check(D.size(1) == dim, "D.size(1) must equal dim");
  check(D.stride(0) == 1, "D.stride(0) must be 1, got ", D.stride(0));
  check(D.stride(1) == 0, "D.stride(1) must be 0 (broadcasted), got ", D.stride(1));
}

void validate_A_tensor(Tensor const& A, int64_t nheads, int64_t dim, int64_t dstate) {
  check_cuda(A);
  check_dim(3, A);
  check(A.size(0) == nheads, "A.size(0) must equal nheads");
  check(A.size(1) == dim, "A.size(1) must equal dim");
  check(A.size(2) == dstate, "A.size(2) must equal dstate");
  check(A.stride(0) == 1, "A.stride(0) must be 1, got ", A.stride(0));
  check(A.stride(1) == 0, "A.stride(1) must be 0 (broadcasted), got ", A.stride(1));
  check(A.stride(2) == 0, "A.stride(2) must be 0 (broadcasted), got ", A.stride(2));
}

void validate_dt_bias_tensor(Tensor const& bias, int64_t nheads, int64_t dim) {
  if (!bias.has_value()) return;
  check_cuda(bias);
  check_dim(2, bias);
  check(bias.size(0) == nheads, "dt_bias.size(0) must equal nheads");
  check(bias.size(1) == dim, "dt_bias.size(1) must equal dim");
  check(bias.stride(0) == 1, "dt_bias.stride(0) must be 1, got ", bias.stride(0));
  check(bias.stride(1) == 0, "dt_bias.stride(1) must be 0 (broadcasted), got ", bias.stride(1));
}

// csrc names every index table "state_batch_indices" in these messages, dst's too.
void validate_state_batch_indices(Tensor const& sbi, int64_t batch, int64_t max_seqlen = 1) {
  if (!sbi.has_value()) return;
  check(sbi.dim() == 1 || sbi.dim() == 2, "state_batch_indices must be 1D or 2D, got ", sbi.dim(), "D");
  check(sbi.size(0) >= batch, "state_batch_indices.size(0) must be >= batch (", batch, ")");
  if (sbi.dim() == 2) {
    check(sbi.size(1) >= max_seqlen, "state_batch_indices.size(1) must be >= max_seqlen (", max_seqlen, ")");
  }
}

void validate_intermediate_state_indices(Tensor const& indices, int64_t batch) {
  if (!indices.has_value()) return;
  check_cuda(indices);
  check_dim(1, indices);
  check_contiguous(indices);
  check(indices.size(0) == batch, "intermediate_state_indices.shape must be (", batch, ")");
}

void validate_intermediate_states_buffer(Tensor const& buffer) {
  if (!buffer.has_value()) return;
  check_cuda(buffer);
  check_contiguous(buffer);
}

void validate_state_scale(Tensor const& scale, int64_t state_cache_size, int64_t nheads, int64_t dim) {
  if (!scale.has_value()) return;
  check_cuda(scale);
  check_dim(3, scale);
  check(scale.size(0) == state_cache_size, "state_scale.size(0) must equal state_cache_size");
  check(scale.size(1) == nheads, "state_scale.size(1) must equal nheads");
  check(scale.size(2) == dim, "state_scale.size(2) must equal dim");
  check(scale.stride(2) == 1, "state_scale.stride(2) must be 1, got ", scale.stride(2));
  check(scale.stride(1) == dim, "state_scale.stride(1) must equal dim, got ", scale.stride(1));
}

void validate_dtype_consistency(Tensor const& state, Tensor const& dt, Tensor const& D, Tensor const& x,
                                Tensor const& B, Tensor const& C, Tensor const& dt_bias, Tensor const& z,
                                Tensor const& out, Tensor const* intermediate_states_buffer) {
  check(D.dtype() == dt.dtype(), "D must have the same dtype as dt");
  check(B.dtype() == x.dtype(), "B must have the same dtype as x");
  check(C.dtype() == x.dtype(), "C must have the same dtype as x");
  if (dt_bias.has_value()) check(dt_bias.dtype() == dt.dtype(), "dt_bias must have the same dtype as dt");
  if (z.has_value()) check(z.dtype() == x.dtype(), "z must have the same dtype as x");
  if (out.has_value()) check(out.dtype() == x.dtype(), "out must have the same dtype as x");
  if (intermediate_states_buffer && intermediate_states_buffer->has_value()) {
    check(intermediate_states_buffer->dtype() == state.dtype(),
          "intermediate_states_buffer must have the same dtype as state");
  }
}

void check_same_index_dtype(Tensor const& a, Tensor const& b) {
  if (a.has_value() && b.has_value()) {
    check(a.dtype() == b.dtype(), a.name(), " and ", b.name(), " must have the same dtype");
  }
}

void check_rand_seed(Tensor const& rs) {
  if (!rs.has_value()) return;
  check_cuda(rs);
  check(rs.numel() == 1, "rand_seed must be a single-element tensor, got numel=", rs.numel());
  check(rs.dtype() == SSU_I64, "rand_seed must be int64");
}

// B, C, z and out of a single-token call: {batch, groups-or-heads, dim-or-dstate}, rows contiguous.
void check_stp_rows(Tensor const& t, int64_t batch, int64_t rows, char const* rows_name, int64_t width,
                    char const* width_name) {
  check_cuda(t);
  check_dim(3, t);
  check(t.size(0) == batch, t.name(), ".size(0) must equal batch");
  check(t.size(1) == rows, t.name(), ".size(1) must equal ", rows_name);
  check(t.size(2) == width, t.name(), ".size(2) must equal ", width_name);
  check_last_dim_contiguous(t);
  check(t.stride(1) == width, t.name(), ".stride(1) must equal ", width_name, ", got ", t.stride(1),
        " expected ", width);
}

Shape validate_stp(ssu_call const& c) {
  Tensor state(c.state, "state"), x(c.x, "x"), dt(c.dt, "dt"), A(c.A, "A"), B(c.B, "B"), C(c.C, "C"),
      D(c.D, "D"), z(c.z, "z"), dt_bias(c.dt_bias, "dt_bias"), sbi(c.state_batch_indices, "state_batch_indices"),
      dsbi(c.dst_state_batch_indices, "dst_state_batch_indices"), scale(c.state_scale, "state_scale"),
      out(c.output, "out"), rs(c.rand_seed, "rand_seed");
  check_dim(4, state);  // csrc reads state.size(3) first; its TensorView would fault on a 3D one
  Shape s;
  s.batch = x.size(0);
  s.state_cache_size = state.size(0);
  s.nheads = state.size(1);
  s.dim = state.size(2);
  s.dstate = state.size(3);
  check(B.dim() >= 2, "B must be a 3D tensor");
  s.ngroups = B.size(1);
  check(s.state_cache_size >= s.batch, "state.size(0) must be >= x.size(0)");
  check(s.ngroups != 0 && s.nheads % s.ngroups == 0, "nheads must be divisible by ngroups");

  check_cuda(x);
  check_dim(3, x);
  check(x.size(1) == s.nheads, "x.size(1) must equal nheads");
  check(x.size(2) == s.dim, "x.size(2) must equal dim");
  check_last_dim_contiguous(x);
  check(x.stride(1) == s.dim, "x.stride(1) must equal dim, got ", x.stride(1), " expected ", s.dim);

  check_cuda(dt);
  check_dim(3, dt);
  check(dt.size(0) == s.batch, "dt.size(0) must equal batch");
  check(dt.size(1) == s.nheads, "dt.size(1) must equal nheads");
  check(dt.size(2) == s.dim, "dt.size(2) must equal dim");
  check(dt.stride(1) == 1, "dt.stride(1) must be 1, got ", dt.stride(1));
  check(dt.stride(2) == 0, "dt.stride(2) must be 0 (broadcasted), got ", dt.stride(2));

  validate_state_tensor(state);
  validate_D_tensor(D, s.nheads, s.dim);
  validate_A_tensor(A, s.nheads, s.dim, s.dstate);
  validate_dt_bias_tensor(dt_bias, s.nheads, s.dim);
  validate_state_batch_indices(sbi, s.batch);
  validate_state_batch_indices(dsbi, s.batch);

  check_stp_rows(B, s.batch, s.ngroups, "ngroups", s.dstate, "dstate");
  check_stp_rows(C, s.batch, s.ngroups, "ngroups", s.dstate, "dstate");
  if (z.has_value()) check_stp_rows(z, s.batch, s.nheads, "nheads", s.dim, "dim");
  if (out.has_value()) {
    check_cuda(out);
    check_contiguous(out);
    check_stp_rows(out, s.batch, s.nheads, "nheads", s.dim, "dim");
  }

  validate_dtype_consistency(state, dt, D, x, B, C, dt_bias, z, out, nullptr);
  validate_state_scale(scale, s.state_cache_size, s.nheads, s.dim);
  check_same_index_dtype(sbi, dsbi);
  if (dsbi.has_value()) check_cuda(dsbi);
  check_rand_seed(rs);
  return s;
}

// x, dt, B, C, z and out of a multi-token call: {batch, T, rows, width}, or {tokens, rows, width} varlen.
void check_mtp_shape(Tensor const& t, Shape const& s, int64_t rows, char const* rows_name, int64_t width,
                     char const* width_name) {
  if (s.varlen) {
    check_dim(3, t);
    check(t.size(1) == rows, t.name(), ".size(1) must equal ", rows_name);
    check(t.size(2) == width, t.name(), ".size(2) must equal ", width_name);
  } else {
    check_dim(4, t);
    check(t.size(0) == s.batch, t.name(), ".size(0) must equal batch");
    check(t.size(1) == s.ntokens_mtp, t.name(), ".size(1) must equal ntokens_mtp");
    check(t.size(2) == rows, t.name(), ".size(2) must equal ", rows_name);
    check(t.size(3) == width, t.name(), ".size(3) must equal ", width_name);
  }
}

Shape validate_mtp(ssu_call const& c) {
  Tensor state(c.state, "state"), x(c.x, "x"), dt(c.dt, "dt"), A(c.A, "A"), B(c.B, "B"), C(c.C, "C"),
      D(c.D, "D"), z(c.z, "z"), dt_bias(c.dt_bias, "dt_bias"), sbi(c.state_batch_indices, "state_batch_indices"),
      dsbi(c.dst_state_batch_indices, "dst_state_batch_indices"), scale(c.state_scale, "state_scale"),
      out(c.output, "out"), inter(c.intermediate_states_buffer, "intermediate_states_buffer"),
      inter_idx(c.intermediate_state_indices, "intermediate_state_indices"),
      inter_scales(c.intermediate_state_scales, "intermediate_state_scales"), rs(c.rand_seed, "rand_seed"),
      cu(c.cu_seqlens, "cu_seqlens"), nat(c.num_accepted_tokens, "num_accepted_tokens");
  check_dim(4, state);
  Shape s;
  s.mtp = true;
  s.varlen = x.dim() == 3 && cu.has_value();
  s.state_cache_size = state.size(0);
  s.nheads = state.size(1);
  s.dim = state.size(2);
  s.dstate = state.size(3);

  check_cuda(x);
  if (s.varlen) {
    check_dim(3, x);
    check(x.size(1) == s.nheads, "x.size(1) must equal nheads");
    check(x.size(2) == s.dim, "x.size(2) must equal dim");
    check_last_dim_contiguous(x);
    check(x.stride(1) == s.dim, "x.stride(1) must equal dim");
    check(cu.dim() >= 1, "cu_seqlens must be a 1D tensor");
    s.batch = cu.size(0) - 1;
    check(c.cache_steps >= 1, "cache_steps must be >= 1 in varlen mode (specifies max_seqlen)");
    s.ntokens_mtp = c.cache_steps;
  } else {
    check_dim(4, x);
    s.batch = x.size(0);
    s.ntokens_mtp = x.size(1);
    check(x.size(2) == s.nheads, "x.size(2) must equal nheads");
    check(x.size(3) == s.dim, "x.size(3) must equal dim");
    check_last_dim_contiguous(x);
    check(x.stride(2) == s.dim, "x.stride(2) must equal dim, got ", x.stride(2), " expected ", s.dim);
  }
  check(B.dim() >= (s.varlen ? 2 : 3), "B must be a ", s.varlen ? 3 : 4, "D tensor");
  s.ngroups = s.varlen ? B.size(1) : B.size(2);
  check(s.state_cache_size >= s.batch, "state.size(0) must be >= batch");
  check(s.ngroups != 0 && s.nheads % s.ngroups == 0, "nheads must be divisible by ngroups");

  check_cuda(dt);
  if (s.varlen) {
    check_dim(3, dt);
    check(dt.size(1) == s.nheads, "dt.size(1) must equal nheads");
    check(dt.stride(1) == 1, "dt.stride(1) must be 1");
    check(dt.stride(2) == 0, "dt.stride(2) must be 0 (broadcasted)");
  } else {
    check_dim(4, dt);
    check(dt.size(0) == s.batch, "dt.size(0) must equal batch");
    check(dt.size(1) == s.ntokens_mtp, "dt.size(1) must equal ntokens_mtp");
    check(dt.size(2) == s.nheads, "dt.size(2) must equal nheads");
    check(dt.stride(2) == 1, "dt.stride(2) must be 1");
    check(dt.stride(3) == 0, "dt.stride(3) must be 0 (broadcasted)");
  }

  validate_state_tensor(state);
  validate_D_tensor(D, s.nheads, s.dim);
  validate_A_tensor(A, s.nheads, s.dim, s.dstate);
  validate_dt_bias_tensor(dt_bias, s.nheads, s.dim);
  validate_state_batch_indices(sbi, s.batch, s.ntokens_mtp);
  validate_state_batch_indices(dsbi, s.batch, s.ntokens_mtp);

  check_cuda(B);
  check_mtp_shape(B, s, s.ngroups, "ngroups", s.dstate, "dstate");
  check_last_dim_contiguous(B);
  check_cuda(C);
  check_mtp_shape(C, s, s.ngroups, "ngroups", s.dstate, "dstate");
  check_last_dim_contiguous(C);
  if (z.has_value()) {
    check_cuda(z);
    check_mtp_shape(z, s, s.nheads, "nheads", s.dim, "dim");
    check_last_dim_contiguous(z);
  }
  if (out.has_value()) {
    check_cuda(out);
    check_last_dim_contiguous(out);
    check_mtp_shape(out, s, s.nheads, "nheads", s.dim, "dim");
  }

  validate_dtype_consistency(state, dt, D, x, B, C, dt_bias, z, out, &inter);
  validate_intermediate_state_indices(inter_idx, s.batch);
  validate_intermediate_states_buffer(inter);
  validate_state_scale(scale, s.state_cache_size, s.nheads, s.dim);
  check_same_index_dtype(sbi, inter_idx);
  check_same_index_dtype(sbi, dsbi);
  check(c.cache_steps >= 0, "cache_steps must be non-negative, got ", c.cache_steps);

  if (dsbi.has_value()) check_cuda(dsbi);
  if (cu.has_value()) {
    check_cuda(cu);
    check_dim(1, cu);
    check_contiguous(cu);
    check(cu.size(0) == s.batch + 1, "cu_seqlens.size(0) must equal n_sequences + 1 (", s.batch + 1, ")");
  }
  if (nat.has_value()) {
    check_cuda(nat);
    check_dim(1, nat);
    check_contiguous(nat);
    check(nat.size(0) >= s.batch, "num_accepted_tokens.size(0) must be >= n_sequences (", s.batch, ")");
    check(sbi.has_value(), "state_batch_indices is required when num_accepted_tokens is provided");
  }
  check(!(dsbi.has_value() && inter.has_value()),
        "dst_state_batch_indices and intermediate_states_buffer are mutually exclusive");
  if (inter_scales.has_value()) {
    check_cuda(inter_scales);
    check_contiguous(inter_scales);
    check_dim(4, inter_scales);
    check(inter_scales.size(0) == s.batch, "intermediate_state_scales.size(0) must equal batch");
    check(inter_scales.size(1) == c.cache_steps, "intermediate_state_scales.size(1) must equal cache_steps");
    check(inter_scales.size(2) == s.nheads, "intermediate_state_scales.size(2) must equal nheads");
    check(inter_scales.size(3) == s.dim, "intermediate_state_scales.size(3) must equal dim");
  }
  check_rand_seed(rs);
  return s;
}

}  // namespace

// csrc's selective_state_update(): the single-token path for a 3D x without cu_seqlens, the
// multi-token path for a 4D x or a 3D x with cu_seqlens.
Shape validate(ssu_call const& call) {
  Tensor x(call.x, "x"), output(call.output, "output"), cu(call.cu_seqlens, "cu_seqlens");
  // The binding's `output` is a TensorView, not Optional: the Python wrapper always passes one.
  check(output.has_value(), "output is required (the Python wrapper allocates it when out is None)");
  bool const has_cu_seqlens = cu.has_value();
  if (x.dim() == 3 && !has_cu_seqlens) return validate_stp(call);
  if (x.dim() == 4 || (x.dim() == 3 && has_cu_seqlens)) return validate_mtp(call);
  check(false, "x must have 3 dimensions (single-token) or 4 dimensions (multi-token), got ", x.dim());
  return {};
}

}  // namespace ssu
