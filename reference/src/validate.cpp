// Argument validation shared by both oracle forms: presence, rank, shapes, dtypes, sizes, seq_idx.
#include "ssd/reference/validate.h"

#include <cmath>
#include <string>
#include <vector>

#include "check.h"

namespace ssd {
namespace {

// Checks rank and that every extent is positive; returns the shape. `dims` names the axes,
// e.g. "[Bt,S,H,P]"; an empty input (S = 0, H = 0, ...) is rejected naming the axis.
const Shape& extents(const char* op, const char* name, const Tensor& t, int rank, const char* dims) {
  check::rank(op, name, t, rank, dims);
  for (int i = 0; i < rank; ++i) {
    if (t.shape()[static_cast<std::size_t>(i)] > 0) continue;
    // Pull the i-th axis name out of "[A,B,C]".
    std::string all(dims), axis;
    int index = 0;
    for (char ch : all.substr(1, all.size() - 2)) {
      if (ch == ',') { ++index; continue; }
      if (index == i) axis.push_back(ch);
    }
    throw ArgumentError(op, name, "shape " + shape_string(t.shape()) + " has " + axis +
                                      " = 0; every extent of " + dims + " must be positive");
  }
  return t.shape();
}

const Tensor& float_input(const char* op, const char* name, const Tensor* t) {
  const Tensor& r = check::required(op, name, t);
  check::float_dtype(op, name, r);
  return r;
}

void optional_float(const char* op, const char* name, const Tensor* t, const Shape& expected, const char* dims) {
  if (t == nullptr) return;
  check::float_dtype(op, name, *t);
  check::shape(op, name, *t, expected, dims);
}

void check_limit(const char* op, DtLimit limit) {
  if (std::isnan(limit.lo) || std::isnan(limit.hi) || limit.lo > limit.hi)
    throw ArgumentError(op, "dt_limit", "(" + std::to_string(limit.lo) + ", " + std::to_string(limit.hi) +
                                            ") must satisfy lo <= hi");
}

// D as [H] or [H,P].
void check_D(const char* op, const Tensor* D, OpDims& d) {
  if (D == nullptr) return;
  check::float_dtype(op, "D", *D);
  if (D->shape() == Shape{d.heads}) return;
  if (D->shape() == Shape{d.heads, d.headdim}) {
    d.d_has_hdim = true;
    return;
  }
  throw ArgumentError(op, "D", "shape " + shape_string(D->shape()) + ", expected [H] = " +
                                   shape_string({d.heads}) + " or [H,P] = " + shape_string({d.heads, d.headdim}));
}

// x [Bt,S,H,P] and B-like [Bt,S,G,N] (C must match B): fills batch, seqlen, heads, headdim, groups, dstate.
void token_major(const char* op, const Tensor& x, const char* bname, const Tensor& B, OpDims& d) {
  const Shape& xs = extents(op, "x", x, 4, "[Bt,S,H,P]");
  d.batch = xs[0];
  d.seqlen = xs[1];
  d.heads = xs[2];
  d.headdim = xs[3];
  const Shape& bs = extents(op, bname, B, 4, "[Bt,S,G,N]");
  if (bs[0] != d.batch || bs[1] != d.seqlen)
    throw ArgumentError(op, bname, "shape " + shape_string(bs) + " disagrees with x " + shape_string(xs) +
                                       " in Bt or S (expected [Bt,S,G,N] with Bt = " + std::to_string(d.batch) +
                                       ", S = " + std::to_string(d.seqlen) + ")");
  d.groups = bs[2];
  d.dstate = bs[3];
  check::groups_divide_heads(op, bname, d.heads, d.groups);
}

void chunking(const char* op, std::int64_t chunk_size, OpDims& d) {
  check::positive(op, "chunk_size", chunk_size);
  d.chunk = chunk_size;
  d.chunks = d.grid().count();
}

// Chunk-major [Bt,H,NC,Q] tensors of the stage ops.
void chunk_major(const char* op, const char* name, const Tensor* t, const OpDims& d) {
  const Tensor& r = float_input(op, name, t);
  check::shape(op, name, r, {d.batch, d.heads, d.chunks, d.chunk}, "[Bt,H,NC,Q]");
}

}  // namespace

OpDims validate(const Mamba2Args& a) {
  const char* op = "mamba2";
  OpDims d;
  const Tensor& x = float_input(op, "x", a.x);
  const Tensor& B = float_input(op, "B", a.B);
  token_major(op, x, "B", B, d);
  check::shape(op, "C", float_input(op, "C", a.C), B.shape(), "[Bt,S,G,N] (the shape of B)");
  check::shape(op, "dt", float_input(op, "dt", a.dt), {d.batch, d.seqlen, d.heads}, "[Bt,S,H]");
  check::shape(op, "A", float_input(op, "A", a.A), {d.heads}, "[H]");
  chunking(op, a.chunk_size, d);
  check_D(op, a.D, d);
  optional_float(op, "z", a.z, x.shape(), "[Bt,S,H,P]");
  optional_float(op, "dt_bias", a.dt_bias, {d.heads}, "[H]");
  optional_float(op, "initial_states", a.initial_states, {d.batch, d.heads, d.headdim, d.dstate}, "[Bt,H,P,N]");
  if (a.seq_idx) check_seq_idx(op, *a.seq_idx, d.batch, d.seqlen);
  check_limit(op, a.dt_limit);
  return d;
}

OpDims validate(const ChunkCumsumArgs& a) {
  const char* op = "chunk_cumsum";
  OpDims d;
  const Shape& s = extents(op, "dt", float_input(op, "dt", a.dt), 3, "[Bt,S,H]");
  d.batch = s[0];
  d.seqlen = s[1];
  d.heads = s[2];
  check::shape(op, "A", float_input(op, "A", a.A), {d.heads}, "[H]");
  chunking(op, a.chunk_size, d);
  optional_float(op, "dt_bias", a.dt_bias, {d.heads}, "[H]");
  check_limit(op, a.dt_limit);
  return d;
}

OpDims validate(const ChunkCouplingArgs& a) {
  const char* op = "chunk_coupling";
  OpDims d;
  const Tensor& C = float_input(op, "C", a.C);
  const Shape& s = extents(op, "C", C, 4, "[Bt,S,G,N]");
  d.batch = s[0];
  d.seqlen = s[1];
  d.groups = s[2];
  d.dstate = s[3];
  check::shape(op, "B", float_input(op, "B", a.B), C.shape(), "[Bt,S,G,N] (the shape of C)");
  chunking(op, a.chunk_size, d);
  if (a.seq_idx) check_seq_idx(op, *a.seq_idx, d.batch, d.seqlen);
  return d;
}

OpDims validate(const ChunkStateArgs& a) {
  const char* op = "chunk_state";
  OpDims d;
  const Tensor& x = float_input(op, "x", a.x);
  token_major(op, x, "B", float_input(op, "B", a.B), d);
  // Q is not an argument of this op: it is the last extent of dt.
  const Shape& ds = extents(op, "dt", float_input(op, "dt", a.dt), 4, "[Bt,H,NC,Q]");
  chunking(op, ds[3], d);
  chunk_major(op, "dt", a.dt, d);
  chunk_major(op, "dA_cumsum", a.dA_cumsum, d);
  if (a.seq_idx) check_seq_idx(op, *a.seq_idx, d.batch, d.seqlen);
  return d;
}

OpDims validate(const StatePassingArgs& a) {
  const char* op = "state_passing";
  OpDims d;
  const Shape& s = extents(op, "states", float_input(op, "states", a.states), 4, "[Bt,NC,H,D]");
  d.batch = s[0];
  d.chunks = s[1];
  d.heads = s[2];
  d.flat = s[3];
  check::shape(op, "dA_chunk_cumsum", float_input(op, "dA_chunk_cumsum", a.dA_chunk_cumsum),
               {d.batch, d.heads, d.chunks}, "[Bt,H,NC]");
  optional_float(op, "initial_states", a.initial_states, {d.batch, d.heads, d.flat}, "[Bt,H,D]");
  if (a.seq_idx) {
    check::rank(op, "seq_idx", *a.seq_idx, 2, "[Bt,S]");
    check::positive(op, "chunk_size", a.chunk_size);
    d.chunk = a.chunk_size;
    d.seqlen = a.seq_idx->dim(1);
    check_seq_idx(op, *a.seq_idx, d.batch, d.seqlen);
    if (d.grid().count() != d.chunks)
      throw ArgumentError(op, "seq_idx", "S = " + std::to_string(d.seqlen) + " with chunk_size " +
                                             std::to_string(d.chunk) + " gives " + std::to_string(d.grid().count()) +
                                             " chunks, but states has NC = " + std::to_string(d.chunks));
  }
  return d;
}

OpDims validate(const ChunkScanArgs& a) {
  const char* op = "chunk_scan";
  OpDims d;
  const Tensor& x = float_input(op, "x", a.x);
  token_major(op, x, "C", float_input(op, "C", a.C), d);
  const Shape& cs = extents(op, "cb", float_input(op, "cb", a.cb), 5, "[Bt,NC,G,Q,Q]");
  chunking(op, cs[3], d);
  check::shape(op, "cb", *a.cb, {d.batch, d.chunks, d.groups, d.chunk, d.chunk}, "[Bt,NC,G,Q,Q]");
  chunk_major(op, "dt", a.dt, d);
  chunk_major(op, "dA_cumsum", a.dA_cumsum, d);
  check::shape(op, "states", float_input(op, "states", a.states),
               {d.batch, d.chunks, d.heads, d.headdim, d.dstate}, "[Bt,NC,H,P,N]");
  check_D(op, a.D, d);
  optional_float(op, "z", a.z, x.shape(), "[Bt,S,H,P]");
  if (a.seq_idx) check_seq_idx(op, *a.seq_idx, d.batch, d.seqlen);
  return d;
}

OpDims validate(const RecurrentArgs& a) {
  const char* op = "recurrent";
  OpDims d;
  const Shape& ss = extents(op, "state", float_input(op, "state", a.state), 4, "[Bs,H,P,N]");
  d.slots = ss[0];
  d.heads = ss[1];
  d.headdim = ss[2];
  d.dstate = ss[3];
  const Shape& xs = extents(op, "x", float_input(op, "x", a.x), 3, "[Bt,H,P]");
  d.batch = xs[0];
  if (xs[1] != d.heads || xs[2] != d.headdim)
    throw ArgumentError(op, "x", "shape " + shape_string(xs) + ", expected [Bt,H,P] with H = " +
                                     std::to_string(d.heads) + ", P = " + std::to_string(d.headdim) +
                                     " (from state)");
  check::shape(op, "dt", float_input(op, "dt", a.dt), xs, "[Bt,H,P]");
  check::shape(op, "A", float_input(op, "A", a.A), {d.heads, d.headdim, d.dstate}, "[H,P,N]");
  const Shape& bs = extents(op, "B", float_input(op, "B", a.B), 3, "[Bt,G,N]");
  d.groups = bs[1];
  check::shape(op, "B", *a.B, {d.batch, d.groups, d.dstate}, "[Bt,G,N]");
  check::groups_divide_heads(op, "B", d.heads, d.groups);
  check::shape(op, "C", float_input(op, "C", a.C), bs, "[Bt,G,N] (the shape of B)");
  optional_float(op, "D", a.D, {d.heads, d.headdim}, "[H,P]");
  optional_float(op, "z", a.z, xs, "[Bt,H,P]");
  optional_float(op, "dt_bias", a.dt_bias, {d.heads, d.headdim}, "[H,P]");
  if (a.state_batch_indices) {
    const Tensor& sbi = *a.state_batch_indices;
    check::dtype_in(op, "state_batch_indices", sbi, {DType::i32});
    check::shape(op, "state_batch_indices", sbi, {d.batch}, "[Bt]");
    std::vector<std::int64_t> used_by(static_cast<std::size_t>(d.slots), -1);
    for (std::int64_t b = 0; b < d.batch; ++b) {
      const auto slot = static_cast<std::int64_t>(sbi[b]);
      if (slot >= d.slots)
        throw ArgumentError(op, "state_batch_indices",
                            "entry " + std::to_string(b) + " = " + std::to_string(slot) + " is out of range for " +
                                std::to_string(d.slots) + " state slots");
      if (slot < 0) continue;  // padding row
      // Two rows updating one slot in place is a race in every kernel: outside the contract.
      if (used_by[static_cast<std::size_t>(slot)] >= 0)
        throw ArgumentError(op, "state_batch_indices",
                            "entries " + std::to_string(used_by[static_cast<std::size_t>(slot)]) + " and " +
                                std::to_string(b) + " both select state slot " + std::to_string(slot));
      used_by[static_cast<std::size_t>(slot)] = b;
    }
  } else if (d.slots != d.batch) {
    throw ArgumentError(op, "state", "has " + std::to_string(d.slots) + " rows but x has Bt = " +
                                         std::to_string(d.batch) + "; pass state_batch_indices to select rows");
  }
  return d;
}

OpDims validate(const DiscretizeSegsumArgs& a) {
  const char* op = "discretize_segsum";
  OpDims d;
  const Shape& hs = extents(op, "hidden_states", float_input(op, "hidden_states", a.hidden_states), 5,
                            "[b,c,Q,h,p]");
  d.batch = hs[0];
  d.chunks = hs[1];
  d.chunk = hs[2];
  d.heads = hs[3];
  d.headdim = hs[4];
  d.seqlen = d.chunks * d.chunk;
  check::shape(op, "dt", float_input(op, "dt", a.dt), {d.batch, d.chunks, d.chunk, d.heads}, "[b,c,Q,h]");
  check::shape(op, "A_log", float_input(op, "A_log", a.A_log), {d.heads}, "[h]");
  const Shape& bs = extents(op, "B", float_input(op, "B", a.B), 5, "[b,c,Q,g,n]");
  d.groups = bs[3];
  d.dstate = bs[4];
  check::shape(op, "B", *a.B, {d.batch, d.chunks, d.chunk, d.groups, d.dstate}, "[b,c,Q,g,n]");
  check::groups_divide_heads(op, "B", d.heads, d.groups);
  check::shape(op, "C", float_input(op, "C", a.C), bs, "[b,c,Q,g,n] (the shape of B)");
  return d;
}

}  // namespace ssd
