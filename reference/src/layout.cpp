// The memory layout of a case's inputs: zxbcdt views, seed-drawn pitches, the +far batch stride.
#include "ssd/reference/layout.h"

#include <algorithm>

#include "fill_stream.h"
#include "ssd/reference/op_spec.h"

namespace ssd {
namespace {

bool present(const InputRole& role, const Problem& p) { return !role.present || role.present(p); }

// A role that is also an output (recurrent's state, updated in place) keeps its dense buffer.
bool in_place(const OpSpec& spec, std::string_view role) {
  return std::any_of(spec.outputs.begin(), spec.outputs.end(), [&](const OutputRole& o) { return o.name == role; });
}

// Axis 0 of the role is the batch axis Bt: it grows with b.
bool batch_major(const InputRole& role, const Problem& p) {
  Problem wider = p;
  wider.b = p.b + 1;
  const Shape now = role.shape(p), then = role.shape(wider);
  return !now.empty() && !then.empty() && now[0] != then[0];
}

// recurrent +tie's per-head parameters (A [H,P,N], dt_bias [H,P]), whose values are constant
// after the head axis, as the stride-0 expansions of one value per head that vLLM and FlashInfer
// pass (A strides (1,0,0), dt_bias (1,0)): always with layout=zxbcdt (Mamba2.step's form), for
// half the seeds with layout=strided (stream (seed, "layout:expand")), so that padded dense
// parameters stay covered too. D is drawn per (h, p) even with +tie: it has no such form.
bool expands_per_head(const Problem& p, std::string_view role) {
  if (p.op != Op::recurrent || !p.tie || (role != "A" && role != "dt_bias")) return false;
  if (p.layout == Layout::zxbcdt) return true;
  return p.layout == Layout::strided && Stream(p.seed, "layout:expand", 0).below(2) == 0;
}

// Column of each zxbcdt role in a row of the projection: z, x, B, C, dt (Mamba2's in_proj order).
std::int64_t zxbcdt_column(const Problem& p, std::string_view role) {
  const std::int64_t hp = p.h * p.p, gn = p.g * p.n;
  if (role == "z") return 0;
  if (role == "x") return hp;
  if (role == "B") return 2 * hp;
  if (role == "C") return 2 * hp + gn;
  return 2 * hp + 2 * gn;  // dt
}

// Strides of the token axes of one row-major grid of rows `width` elements apart.
void token_strides(const Shape& shape, int token_rank, std::int64_t width, std::vector<std::int64_t>& strides) {
  std::int64_t stride = width;
  for (int axis = token_rank - 1; axis >= 0; --axis) {
    strides[static_cast<std::size_t>(axis)] = stride;
    stride *= shape[static_cast<std::size_t>(axis)];
  }
}

void zxbcdt_layout(const Problem& p, InputLayout& layout) {
  const OpSpec& spec = op_spec(p.op);
  const Shape x = spec.input("x")->shape(p);
  const int token_rank = static_cast<int>(x.size()) - 2;  // x is [tokens..., H, P]
  const std::int64_t width = zxbcdt_width(p);
  std::int64_t rows = 1;
  for (int axis = 0; axis < token_rank; ++axis) rows *= x[static_cast<std::size_t>(axis)];
  LayoutBuffer buffer{"zxbcdt", role_dtype(p, "x"), 0};
  for (std::string_view name : spec.zxbcdt) {
    const InputRole& role = *spec.input(name);
    if (!present(role, p)) continue;  // its columns stay a gap
    Placement v{std::string(name), buffer.name, role.shape(p), {}, zxbcdt_column(p, name)};
    v.strides.assign(v.shape.size(), 0);
    token_strides(v.shape, token_rank, width, v.strides);
    const auto features = v.shape.size() - static_cast<std::size_t>(token_rank);
    if (name == "dt" && features == 2) {
      v.strides[v.shape.size() - 2] = 1;  // recurrent +tie: one dt per head, expanded along P (stride 0)
      v.strides[v.shape.size() - 1] = 0;
    } else {
      std::int64_t stride = 1;
      for (std::size_t axis = v.shape.size(); axis-- > static_cast<std::size_t>(token_rank);) {
        v.strides[axis] = stride;
        stride *= v.shape[axis];
      }
    }
    if (p.far && token_rank > 0) v.strides[0] += kFarStride;
    layout.placements.push_back(std::move(v));
  }
  std::int64_t extent = rows * width;
  for (const Placement& v : layout.placements) extent = std::max(extent, v.last() + 1);
  buffer.extent = extent;
  layout.buffers.push_back(buffer);
  // The per-head parameters beside the projection: one value per head, dense, expanded with stride 0.
  for (const InputRole& role : spec.inputs) {
    if (!present(role, p) || !expands_per_head(p, role.name)) continue;
    Placement v{role.name, role.name, role.shape(p), {}, 0};
    v.strides.assign(v.shape.size(), 0);
    v.strides[0] = 1;
    layout.placements.push_back(v);
    layout.buffers.push_back(LayoutBuffer{role.name, role_dtype(p, role.name), v.last() + 1});
  }
}

// One input in a buffer of its own: a leading offset, pads after each axis but the first, an
// innermost stride of 1 or 2 and a tail, drawn from (seed, "layout:<role>"). An expanded
// parameter takes the offset, the innermost stride (as its head stride) and the tail of the same
// draws; its other axes have stride 0.
void strided_input(const Problem& p, const InputRole& role, InputLayout& layout) {
  Placement v{role.name, role.name, role.shape(p), {}, 0};
  Stream draw(p.seed, "layout:" + role.name, 0);
  v.offset = draw.below(4);
  const std::int64_t inner = draw.below(4) == 0 ? 2 : 1;
  std::vector<std::int64_t> pad(v.shape.size(), 0);
  for (std::size_t axis = 1; axis < v.shape.size(); ++axis) pad[axis] = draw.below(4);
  const std::int64_t tail = draw.below(4);
  if (expands_per_head(p, role.name)) {
    v.strides.assign(v.shape.size(), 0);
    v.strides[0] = inner;
    if (is_contiguous(v.shape, v.strides)) v.strides[0] = 2;  // [H,1,1]: no zero stride shows
    layout.placements.push_back(v);
    layout.buffers.push_back(LayoutBuffer{role.name, role_dtype(p, role.name), v.last() + 1 + tail});
    return;
  }
  auto pitch = [&](std::int64_t innermost) {
    v.strides.assign(v.shape.size(), innermost);
    for (std::size_t axis = v.shape.size(); axis-- > 1;) v.strides[axis - 1] = v.strides[axis] * (v.shape[axis] + pad[axis]);
  };
  pitch(inner);
  if (is_contiguous(v.shape, v.strides)) pitch(2);  // no pad landed where it shows: every other element
  if (p.far && !v.shape.empty() && batch_major(role, p)) v.strides[0] += kFarStride;
  layout.placements.push_back(v);
  layout.buffers.push_back(LayoutBuffer{role.name, role_dtype(p, role.name), v.last() + 1 + tail});
}

}  // namespace

std::int64_t Placement::last() const {
  std::int64_t at = offset;
  for (std::size_t axis = 0; axis < shape.size(); ++axis)
    if (shape[axis] > 0) at += (shape[axis] - 1) * strides[axis];
  return at;
}

const Placement* InputLayout::find(std::string_view role) const {
  for (const Placement& v : placements)
    if (v.role == role) return &v;
  return nullptr;
}

std::int64_t zxbcdt_width(const Problem& p) { return 2 * p.h * p.p + 2 * p.g * p.n + p.h; }

std::vector<std::int64_t> contiguous_strides(const Shape& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t axis = shape.size(); axis-- > 1;) strides[axis - 1] = strides[axis] * shape[axis];
  return strides;
}

bool is_contiguous(const Shape& shape, const std::vector<std::int64_t>& strides) {
  std::int64_t expected = 1;
  for (std::size_t axis = shape.size(); axis-- > 0;) {
    if (shape[axis] != 1 && strides[axis] != expected) return false;
    expected *= shape[axis];
  }
  return true;
}

InputLayout input_layout(const Problem& p) {
  InputLayout layout;
  const OpSpec& spec = op_spec(p.op);
  if (p.layout == Layout::zxbcdt) zxbcdt_layout(p, layout);
  if (p.layout == Layout::strided)
    for (const InputRole& role : spec.inputs)
      if (present(role, p) && !in_place(spec, role.name)) strided_input(p, role, layout);
  return layout;
}

std::optional<std::string> layout_reason(const Problem& p) {
  const OpSpec& spec = op_spec(p.op);
  if (p.far && p.layout == Layout::contiguous)
    return "+far needs layout=zxbcdt or layout=strided (it raises the batch stride of the views)";
  if (p.far && p.varlen) return "+far takes no +varlen (a packed batch has no batch axis to stride)";
  if (p.far && p.b < 2) return "+far needs b >= 2 (row 1 is the one that starts past 2^31 elements)";
  if (p.layout != Layout::zxbcdt) return std::nullopt;
  if (spec.zxbcdt.empty()) return std::string(spec.name) + " takes no layout=zxbcdt";
  if (p.op == Op::recurrent && !p.tie)
    return "layout=zxbcdt on recurrent needs +tie (the projection holds one dt per head, expanded along P)";
  const DType x = role_dtype(p, "x");
  for (std::string_view name : spec.zxbcdt) {
    const InputRole& role = *spec.input(name);
    if (present(role, p) && role_dtype(p, name) != x)
      return "layout=zxbcdt keeps " + std::string(name) + " in the buffer of x, of one dtype: " + std::string(name) +
             " is " + std::string(dtype_name(role_dtype(p, name))) + ", x " + std::string(dtype_name(x)) + " (give " +
             std::string(name) + "=" + std::string(dtype_name(x)) + ")";
  }
  return std::nullopt;
}

}  // namespace ssd
