// Host-side argument checks of the ABI entry points and the thread's last error message.
#include "checks.h"

#include <cmath>

namespace ssd_gpu {

namespace {
thread_local std::string g_last_error;

std::string message(const char* op, const char* argument, const std::string& what) {
  std::string m(op);
  m.append(": argument '").append(argument).append("': ").append(what);
  return m;
}
}  // namespace

void set_last_error(const std::string& message_text) { g_last_error = message_text; }
const char* last_error_message() { return g_last_error.c_str(); }

void fail(const char* op, const char* argument, const std::string& what, ssd_status status) {
  throw Failure{status, message(op, argument, what)};
}

std::string shape_string(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s.push_back(',');
    s.append(std::to_string(shape[i]));
  }
  s.push_back(']');
  return s;
}

Shape shape_of(const ssd_tensor& t) {
  const int rank = t.rank < 0 ? 0 : (t.rank > SSD_MAX_RANK ? SSD_MAX_RANK : t.rank);
  return Shape(t.shape, t.shape + rank);
}

const char* dtype_name(int32_t dtype) {
  switch (dtype) {
    case SSD_DTYPE_F32: return "f32";
    case SSD_DTYPE_F16: return "f16";
    case SSD_DTYPE_BF16: return "bf16";
    case SSD_DTYPE_I32: return "i32";
    default: return "unknown";
  }
}

namespace {
std::string dtype_text(int32_t dtype) {
  std::string s = "dtype ";
  s.append(dtype_name(dtype));
  if (std::string(dtype_name(dtype)) == "unknown") s.append(" (").append(std::to_string(dtype)).append(")");
  return s;
}
}  // namespace

void Check::float_input(const char* name, const ssd_tensor& t) const {
  if (!present(t)) fail(op, name, "required input is missing");
  if (!is_float(t.dtype)) fail(op, name, dtype_text(t.dtype) + ", expected a floating-point dtype (f32, f16, bf16)");
}

void Check::rank(const char* name, const ssd_tensor& t, int expected_rank, const char* dims) const {
  if (t.rank < 0 || t.rank > SSD_MAX_RANK)
    fail(op, name, "rank " + std::to_string(t.rank) + " is outside 0.." + std::to_string(SSD_MAX_RANK) +
                       ", expected rank " + std::to_string(expected_rank) + " " + dims);
  if (t.rank != expected_rank)
    fail(op, name, "rank " + std::to_string(t.rank) + " (shape " + shape_string(shape_of(t)) + "), expected rank " +
                       std::to_string(expected_rank) + " " + dims);
}

Shape Check::extents(const char* name, const ssd_tensor& t, int expected_rank, const char* dims) const {
  rank(name, t, expected_rank, dims);
  const Shape s = shape_of(t);
  for (int i = 0; i < expected_rank; ++i) {
    if (s[static_cast<std::size_t>(i)] > 0) continue;
    // The i-th axis name out of "[A,B,C]".
    const std::string all(dims);
    std::string axis;
    int index = 0;
    for (char ch : all.substr(1, all.size() - 2)) {
      if (ch == ',') {
        ++index;
        continue;
      }
      if (index == i) axis.push_back(ch);
    }
    fail(op, name, "shape " + shape_string(s) + " has " + axis + " = " + std::to_string(s[static_cast<std::size_t>(i)]) +
                       "; every extent of " + dims + " must be positive");
  }
  return s;
}

void Check::shape(const char* name, const ssd_tensor& t, const Shape& expected, const char* dims) const {
  if (t.rank < 0 || t.rank > SSD_MAX_RANK || shape_of(t) != expected)
    fail(op, name, "shape " + shape_string(shape_of(t)) + " (rank " + std::to_string(t.rank) + "), expected " + dims +
                       " = " + shape_string(expected));
}

void Check::optional_float(const char* name, const ssd_tensor& t, const Shape& expected, const char* dims) const {
  if (!present(t)) return;
  float_input(name, t);
  shape(name, t, expected, dims);
}

void Check::seq_idx(const ssd_tensor& t, int64_t batch, int64_t seqlen) const {
  if (t.dtype != SSD_DTYPE_I32) fail(op, "seq_idx", dtype_text(t.dtype) + ", expected i32");
  shape("seq_idx", t, {batch, seqlen}, "[Bt,S]");
}

void Check::positive(const char* name, int64_t value) const {
  if (value <= 0) fail(op, name, "must be positive, got " + std::to_string(value));
}

void Check::groups_divide_heads(const char* group_argument, int64_t heads, int64_t groups) const {
  if (groups <= 0 || heads % groups != 0)
    fail(op, group_argument,
         "ngroups G = " + std::to_string(groups) + " must divide nheads H = " + std::to_string(heads));
}

void Check::dt_limit(double lo, double hi) const {
  if (std::isnan(lo) || std::isnan(hi) || lo > hi) {
    // Appends instead of "literal" + std::string: GCC 12 warns falsely (-Wrestrict) on the latter.
    std::string what("(");
    what.append(std::to_string(lo)).append(", ").append(std::to_string(hi)).append(") must satisfy lo <= hi");
    fail(op, "dt_limit", what);
  }
}

void Check::output(const char* name, const ssd_tensor& t, const Shape& expected, const char* dims,
                   std::initializer_list<int32_t> allowed, const char* rule) const {
  if (!present(t)) fail(op, name, "required output is missing");
  bool ok = false;
  for (int32_t d : allowed) ok = ok || t.dtype == d;
  if (!ok) fail(op, name, dtype_text(t.dtype) + ", expected " + rule);
  shape(name, t, expected, dims);
}

TokenDims Check::token_major(const ssd_tensor& x, const char* bname, const ssd_tensor& B) const {
  const Shape xs = extents("x", x, 4, "[Bt,S,H,P]");
  const Shape bs = extents(bname, B, 4, "[Bt,S,G,N]");
  if (bs[0] != xs[0] || bs[1] != xs[1])
    fail(op, bname, "shape " + shape_string(bs) + " disagrees with x " + shape_string(xs) +
                        " in Bt or S (expected [Bt,S,G,N] with Bt = " + std::to_string(xs[0]) +
                        ", S = " + std::to_string(xs[1]) + ")");
  groups_divide_heads(bname, xs[2], bs[2]);
  return TokenDims{xs[0], xs[1], xs[2], xs[3], bs[2], bs[3]};
}

bool Check::skip_D(const ssd_tensor& D, int64_t heads, int64_t headdim) const {
  if (!present(D)) return false;
  float_input("D", D);
  const Shape s = shape_of(D);
  if (D.rank == 1 && s == Shape{heads}) return false;
  if (D.rank == 2 && s == Shape{heads, headdim}) return true;
  fail(op, "D", "shape " + shape_string(s) + ", expected [H] = " + shape_string({heads}) + " or [H,P] = " +
                    shape_string({heads, headdim}));
}

void Check::contiguous(const char* name, const ssd_tensor& t) const {
  int64_t expected = 1;
  for (int axis = t.rank - 1; axis >= 0; --axis) {
    const int64_t extent = t.shape[axis];
    if (extent != 1 && t.strides[axis] != expected) {
      std::string strides = "[";
      for (int i = 0; i < t.rank; ++i) {
        if (i) strides.push_back(',');
        strides.append(std::to_string(t.strides[i]));
      }
      strides.push_back(']');
      fail(op, name, "strides " + strides + " for shape " + shape_string(shape_of(t)) +
                         " are not dense row-major; this library supports contiguous tensors only",
           SSD_STATUS_UNSUPPORTED);
    }
    expected *= extent;
  }
}

void Check::contiguous(std::initializer_list<std::pair<const char*, const ssd_tensor*>> tensors) const {
  for (const auto& [name, t] : tensors)
    if (present(*t)) contiguous(name, *t);
}

}  // namespace ssd_gpu
