// The argument checks of the oracle entry points.
#include "check.h"

#include <cmath>

namespace ssd {

const Tensor& Check::float_input(const char* name, const Tensor* t) const {
  if (t == nullptr) fail(name, "required input is missing");
  if (!is_float(t->dtype()))
    fail(name, "dtype " + std::string(dtype_name(t->dtype())) + ", expected a floating-point dtype (f32, f16, bf16)");
  return *t;
}

void Check::rank(const char* name, const Tensor& t, int expected_rank, const char* dims) const {
  if (t.rank() != expected_rank)
    fail(name, "rank " + std::to_string(t.rank()) + " (shape " + shape_string(t.shape()) + "), expected rank " +
                   std::to_string(expected_rank) + " " + dims);
}

const Shape& Check::extents(const char* name, const Tensor& t, int expected_rank, const char* dims) const {
  rank(name, t, expected_rank, dims);
  for (int i = 0; i < expected_rank; ++i) {
    if (t.shape()[static_cast<std::size_t>(i)] > 0) continue;
    // The i-th axis name of "[A,B,C]".
    std::string all(dims), axis;
    int index = 0;
    for (char ch : all.substr(1, all.size() - 2)) {
      if (ch == ',') {
        ++index;
        continue;
      }
      if (index == i) axis.push_back(ch);
    }
    fail(name, "shape " + shape_string(t.shape()) + " has " + axis + " = 0; every extent of " + dims + " must be positive");
  }
  return t.shape();
}

void Check::shape(const char* name, const Tensor& t, const Shape& expected, const char* dims) const {
  if (t.shape() != expected)
    fail(name, "shape " + shape_string(t.shape()) + ", expected " + dims + " = " + shape_string(expected));
}

void Check::optional_float(const char* name, const Tensor* t, const Shape& expected, const char* dims) const {
  if (t == nullptr) return;
  shape(name, float_input(name, t), expected, dims);
}

void Check::dtype_in(const char* name, const Tensor& t, std::initializer_list<DType> allowed) const {
  std::string list;
  for (DType d : allowed) {
    if (t.dtype() == d) return;
    list += (list.empty() ? "" : ", ") + std::string(dtype_name(d));
  }
  fail(name, "dtype " + std::string(dtype_name(t.dtype())) + ", expected one of " + list);
}

void Check::seq_idx(const Tensor& t, std::int64_t batch, std::int64_t seqlen) const {
  if (t.dtype() != DType::i32) fail("seq_idx", "dtype " + std::string(dtype_name(t.dtype())) + ", expected i32");
  shape("seq_idx", t, {batch, seqlen}, "[Bt,S]");
  for (std::int64_t b = 0; b < batch; ++b) {
    bool in_padding = false;
    double previous = 0.0;
    for (std::int64_t i = 0; i < seqlen; ++i) {
      const double id = t[b * seqlen + i];
      const std::string where = "row " + std::to_string(b) + ", token " + std::to_string(i);
      if (id < 0) {
        in_padding = true;
      } else if (in_padding) {
        fail("seq_idx", "non-negative id after padding at " + where + " (padding ids must form the tail of a row)");
      } else if (i > 0 && id < previous) {
        fail("seq_idx", "ids decrease at " + where + " (" + std::to_string(static_cast<long long>(previous)) + " -> " +
                            std::to_string(static_cast<long long>(id)) + "); seq_idx must be non-decreasing");
      }
      previous = id;
    }
  }
}

PackedSequences Check::packed_sequences(const Tensor& t) const {
  std::vector<std::int64_t> ids(static_cast<std::size_t>(t.numel()));
  for (std::int64_t i = 0; i < t.numel(); ++i) ids[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(t[i]);
  try {
    PackedSequences s = sequences_from_ids(ids);
    if (s.count() == 0) fail("seq_idx", "a packed row needs at least one sequence, got only padding");
    return s;
  } catch (const ArgumentError& e) {
    fail("seq_idx", std::string(e.what()).substr(std::string(e.what()).find(':') + 2));
  }
}

void Check::encoding(const char* name, const Tensor& t, const std::vector<std::int64_t>& wanted) const {
  index_input(name, t, {static_cast<std::int64_t>(wanted.size())}, "[n] (n from the sequences seq_idx describes)");
  for (std::size_t i = 0; i < wanted.size(); ++i)
    if (t[static_cast<std::int64_t>(i)] != static_cast<double>(wanted[i]))
      fail(name, "element " + std::to_string(i) + " is " + std::to_string(static_cast<long long>(t[static_cast<std::int64_t>(i)])) +
                     ", the sequences of seq_idx give " + std::to_string(wanted[i]));
}

void Check::index_input(const char* name, const Tensor& t, const Shape& expected, const char* dims) const {
  if (t.dtype() != DType::i32) fail(name, "dtype " + std::string(dtype_name(t.dtype())) + ", expected i32");
  shape(name, t, expected, dims);
}

void Check::positive(const char* name, std::int64_t value) const {
  if (value <= 0) fail(name, "must be positive, got " + std::to_string(value));
}

void Check::groups_divide_heads(const char* group_argument, std::int64_t heads, std::int64_t groups) const {
  if (groups <= 0 || heads % groups != 0)
    fail(group_argument, "ngroups G = " + std::to_string(groups) + " must divide nheads H = " + std::to_string(heads));
}

void Check::dt_limit(DtLimit limit) const {
  if (std::isnan(limit.lo) || std::isnan(limit.hi) || limit.lo > limit.hi)
    fail("dt_limit", "(" + std::to_string(limit.lo) + ", " + std::to_string(limit.hi) + ") must satisfy lo <= hi");
}

void Check::token_major(const Tensor& x, const char* bname, const Tensor& B, OpDims& d) const {
  const Shape& xs = extents("x", x, 4, "[Bt,S,H,P]");
  d.batch = xs[0];
  d.seqlen = xs[1];
  d.heads = xs[2];
  d.headdim = xs[3];
  const Shape& bs = extents(bname, B, 4, "[Bt,S,G,N]");
  if (bs[0] != d.batch || bs[1] != d.seqlen)
    fail(bname, "shape " + shape_string(bs) + " disagrees with x " + shape_string(xs) +
                    " in Bt or S (expected [Bt,S,G,N] with Bt = " + std::to_string(d.batch) +
                    ", S = " + std::to_string(d.seqlen) + ")");
  d.groups = bs[2];
  d.dstate = bs[3];
  groups_divide_heads(bname, d.heads, d.groups);
}

void Check::D(const Tensor* D, OpDims& d) const {
  if (D == nullptr) return;
  float_input("D", D);
  if (D->shape() == Shape{d.heads}) return;
  if (D->shape() == Shape{d.heads, d.headdim}) {
    d.d_has_hdim = true;
    return;
  }
  fail("D", "shape " + shape_string(D->shape()) + ", expected [H] = " + shape_string({d.heads}) + " or [H,P] = " +
                shape_string({d.heads, d.headdim}));
}

void Check::chunking(std::int64_t chunk_size, OpDims& d) const {
  positive("chunk_size", chunk_size);
  d.chunk = chunk_size;
  d.chunks = d.grid().count();
}

void Check::chunk_major(const char* name, const Tensor* t, const OpDims& d) const {
  shape(name, float_input(name, t), {d.batch, d.heads, d.chunks, d.chunk}, "[Bt,H,NC,Q]");
}

}  // namespace ssd
