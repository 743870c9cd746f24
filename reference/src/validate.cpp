// Argument validation shared by both oracle forms: presence, rank, shapes, dtypes, sizes, seq_idx.
#include "ssd/reference/validate.h"

#include <string>
#include <vector>

#include "check.h"
#include "ssd/reference/decode_plan.h"

namespace ssd {

OpDims validate(const Mamba2Args& a) {
  const Check c{"mamba2"};
  OpDims d;
  const Tensor& x = c.float_input("x", a.x);
  const Tensor& B = c.float_input("B", a.B);
  c.token_major(x, "B", B, d);
  c.shape("C", c.float_input("C", a.C), B.shape(), "[Bt,S,G,N] (the shape of B)");
  c.shape("dt", c.float_input("dt", a.dt), {d.batch, d.seqlen, d.heads}, "[Bt,S,H]");
  c.shape("A", c.float_input("A", a.A), {d.heads}, "[H]");
  c.chunking(a.chunk_size, d);
  c.D(a.D, d);
  c.optional_float("z", a.z, x.shape(), "[Bt,S,H,P]");
  c.optional_float("dt_bias", a.dt_bias, {d.heads}, "[H]");
  if (a.seq_idx) c.seq_idx(*a.seq_idx, d.batch, d.seqlen);
  const std::pair<const char*, const Tensor*> encodings[] = {
      {"cu_seqlens", a.cu_seqlens},       {"chunk_indices", a.chunk_indices}, {"chunk_offsets", a.chunk_offsets},
      {"cu_chunk_seqlens", a.cu_chunk_seqlens}, {"chunk_seq_idx", a.chunk_seq_idx}, {"last_chunk_indices", a.last_chunk_indices}};
  if (a.varlen) {
    if (a.seq_idx == nullptr) c.fail("seq_idx", "required with varlen (it says where each packed sequence lies)");
    if (d.batch != 1) c.fail("x", "a packed varlen batch has one row, got Bt = " + std::to_string(d.batch));
    const PackedSequences packed = c.packed_sequences(*a.seq_idx);
    d.sequences = packed.count();
    const PseudoChunks pseudo = pseudo_chunks(packed, d.chunk);
    const AlignedChunks aligned = aligned_chunks(packed, d.chunk);
    const std::vector<std::int64_t>* wanted[] = {nullptr, &pseudo.chunk_indices, &pseudo.chunk_offsets,
                                                 &aligned.cu_chunk_seqlens, &aligned.chunk_seq_idx,
                                                 &aligned.last_chunk_indices};
    const std::vector<std::int64_t> cu = cu_seqlens(packed);
    wanted[0] = &cu;
    for (std::size_t k = 0; k < std::size(encodings); ++k)
      if (encodings[k].second) c.encoding(encodings[k].first, *encodings[k].second, *wanted[k]);
    c.optional_float("initial_states", a.initial_states, {d.sequences, d.heads, d.headdim, d.dstate}, "[nseq,H,P,N]");
    if (a.has_initial_states) {
      if (a.initial_states == nullptr) c.fail("has_initial_states", "given without initial_states");
      c.index_input("has_initial_states", *a.has_initial_states, {d.sequences}, "[nseq]");
    }
  } else {
    if (a.has_initial_states) c.fail("has_initial_states", "only a varlen batch takes it");
    for (const auto& [name, t] : encodings)
      if (t) c.fail(name, "only a varlen batch takes it");
    c.optional_float("initial_states", a.initial_states, {d.batch, d.heads, d.headdim, d.dstate}, "[Bt,H,P,N]");
  }
  c.dt_limit(a.dt_limit);
  return d;
}

OpDims validate(const ChunkCumsumArgs& a) {
  const Check c{"chunk_cumsum"};
  OpDims d;
  const Shape& s = c.extents("dt", c.float_input("dt", a.dt), 3, "[Bt,S,H]");
  d.batch = s[0];
  d.seqlen = s[1];
  d.heads = s[2];
  c.shape("A", c.float_input("A", a.A), {d.heads}, "[H]");
  c.chunking(a.chunk_size, d);
  c.optional_float("dt_bias", a.dt_bias, {d.heads}, "[H]");
  c.dt_limit(a.dt_limit);
  return d;
}

OpDims validate(const ChunkCouplingArgs& a) {
  const Check c{"chunk_coupling"};
  OpDims d;
  const Tensor& C = c.float_input("C", a.C);
  const Shape& s = c.extents("C", C, 4, "[Bt,S,G,N]");
  d.batch = s[0];
  d.seqlen = s[1];
  d.groups = s[2];
  d.dstate = s[3];
  c.shape("B", c.float_input("B", a.B), C.shape(), "[Bt,S,G,N] (the shape of C)");
  c.chunking(a.chunk_size, d);
  if (a.seq_idx) c.seq_idx(*a.seq_idx, d.batch, d.seqlen);
  return d;
}

OpDims validate(const ChunkStateArgs& a) {
  const Check c{"chunk_state"};
  OpDims d;
  const Tensor& x = c.float_input("x", a.x);
  c.token_major(x, "B", c.float_input("B", a.B), d);
  // Q is not an argument of this op: it is the last extent of dt.
  const Shape& ds = c.extents("dt", c.float_input("dt", a.dt), 4, "[Bt,H,NC,Q]");
  c.chunking(ds[3], d);
  c.chunk_major("dt", a.dt, d);
  c.chunk_major("dA_cumsum", a.dA_cumsum, d);
  if (a.seq_idx) c.seq_idx(*a.seq_idx, d.batch, d.seqlen);
  return d;
}

OpDims validate(const StatePassingArgs& a) {
  const Check c{"state_passing"};
  OpDims d;
  const Shape& s = c.extents("states", c.float_input("states", a.states), 4, "[Bt,NC,H,D]");
  d.batch = s[0];
  d.chunks = s[1];
  d.heads = s[2];
  d.flat = s[3];
  c.shape("dA_chunk_cumsum", c.float_input("dA_chunk_cumsum", a.dA_chunk_cumsum),
               {d.batch, d.heads, d.chunks}, "[Bt,H,NC]");
  c.optional_float("initial_states", a.initial_states, {d.batch, d.heads, d.flat}, "[Bt,H,D]");
  if (a.seq_idx) {
    c.rank("seq_idx", *a.seq_idx, 2, "[Bt,S]");
    c.positive("chunk_size", a.chunk_size);
    d.chunk = a.chunk_size;
    d.seqlen = a.seq_idx->dim(1);
    c.seq_idx(*a.seq_idx, d.batch, d.seqlen);
    if (d.grid().count() != d.chunks)
      c.fail("seq_idx", "S = " + std::to_string(d.seqlen) + " with chunk_size " +
                                             std::to_string(d.chunk) + " gives " + std::to_string(d.grid().count()) +
                                             " chunks, but states has NC = " + std::to_string(d.chunks));
  }
  return d;
}

OpDims validate(const ChunkScanArgs& a) {
  const Check c{"chunk_scan"};
  OpDims d;
  const Tensor& x = c.float_input("x", a.x);
  c.token_major(x, "C", c.float_input("C", a.C), d);
  const Shape& cs = c.extents("cb", c.float_input("cb", a.cb), 5, "[Bt,NC,G,Q,Q]");
  c.chunking(cs[3], d);
  c.shape("cb", *a.cb, {d.batch, d.chunks, d.groups, d.chunk, d.chunk}, "[Bt,NC,G,Q,Q]");
  c.chunk_major("dt", a.dt, d);
  c.chunk_major("dA_cumsum", a.dA_cumsum, d);
  c.shape("states", c.float_input("states", a.states),
               {d.batch, d.chunks, d.heads, d.headdim, d.dstate}, "[Bt,NC,H,P,N]");
  c.D(a.D, d);
  c.optional_float("z", a.z, x.shape(), "[Bt,S,H,P]");
  if (a.seq_idx) c.seq_idx(*a.seq_idx, d.batch, d.seqlen);
  return d;
}

OpDims validate(const RecurrentArgs& a) {
  const Check c{"recurrent"};
  OpDims d;
  const Shape& ss = c.extents("state", c.float_input("state", a.state), 4, "[Bs,H,P,N]");
  d.slots = ss[0];
  d.heads = ss[1];
  d.headdim = ss[2];
  d.dstate = ss[3];
  // x [Bt,H,P] is one token per row; with tokens = T, x [Bt,T,H,P] is T tokens per row, or with
  // cu_seqlens too, x [tokens of all rows,H,P] holds rows of 0..T tokens one after the other.
  if (a.tokens < 0) c.fail("tokens", std::to_string(a.tokens) + " is negative");
  const Tensor& x = c.float_input("x", a.x);
  const bool packed = a.cu_seqlens != nullptr;
  if (packed && a.tokens == 0) c.fail("cu_seqlens", "needs tokens (the most tokens of a row)");
  const bool multi = a.tokens > 0 && !packed;
  const char* x_dims = packed ? "[tokens,H,P]" : multi ? "[Bt,T,H,P]" : "[Bt,H,P]";
  const char* b_dims = packed ? "[tokens,G,N]" : multi ? "[Bt,T,G,N]" : "[Bt,G,N]";
  const Shape& xs = c.extents("x", x, multi ? 4 : 3,
                              packed ? "[tokens,H,P] (cu_seqlens given)" : multi ? "[Bt,T,H,P] (tokens given)" : "[Bt,H,P] (no tokens)");
  d.tokens = a.tokens;
  if (packed) {
    // cu_seqlens [Bt+1]: 0, then each row's end; rows of 0..T tokens; x holds exactly their tokens.
    const Tensor& cu = *a.cu_seqlens;
    c.dtype_in("cu_seqlens", cu, {DType::i32});
    c.rank("cu_seqlens", cu, 1, "[Bt+1]");
    if (cu.dim(0) < 2) c.fail("cu_seqlens", "has " + std::to_string(cu.dim(0)) + " entries; [Bt+1] needs at least 2");
    d.batch = cu.dim(0) - 1;
    if (cu[0] != 0) c.fail("cu_seqlens", "starts at " + std::to_string(static_cast<std::int64_t>(cu[0])) + ", not 0");
    for (std::int64_t b = 0; b < d.batch; ++b) {
      const auto length = static_cast<std::int64_t>(cu[b + 1] - cu[b]);
      if (length < 0 || length > a.tokens)
        c.fail("cu_seqlens", "row " + std::to_string(b) + " has " + std::to_string(length) + " tokens, outside 0.." +
                                 std::to_string(a.tokens) + " (tokens)");
    }
    if (static_cast<std::int64_t>(cu[d.batch]) != xs[0])
      c.fail("x", "shape " + shape_string(xs) + ": cu_seqlens ends at " + std::to_string(static_cast<std::int64_t>(cu[d.batch])) +
                      " tokens");
  } else {
    d.batch = xs[0];
  }
  if (multi && xs[1] != a.tokens)
    c.fail("x", "shape " + shape_string(xs) + ", expected [Bt,T,H,P] with T = tokens = " + std::to_string(a.tokens));
  if (xs[xs.size() - 2] != d.heads || xs.back() != d.headdim)
    c.fail("x", "shape " + shape_string(xs) + ", expected " + x_dims + " with H = " + std::to_string(d.heads) +
                    ", P = " + std::to_string(d.headdim) + " (from state)");
  c.shape("dt", c.float_input("dt", a.dt), xs, x_dims);
  c.shape("A", c.float_input("A", a.A), {d.heads, d.headdim, d.dstate}, "[H,P,N]");
  const Shape& bs = c.extents("B", c.float_input("B", a.B), multi ? 4 : 3, b_dims);
  d.groups = bs[bs.size() - 2];
  Shape b_shape = multi ? Shape{d.batch, d.tokens, d.groups, d.dstate} : Shape{xs[0], d.groups, d.dstate};
  c.shape("B", *a.B, b_shape, b_dims);
  c.groups_divide_heads("B", d.heads, d.groups);
  c.shape("C", c.float_input("C", a.C), bs, packed ? "[tokens,G,N] (the shape of B)"
                                              : multi ? "[Bt,T,G,N] (the shape of B)" : "[Bt,G,N] (the shape of B)");
  c.optional_float("D", a.D, {d.heads, d.headdim}, "[H,P]");
  c.optional_float("z", a.z, xs, x_dims);
  c.optional_float("dt_bias", a.dt_bias, {d.heads, d.headdim}, "[H,P]");
  if (a.pad_slot_id < -1) c.fail("pad_slot_id", std::to_string(a.pad_slot_id) + " is below -1");
  if (a.intermediate_states && a.tokens == 0) c.fail("intermediate_states", "needs tokens (a multi-token call)");
  // Slot tables: [Bt], or [Bt,T] for one column per token (multi-token calls only).
  const bool per_token = a.state_batch_indices && a.state_batch_indices->rank() == 2;
  const Shape table = per_token ? Shape{d.batch, d.tokens} : Shape{d.batch};
  if (a.state_batch_indices) {
    if (per_token && a.tokens == 0) c.fail("state_batch_indices", "a [Bt,T] table needs tokens (a multi-token call)");
    c.dtype_in("state_batch_indices", *a.state_batch_indices, {DType::i32});
    c.shape("state_batch_indices", *a.state_batch_indices, table, per_token ? "[Bt,T]" : "[Bt] (or [Bt,T])");
  } else if (d.slots != d.batch) {
    c.fail("state", "has " + std::to_string(d.slots) + " rows but x has Bt = " + std::to_string(d.batch) +
                        "; pass state_batch_indices to select rows");
  }
  if (a.dst_state_batch_indices) {
    if (!a.state_batch_indices) c.fail("dst_state_batch_indices", "needs state_batch_indices (the read slots)");
    c.dtype_in("dst_state_batch_indices", *a.dst_state_batch_indices, {DType::i32});
    c.shape("dst_state_batch_indices", *a.dst_state_batch_indices, table,
            per_token ? "[Bt,T] (the shape of state_batch_indices)" : "[Bt] (the shape of state_batch_indices)");
  }
  if (a.num_accepted_tokens) {
    if (!per_token) c.fail("num_accepted_tokens", "needs [Bt,T] slot tables (state_batch_indices [Bt,T])");
    c.dtype_in("num_accepted_tokens", *a.num_accepted_tokens, {DType::i32});
    c.shape("num_accepted_tokens", *a.num_accepted_tokens, {d.batch}, "[Bt]");
  }
  decode_plan(a, d);  // the slot entries: in range, no slot stored twice or stored where another row reads
  return d;
}

OpDims validate(const DiscretizeSegsumArgs& a) {
  const Check c{"discretize_segsum"};
  OpDims d;
  const Shape& hs = c.extents("hidden_states", c.float_input("hidden_states", a.hidden_states), 5,
                            "[b,c,Q,h,p]");
  d.batch = hs[0];
  d.chunks = hs[1];
  d.chunk = hs[2];
  d.heads = hs[3];
  d.headdim = hs[4];
  d.seqlen = d.chunks * d.chunk;
  c.shape("dt", c.float_input("dt", a.dt), {d.batch, d.chunks, d.chunk, d.heads}, "[b,c,Q,h]");
  c.shape("A_log", c.float_input("A_log", a.A_log), {d.heads}, "[h]");
  const Shape& bs = c.extents("B", c.float_input("B", a.B), 5, "[b,c,Q,g,n]");
  d.groups = bs[3];
  d.dstate = bs[4];
  c.shape("B", *a.B, {d.batch, d.chunks, d.chunk, d.groups, d.dstate}, "[b,c,Q,g,n]");
  c.groups_divide_heads("B", d.heads, d.groups);
  c.shape("C", c.float_input("C", a.C), bs, "[b,c,Q,g,n] (the shape of B)");
  return d;
}

}  // namespace ssd
