// Tensor <-> kernel-ABI bytes and host views: native dtype encodings (f32, f16 and bf16 bit
// patterns, i32); input views of any strides, outputs contiguous row-major.
#include "ssd/reference/abi_views.h"

#include <cstring>

#include "ssd/reference/errors.h"
#include "ssd/reference/layout.h"

namespace ssd {

ssd_dtype abi_dtype(DType t) {
  switch (t) {
    case DType::f32: return SSD_DTYPE_F32;
    case DType::f16: return SSD_DTYPE_F16;
    case DType::bf16: return SSD_DTYPE_BF16;
    case DType::i32: return SSD_DTYPE_I32;
    case DType::f64: break;
  }
  throw ArgumentError("dtype", "f64 has no kernel-ABI encoding");
}

DType from_abi_dtype(int32_t t) {
  switch (t) {
    case SSD_DTYPE_F32: return DType::f32;
    case SSD_DTYPE_F16: return DType::f16;
    case SSD_DTYPE_BF16: return DType::bf16;
    case SSD_DTYPE_I32: return DType::i32;
    default: throw ArgumentError("dtype", "unknown kernel-ABI dtype code " + std::to_string(t));
  }
}

std::size_t dtype_bytes(DType t) { return t == DType::f16 || t == DType::bf16 ? 2 : t == DType::f64 ? 8 : 4; }

std::vector<std::uint8_t> encode(const Tensor& t) {
  const std::size_t width = dtype_bytes(t.dtype());
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(t.numel()) * width);
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    std::uint8_t* at = bytes.data() + static_cast<std::size_t>(i) * width;
    switch (t.dtype()) {
      case DType::f32: { const float v = static_cast<float>(t[i]); std::memcpy(at, &v, 4); break; }
      case DType::f16: { const std::uint16_t v = f16_bits(t[i]); std::memcpy(at, &v, 2); break; }
      case DType::bf16: { const std::uint16_t v = bf16_bits(t[i]); std::memcpy(at, &v, 2); break; }
      case DType::i32: { const auto v = static_cast<std::int32_t>(t[i]); std::memcpy(at, &v, 4); break; }
      case DType::f64: { const double v = t[i]; std::memcpy(at, &v, 8); break; }
    }
  }
  return bytes;
}

Tensor decode(DType dtype, const Shape& shape, const void* bytes) {
  Tensor t(dtype, shape);
  const auto* base = static_cast<const std::uint8_t*>(bytes);
  const std::size_t width = dtype_bytes(dtype);
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    const std::uint8_t* at = base + static_cast<std::size_t>(i) * width;
    double v = 0;
    switch (dtype) {
      case DType::f32: { float f; std::memcpy(&f, at, 4); v = f; break; }
      case DType::f16: { std::uint16_t u; std::memcpy(&u, at, 2); v = f16_from_bits(u); break; }
      case DType::bf16: { std::uint16_t u; std::memcpy(&u, at, 2); v = bf16_from_bits(u); break; }
      case DType::i32: { std::int32_t k; std::memcpy(&k, at, 4); v = k; break; }
      case DType::f64: std::memcpy(&v, at, 8); break;
    }
    t.data()[i] = v;  // already representable: the bytes are of this dtype
  }
  return t;
}

namespace {

Shape view_shape(const ssd_tensor& view, const char* op, const char* name) {
  if (view.rank < 0 || view.rank > SSD_MAX_RANK) throw ArgumentError(op, name, "rank " + std::to_string(view.rank) + " out of range");
  Shape shape(view.shape, view.shape + view.rank);
  for (std::int64_t extent : shape)
    if (extent < 0) throw ArgumentError(op, name, "negative extent");
  return shape;
}

// An output is written densely: its strides must be row-major.
void require_contiguous(const ssd_tensor& view, const Shape& shape, const char* op, const char* name) {
  std::int64_t stride = 1;
  for (int axis = view.rank - 1; axis >= 0; --axis) {
    if (view.shape[axis] > 1 && view.strides[axis] != stride)
      throw ArgumentError(op, name, "output strides are not contiguous row-major");
    stride *= shape[static_cast<std::size_t>(axis)];
  }
}

}  // namespace

Tensor tensor_from_view(const ssd_tensor& view, const char* op, const char* name) {
  const DType dtype = from_abi_dtype(view.dtype);
  const Shape shape = view_shape(view, op, name);
  const std::int64_t count = element_count(shape);
  if (view.data == nullptr && count > 0) throw ArgumentError(op, name, "data is NULL");
  const std::vector<std::int64_t> strides(view.strides, view.strides + view.rank);
  if (count == 0 || is_contiguous(shape, strides)) return decode(dtype, shape, view.data);
  // Any other strides (padded pitches, 0 along an expanded axis, offsets past 2^31): gathered
  // element by element, offsets in int64, into a dense tensor.
  const std::size_t width = dtype_bytes(dtype);
  std::vector<std::uint8_t> dense(static_cast<std::size_t>(count) * width);
  const auto* base = static_cast<const std::uint8_t*>(view.data);
  std::vector<std::int64_t> index(shape.size(), 0);
  std::int64_t offset = 0;
  for (std::int64_t e = 0; e < count; ++e) {
    std::memcpy(dense.data() + static_cast<std::size_t>(e) * width, base + offset * static_cast<std::int64_t>(width), width);
    for (std::size_t axis = shape.size(); axis-- > 0;) {  // the next index, row-major
      offset += strides[axis];
      if (++index[axis] < shape[axis]) break;
      offset -= strides[axis] * shape[axis];
      index[axis] = 0;
    }
  }
  return decode(dtype, shape, dense.data());
}

void write_view(const ssd_tensor& view, const Tensor& values, const char* op, const char* name) {
  const Shape shape = view_shape(view, op, name);
  require_contiguous(view, shape, op, name);
  if (view.data == nullptr) throw ArgumentError(op, name, "output data is NULL");
  if (shape != values.shape())
    throw ArgumentError(op, name, "output shape " + shape_string(shape) + ", expected " + shape_string(values.shape()));
  if (from_abi_dtype(view.dtype) != values.dtype())
    throw ArgumentError(op, name, "output dtype " + std::string(dtype_name(from_abi_dtype(view.dtype))) + ", expected " +
                                      std::string(dtype_name(values.dtype())));
  const std::vector<std::uint8_t> bytes = encode(values);
  std::memcpy(view.data, bytes.data(), bytes.size());
}

}  // namespace ssd
