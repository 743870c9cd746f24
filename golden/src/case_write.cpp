// Encoding a case as HDF5 bytes: built in memory (core driver, no backing store) so the bytes can
// be compared with an existing file before anything is written, and so no partial file can exist.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "case_check.h"
#include "hdf5_util.h"
#include "ssd/reference/errors.h"

namespace ssd {

using namespace golden_detail;

namespace {

// Object creation properties that keep the bytes a pure function of the content: no access,
// modification or change times in any object header.
Hid untimed(hid_t property_class) {
  Hid plist(H5Pcreate(property_class), H5Pclose);
  if (!plist.valid() || H5Pset_obj_track_times(plist.get(), 0) < 0) fail_hdf5("cannot create a property list");
  return plist;
}

void write_string_attribute(hid_t object, const char* name, std::string_view value) {
  // Fixed-length, null-padded ASCII: no global heap (as variable-length strings would need), and
  // h5py reads it back as bytes.
  std::string buffer(value);
  if (buffer.empty()) buffer.push_back('\0');
  Hid type(H5Tcopy(H5T_C_S1), H5Tclose);
  Hid space(H5Screate(H5S_SCALAR), H5Sclose);
  if (!type.valid() || H5Tset_size(type.get(), buffer.size()) < 0 || H5Tset_strpad(type.get(), H5T_STR_NULLPAD) < 0 ||
      H5Tset_cset(type.get(), H5T_CSET_ASCII) < 0 || !space.valid())
    fail_hdf5(std::string("cannot make attribute ") + name);
  Hid attribute(H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attribute.valid() || H5Awrite(attribute.get(), type.get(), buffer.data()) < 0)
    fail_hdf5(std::string("cannot write attribute ") + name);
}

void write_int_attribute(hid_t object, const char* name, std::int64_t value) {
  Hid space(H5Screate(H5S_SCALAR), H5Sclose);
  Hid attribute(H5Acreate2(object, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attribute.valid() || H5Awrite(attribute.get(), H5T_NATIVE_INT64, &value) < 0)
    fail_hdf5(std::string("cannot write attribute ") + name);
}

hid_t make_group(hid_t file, const char* name, hid_t gcpl) {
  const hid_t group = H5Gcreate2(file, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
  if (group < 0) fail_hdf5(std::string("cannot create group ") + name);
  return group;
}

// One dataset: contiguous, uncompressed, untimed; attributes dtype and sha256 (of exactly the
// bytes written), plus reduction_length for bounds.
void write_dataset(hid_t group, const std::string& name, Storage storage, const Shape& shape,
                   const std::vector<std::uint8_t>& bytes, std::string_view dtype, std::int64_t reduction_length = -1) {
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  Hid space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
  Hid dcpl = untimed(H5P_DATASET_CREATE);
  if (!space.valid() || H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS) < 0 ||
      H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER) < 0)
    fail_hdf5("cannot prepare dataset " + name);
  const hid_t type = file_type_of(storage);
  Hid dataset(H5Dcreate2(group, name.c_str(), type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT), H5Dclose);
  if (!dataset.valid() || H5Dwrite(dataset.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) < 0)
    fail_hdf5("cannot write dataset " + name);
  write_string_attribute(dataset.get(), "dtype", dtype);
  write_string_attribute(dataset.get(), "sha256", sha256_hex(bytes));
  if (reduction_length >= 0) write_int_attribute(dataset.get(), "reduction_length", reduction_length);
}

void write_tensor(hid_t group, const std::string& name, const Tensor& t) {
  write_dataset(group, name, storage_of(t.dtype()), t.shape(), encode_values(t), dtype_name(t.dtype()));
}

// A mask is written only when it excludes something: absent means "every element".
bool mask_matters(const std::vector<std::uint8_t>& mask, std::uint8_t dull) {
  return std::any_of(mask.begin(), mask.end(), [dull](std::uint8_t v) { return (v != 0) != (dull != 0); });
}

void write_mask(hid_t group, const std::string& name, const Shape& shape, const std::vector<std::uint8_t>& mask) {
  std::vector<std::uint8_t> bytes(mask.size());
  for (std::size_t i = 0; i < mask.size(); ++i) bytes[i] = mask[i] != 0 ? 1 : 0;
  write_dataset(group, name, Storage::u8, shape, bytes, kMaskDtype);
}

// The core driver keeps the file in memory; these callbacks hand us its buffer when the file is
// closed. H5Fget_file_image is no substitute: HDF5 1.10 leaves a stale checksum in the copy's
// superblock (the in-memory superblock carries the "open for writing" flag).
struct ImageCapture {
  std::size_t size = 0;  // of the buffer the driver holds now
  std::vector<std::uint8_t> image;
  bool closed = false;
};

void* image_malloc(std::size_t size, H5FD_file_image_op_t, void* udata) {
  static_cast<ImageCapture*>(udata)->size = size;
  return std::calloc(size, 1);  // zeroed: no stray heap bytes can reach the file
}

void* image_memcpy(void* dest, const void* src, std::size_t size, H5FD_file_image_op_t, void*) {
  return std::memcpy(dest, src, size);
}

void* image_realloc(void* ptr, std::size_t size, H5FD_file_image_op_t, void* udata) {
  auto* capture = static_cast<ImageCapture*>(udata);
  auto* grown = static_cast<std::uint8_t*>(std::realloc(ptr, size));
  if (grown != nullptr && size > capture->size) std::memset(grown + capture->size, 0, size - capture->size);
  if (grown != nullptr) capture->size = size;
  return grown;
}

herr_t image_free(void* ptr, H5FD_file_image_op_t op, void* udata) {
  auto* capture = static_cast<ImageCapture*>(udata);
  if (op == H5FD_FILE_IMAGE_OP_FILE_CLOSE && ptr != nullptr) {
    const auto* bytes = static_cast<const std::uint8_t*>(ptr);
    capture->image.assign(bytes, bytes + capture->size);
    capture->closed = true;
  }
  std::free(ptr);
  return 0;
}

void* share_udata(void* udata) { return udata; }
herr_t keep_udata(void*) { return 0; }

// The driver's buffer grows in increments; the file is the part below the end-of-file address of
// the superblock (version 2, as pinned: signature 8 bytes, version, two sizes, flags, base address,
// extension address, then the end-of-file address at byte 28).
void trim_to_end_of_file(std::vector<std::uint8_t>& image) {
  if (image.size() < 48 || image[8] != 2 || image[9] != 8) throw CaseError("unexpected superblock in the file image");
  std::uint64_t end = 0;
  for (int i = 7; i >= 0; --i) end = (end << 8) | image[28 + static_cast<std::size_t>(i)];
  if (end > image.size()) throw CaseError("file image shorter than its end-of-file address");
  image.resize(static_cast<std::size_t>(end));
}

std::vector<std::uint8_t> write_image(const CaseFile& c) {
  ImageCapture capture;
  H5FD_file_image_callbacks_t callbacks{image_malloc, image_memcpy, image_realloc, image_free,
                                        share_udata,  keep_udata,   &capture};
  Hid fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  // In memory only; the format versions are pinned so that the bytes do not follow the library's
  // defaults (1.8 formats: checksummed object headers, readable by every current HDF5 and h5py).
  if (!fapl.valid() || H5Pset_fapl_core(fapl.get(), 1 << 16, 0) < 0 ||
      H5Pset_file_image_callbacks(fapl.get(), &callbacks) < 0 ||
      H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18) < 0)
    fail_hdf5("cannot set up an in-memory file");
  Hid fcpl = untimed(H5P_FILE_CREATE);  // the root group's times
  Hid gcpl = untimed(H5P_GROUP_CREATE);
  Hid file(H5Fcreate(unique_image_name("write").c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get()), H5Fclose);
  if (!file.valid()) fail_hdf5("cannot create an in-memory file");
  const hid_t root = file.get();

  write_string_attribute(root, "format", kCaseFormat);
  write_int_attribute(root, "format_version", kCaseFormatVersion);
  write_string_attribute(root, "problem", to_string(c.problem));
  write_string_attribute(root, "contract_version", c.contract_version);
  write_string_attribute(root, "generator_version", c.generator_version);
  write_string_attribute(root, "oracle_version", c.oracle_version);
  write_string_attribute(root, "kind", case_kind_name(c.kind));

  {
    Hid inputs(make_group(root, "inputs", gcpl.get()), H5Gclose);
    for (const auto& [name, tensor] : c.inputs.all()) write_tensor(inputs.get(), name, tensor);
  }
  if (!c.oracle.all().empty()) {
    Hid oracle(make_group(root, "oracle", gcpl.get()), H5Gclose);
    for (const Output& o : c.oracle.all()) {
      write_tensor(oracle.get(), o.name, o.value);
      if (mask_matters(o.defined, 1)) write_mask(oracle.get(), o.name + ".defined", o.value.shape(), o.defined);
    }
    // Bounds in the oracle's order, so the layout does not depend on how they were assembled.
    Hid bounds(make_group(root, "bounds", gcpl.get()), H5Gclose);
    for (const Output& o : c.oracle.all()) {
      const OutputBound& b = c.bounds.get(o.name);
      write_dataset(bounds.get(), b.name, Storage::f64, b.bound.shape(), encode_values(b.bound), "f64",
                    b.reduction_length);
      if (mask_matters(b.exact, 0)) write_mask(bounds.get(), b.name + ".exact", b.bound.shape(), b.exact);
    }
  }
  if (c.kind == CaseKind::results) {
    Hid outputs(make_group(root, "outputs", gcpl.get()), H5Gclose);
    for (const Output& o : c.outputs.all()) write_tensor(outputs.get(), o.name, o.value);
  }

  // Every object is closed by now, so closing the file writes the final metadata and frees the
  // buffer, which image_free captures.
  if (H5Fclose(file.release()) < 0) fail_hdf5("cannot close the in-memory file");
  if (!capture.closed) throw CaseError("the in-memory file image was not captured");
  trim_to_end_of_file(capture.image);
  return std::move(capture.image);
}

}  // namespace

std::vector<std::uint8_t> encode_case(const CaseFile& c) {
  silence_hdf5();
  try {
    check_inputs(c);
    if (c.kind == CaseKind::results && c.oracle.all().empty()) {
      const Outputs reference = op_spec(c.problem.op).chunked(c.problem, c.inputs);
      check_outputs(c, reference);
    } else {
      check_outputs(c, c.oracle);
    }
    return write_image(c);
  } catch (const CaseError& e) {
    throw ArgumentError("case", std::string(e.what()) + " (" + to_string(c.problem) + ")");
  }
}

WriteOutcome write_case(const std::filesystem::path& path, const CaseFile& c) {
  const std::vector<std::uint8_t> bytes = encode_case(c);
  return write_file_if_changed(path, bytes);
}

}  // namespace ssd
