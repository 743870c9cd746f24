// Internal to ssd_golden: owning HDF5 handles, HDF5's error detail as text, and how each dtype
// is stored in a file (the element encodings of docs/case-files.md).
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ssd/reference/tensor.h"

namespace ssd::golden_detail {

// Anything wrong with a file. Caught at the library's entry points and rethrown as an
// ArgumentError that names the file, so messages here need not repeat it.
struct CaseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Owns one HDF5 identifier and closes it with the matching H5?close.
class Hid {
 public:
  Hid() = default;
  Hid(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  Hid(Hid&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)), close_(other.close_) {}
  Hid& operator=(Hid&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
      close_ = other.close_;
    }
    return *this;
  }
  ~Hid() { reset(); }
  hid_t get() const { return id_; }
  hid_t release() { return std::exchange(id_, H5I_INVALID_HID); }
  bool valid() const { return id_ >= 0; }
  void reset() {
    if (id_ >= 0 && close_ != nullptr) close_(id_);
    id_ = H5I_INVALID_HID;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  herr_t (*close_)(hid_t) = nullptr;
};

// HDF5 prints its error stack to stderr by default; the library reports errors itself. The
// setting is per thread in thread-safe builds, so every entry point calls this.
void silence_hdf5();
// The most specific message of HDF5's current error stack (then cleared), or "" when empty.
std::string hdf5_error_detail();
// Throws CaseError("<what> (HDF5: <detail>)").
[[noreturn]] void fail_hdf5(const std::string& what);
// A name for an in-memory file that no other open file shares (HDF5 identifies core-driver files
// without a backing store by name).
std::string unique_image_name(std::string_view purpose);

// How values are laid out in a file: the HDF5 element type and the bytes of one element.
enum class Storage { f64, f32, u16, i32, u8 };
Storage storage_of(DType dtype);
hid_t file_type_of(Storage s);       // little-endian standard types: H5T_IEEE_F64LE, ...
std::size_t storage_size(Storage s);
std::string_view storage_name(Storage s);  // "float64", "float32", "uint16", "int32", "uint8"

// The dtype attribute of masks (0/1 per element).
inline constexpr std::string_view kMaskDtype = "u8";

// A tensor's values as the little-endian bytes of its storage (bf16/f16 as bit patterns).
std::vector<std::uint8_t> encode_values(const Tensor& t);
// The inverse; throws CaseError for a storage that does not hold `dtype`.
Tensor decode_values(DType dtype, const Shape& shape, Storage storage, std::span<const std::uint8_t> bytes);

}  // namespace ssd::golden_detail
