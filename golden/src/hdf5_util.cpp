// HDF5 helpers of ssd_golden: error text, unique image names and the element encodings.
#include "hdf5_util.h"

#include <atomic>
#include <bit>
#include <cstring>
#include <unistd.h>

namespace ssd::golden_detail {

// Files are written and hashed as little-endian bytes straight from memory.
static_assert(std::endian::native == std::endian::little, "case files assume a little-endian host");

void silence_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

namespace {

herr_t keep_first_description(unsigned, const H5E_error2_t* error, void* data) {
  auto* detail = static_cast<std::string*>(data);
  if (detail->empty() && error->desc != nullptr && error->desc[0] != '\0') *detail = error->desc;
  return 0;
}

}  // namespace

std::string hdf5_error_detail() {
  std::string detail;
  // Upward: the most specific error (where HDF5 found the problem) comes first.
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_first_description, &detail);
  H5Eclear2(H5E_DEFAULT);
  for (char& ch : detail)
    if (ch == '\n' || ch == '\r') ch = ' ';  // messages are one line
  return detail;
}

void fail_hdf5(const std::string& what) {
  const std::string detail = hdf5_error_detail();
  throw CaseError(detail.empty() ? what : what + " (HDF5: " + detail + ")");
}

std::string unique_image_name(std::string_view purpose) {
  static std::atomic<std::uint64_t> counter{0};
  return "ssd-case-" + std::string(purpose) + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

Storage storage_of(DType dtype) {
  switch (dtype) {
    case DType::f64: return Storage::f64;
    case DType::f32: return Storage::f32;
    case DType::f16:
    case DType::bf16: return Storage::u16;
    case DType::i32: return Storage::i32;
  }
  throw CaseError("unknown dtype");
}

hid_t file_type_of(Storage s) {
  switch (s) {
    case Storage::f64: return H5T_IEEE_F64LE;
    case Storage::f32: return H5T_IEEE_F32LE;
    case Storage::u16: return H5T_STD_U16LE;
    case Storage::i32: return H5T_STD_I32LE;
    case Storage::u8: return H5T_STD_U8LE;
  }
  throw CaseError("unknown storage");
}

std::size_t storage_size(Storage s) {
  switch (s) {
    case Storage::f64: return 8;
    case Storage::f32:
    case Storage::i32: return 4;
    case Storage::u16: return 2;
    case Storage::u8: return 1;
  }
  return 0;
}

std::string_view storage_name(Storage s) {
  switch (s) {
    case Storage::f64: return "float64";
    case Storage::f32: return "float32";
    case Storage::u16: return "uint16";
    case Storage::i32: return "int32";
    case Storage::u8: return "uint8";
  }
  return "?";
}

std::vector<std::uint8_t> encode_values(const Tensor& t) {
  const Storage s = storage_of(t.dtype());
  const std::size_t n = static_cast<std::size_t>(t.numel());
  std::vector<std::uint8_t> bytes(n * storage_size(s));
  std::uint8_t* out = bytes.data();
  for (std::size_t i = 0; i < n; ++i) {
    const double v = t.data()[i];
    switch (t.dtype()) {
      case DType::f64: std::memcpy(out + 8 * i, &v, 8); break;
      case DType::f32: {
        const float f = static_cast<float>(v);  // exact: the tensor holds f32 values
        std::memcpy(out + 4 * i, &f, 4);
        break;
      }
      case DType::f16:
      case DType::bf16: {
        const std::uint16_t bits = t.dtype() == DType::f16 ? f16_bits(v) : bf16_bits(v);
        std::memcpy(out + 2 * i, &bits, 2);
        break;
      }
      case DType::i32: {
        const auto k = static_cast<std::int32_t>(v);
        std::memcpy(out + 4 * i, &k, 4);
        break;
      }
    }
  }
  return bytes;
}

Tensor decode_values(DType dtype, const Shape& shape, Storage storage, std::span<const std::uint8_t> bytes) {
  if (storage != storage_of(dtype))
    throw CaseError("stored as " + std::string(storage_name(storage)) + ", but " + std::string(dtype_name(dtype)) +
                    " is stored as " + std::string(storage_name(storage_of(dtype))));
  const std::size_t n = static_cast<std::size_t>(element_count(shape));
  if (bytes.size() != n * storage_size(storage)) throw CaseError("holds the wrong number of bytes for its shape");
  std::vector<double> values(n);
  const std::uint8_t* in = bytes.data();
  for (std::size_t i = 0; i < n; ++i) {
    switch (dtype) {
      case DType::f64: std::memcpy(&values[i], in + 8 * i, 8); break;
      case DType::f32: {
        float f;
        std::memcpy(&f, in + 4 * i, 4);
        values[i] = f;
        break;
      }
      case DType::f16:
      case DType::bf16: {
        std::uint16_t bits;
        std::memcpy(&bits, in + 2 * i, 2);
        values[i] = dtype == DType::f16 ? f16_from_bits(bits) : bf16_from_bits(bits);
        break;
      }
      case DType::i32: {
        std::int32_t k;
        std::memcpy(&k, in + 4 * i, 4);
        values[i] = k;
        break;
      }
    }
  }
  return Tensor(dtype, shape, std::move(values));
}

}  // namespace ssd::golden_detail
