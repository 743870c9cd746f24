// The argument checks of the oracle entry points (internal to ssd_reference), in the vocabulary of
// the CUDA library's host checks (gpu/src/checks.h): a failed check throws ArgumentError with
// "<op>: argument '<name>': <what is wrong>".
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>

#include "ssd/reference/errors.h"
#include "ssd/reference/oracle.h"
#include "ssd/reference/tensor.h"
#include "ssd/reference/validate.h"
#include "ssd/reference/varlen.h"

namespace ssd {

struct Check {
  const char* op;

  [[noreturn]] void fail(const char* name, const std::string& what) const { throw ArgumentError(op, name, what); }
  // A required input: present, with a float dtype.
  const Tensor& float_input(const char* name, const Tensor* t) const;
  // Rank before dims are read; `dims` names the axes, e.g. "[Bt,S,H,P]".
  void rank(const char* name, const Tensor& t, int expected_rank, const char* dims) const;
  // Rank plus every extent positive (an empty input names the zero axis); returns the shape.
  const Shape& extents(const char* name, const Tensor& t, int expected_rank, const char* dims) const;
  // Exact shape; the message shows the expected shape with the names of its dims.
  void shape(const char* name, const Tensor& t, const Shape& expected, const char* dims) const;
  // An optional float input: when present, float dtype and exact shape.
  void optional_float(const char* name, const Tensor* t, const Shape& expected, const char* dims) const;
  // One of the listed dtypes.
  void dtype_in(const char* name, const Tensor& t, std::initializer_list<DType> allowed) const;
  // seq_idx [Bt,S] i32, non-decreasing per row, padding (negative ids) only as a row's tail.
  void seq_idx(const Tensor& t, std::int64_t batch, std::int64_t seqlen) const;
  // The sequences of a packed row (seq_idx [1,S], ids 0, 1, 2, ... then padding).
  PackedSequences packed_sequences(const Tensor& seq_idx) const;
  // A varlen encoding: i32 [n], equal to the values the sequences give (`wanted`).
  void encoding(const char* name, const Tensor& t, const std::vector<std::int64_t>& wanted) const;
  // An i32 index input of exact shape.
  void index_input(const char* name, const Tensor& t, const Shape& expected, const char* dims) const;
  void positive(const char* name, std::int64_t value) const;
  void groups_divide_heads(const char* group_argument, std::int64_t heads, std::int64_t groups) const;
  void dt_limit(DtLimit limit) const;
  // x [Bt,S,H,P] and a B-like [Bt,S,G,N] (named bname): extents, agreement in Bt and S, H % G.
  void token_major(const Tensor& x, const char* bname, const Tensor& B, OpDims& d) const;
  // An optional D of shape [H] or [H,P]; sets d.d_has_hdim for [H,P].
  void D(const Tensor* D, OpDims& d) const;
  // chunk_size positive; sets d.chunk and d.chunks.
  void chunking(std::int64_t chunk_size, OpDims& d) const;
  // A chunk-major [Bt,H,NC,Q] float input of the stage ops.
  void chunk_major(const char* name, const Tensor* t, const OpDims& d) const;
};

}  // namespace ssd
