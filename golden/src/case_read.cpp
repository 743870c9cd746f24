// Reading a case file: every structural fault becomes a one-line ArgumentError naming the file.
// Checks run from the outside in - HDF5 signature, opening, format attributes, layout, checksums,
// dtypes, and last the shapes the problem implies - so the message names the first thing wrong.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <new>
#include <optional>

#include "case_check.h"
#include "hdf5_util.h"
#include "ssd/reference/errors.h"

namespace ssd {

using namespace golden_detail;

namespace {

// A dataset as stored: element storage, shape, little-endian bytes (checksum verified).
struct RawDataset {
  std::string name;
  Storage storage = Storage::f64;
  Shape shape;
  std::vector<std::uint8_t> bytes;
  std::string dtype;                          // the dtype attribute
  std::optional<std::int64_t> reduction_length;
};

// The largest dataset a reader accepts; guards against corrupted extents asking for absurd memory.
constexpr std::uint64_t kMaxDatasetBytes = std::uint64_t{1} << 36;

// Absent is not an error; an object header HDF5 cannot read (corrupted) is.
bool has_attribute(hid_t object, const char* name, const std::string& where) {
  const htri_t exists = H5Aexists(object, name);
  if (exists < 0) fail_hdf5("cannot read the attributes of " + where);
  return exists > 0;
}

std::optional<std::string> read_string_attribute(hid_t object, const char* name, const std::string& where) {
  if (!has_attribute(object, name, where)) return std::nullopt;
  Hid attribute(H5Aopen(object, name, H5P_DEFAULT), H5Aclose);
  if (!attribute.valid()) fail_hdf5("cannot open attribute " + where + name);
  Hid type(H5Aget_type(attribute.get()), H5Tclose);
  Hid space(H5Aget_space(attribute.get()), H5Sclose);
  if (!type.valid() || !space.valid()) fail_hdf5("cannot read attribute " + where + name);
  if (H5Tget_class(type.get()) != H5T_STRING) throw CaseError("attribute " + where + name + " is not a string");
  if (H5Sget_simple_extent_npoints(space.get()) != 1) throw CaseError("attribute " + where + name + " is not one string");
  std::string value;
  if (H5Tis_variable_str(type.get()) > 0) {
    // h5py writes Python str attributes as variable-length UTF-8.
    Hid memory(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(memory.get(), H5T_VARIABLE);
    H5Tset_cset(memory.get(), H5Tget_cset(type.get()));
    char* text = nullptr;
    if (H5Aread(attribute.get(), memory.get(), &text) < 0) fail_hdf5("cannot read attribute " + where + name);
    if (text != nullptr) value = text;
    H5free_memory(text);
  } else {
    const std::size_t size = H5Tget_size(type.get());
    value.assign(size, '\0');
    Hid memory(H5Tcopy(type.get()), H5Tclose);
    if (H5Aread(attribute.get(), memory.get(), value.data()) < 0) fail_hdf5("cannot read attribute " + where + name);
    value.resize(std::strlen(value.c_str()));
    if (H5Tget_strpad(type.get()) == H5T_STR_SPACEPAD)
      while (!value.empty() && value.back() == ' ') value.pop_back();
  }
  return value;
}

std::optional<std::int64_t> read_int_attribute(hid_t object, const char* name, const std::string& where) {
  if (!has_attribute(object, name, where)) return std::nullopt;
  Hid attribute(H5Aopen(object, name, H5P_DEFAULT), H5Aclose);
  Hid type(attribute.valid() ? H5Aget_type(attribute.get()) : H5I_INVALID_HID, H5Tclose);
  Hid space(attribute.valid() ? H5Aget_space(attribute.get()) : H5I_INVALID_HID, H5Sclose);
  if (!type.valid() || !space.valid()) fail_hdf5("cannot read attribute " + where + name);
  if (H5Tget_class(type.get()) != H5T_INTEGER || H5Sget_simple_extent_npoints(space.get()) != 1)
    throw CaseError("attribute " + where + name + " is not one integer");
  std::int64_t value = 0;
  if (H5Aread(attribute.get(), H5T_NATIVE_INT64, &value) < 0) fail_hdf5("cannot read attribute " + where + name);
  return value;
}

std::vector<std::string> member_names(hid_t group, const std::string& where) {
  H5G_info_t info{};
  if (H5Gget_info(group, &info) < 0) fail_hdf5("cannot list " + where);
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t size = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (size < 0) fail_hdf5("cannot list " + where);
    std::string name(static_cast<std::size_t>(size) + 1, '\0');
    if (H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT) < 0)
      fail_hdf5("cannot list " + where);
    name.resize(static_cast<std::size_t>(size));
    names.push_back(std::move(name));
  }
  return names;
}

H5I_type_t object_type(hid_t group, const std::string& name, const std::string& where) {
  Hid object(H5Oopen(group, name.c_str(), H5P_DEFAULT), H5Oclose);
  if (!object.valid()) fail_hdf5("cannot open " + where);
  return H5Iget_type(object.get());
}

Storage classify(hid_t type, const std::string& where) {
  const H5T_class_t type_class = H5Tget_class(type);
  const std::size_t size = H5Tget_size(type);
  if (type_class == H5T_FLOAT && size == 8) return Storage::f64;
  if (type_class == H5T_FLOAT && size == 4) return Storage::f32;
  if (type_class == H5T_INTEGER) {
    const bool is_signed = H5Tget_sign(type) == H5T_SGN_2;
    if (size == 2 && !is_signed) return Storage::u16;
    if (size == 4 && is_signed) return Storage::i32;
    if (size == 1 && !is_signed) return Storage::u8;
    throw CaseError(where + ": " + (is_signed ? "signed " : "unsigned ") + std::to_string(8 * size) +
                    "-bit integers are not a case-file storage (uint16, int32 or uint8)");
  }
  throw CaseError(where + ": element type is not a case-file storage (float64, float32, uint16, int32 or uint8)");
}

RawDataset read_dataset(hid_t group, const std::string& name, const std::string& where) {
  Hid dataset(H5Dopen2(group, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dataset.valid()) fail_hdf5("cannot open dataset " + where);
  Hid type(H5Dget_type(dataset.get()), H5Tclose);
  Hid space(H5Dget_space(dataset.get()), H5Sclose);
  if (!type.valid() || !space.valid()) fail_hdf5("cannot read the type or shape of " + where);
  RawDataset raw;
  raw.name = name;
  raw.storage = classify(type.get(), where);
  if (H5Sget_simple_extent_type(space.get()) != H5S_SIMPLE) throw CaseError(where + ": not an array");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 1 || rank > 16) throw CaseError(where + ": rank " + std::to_string(rank) + " is not a tensor rank");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  std::uint64_t count = 1;
  for (hsize_t d : dims) {
    if (d == 0) throw CaseError(where + ": has an extent of 0");
    if (d > kMaxDatasetBytes || count > kMaxDatasetBytes / d) throw CaseError(where + ": absurdly large extents");
    count *= d;
    raw.shape.push_back(static_cast<std::int64_t>(d));
  }
  const std::uint64_t size = count * storage_size(raw.storage);
  if (size > kMaxDatasetBytes) throw CaseError(where + ": too large to read (" + std::to_string(size) + " bytes)");
  raw.bytes.resize(static_cast<std::size_t>(size));
  // Read as little-endian standard types: the checksum is defined over those bytes, whatever
  // byte order or float layout the writer chose.
  if (H5Dread(dataset.get(), file_type_of(raw.storage), H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.bytes.data()) < 0)
    fail_hdf5("cannot read the data of " + where + " (truncated or corrupted)");

  const auto stored_sum = read_string_attribute(dataset.get(), "sha256", where + "/");
  if (!stored_sum) throw CaseError(where + ": no sha256 attribute");
  std::string expected = *stored_sum;
  std::transform(expected.begin(), expected.end(), expected.begin(),
                 [](char ch) { return static_cast<char>(std::tolower(static_cast<unsigned char>(ch))); });
  const std::string actual = sha256_hex(raw.bytes);
  if (expected != actual)
    throw CaseError(where + ": SHA-256 mismatch, the data is corrupted (stored " + expected.substr(0, 16) +
                    "..., computed " + actual.substr(0, 16) + "...)");
  const auto dtype = read_string_attribute(dataset.get(), "dtype", where + "/");
  if (!dtype) throw CaseError(where + ": no dtype attribute");
  raw.dtype = *dtype;
  raw.reduction_length = read_int_attribute(dataset.get(), "reduction_length", where + "/");
  return raw;
}

std::vector<RawDataset> read_group(hid_t root, const std::string& group_name) {
  const std::string where = "/" + group_name;
  Hid group(H5Gopen2(root, group_name.c_str(), H5P_DEFAULT), H5Gclose);
  if (!group.valid()) fail_hdf5("cannot open group " + where);
  std::vector<RawDataset> datasets;
  for (const std::string& name : member_names(group.get(), where)) {
    const std::string path = where + "/" + name;
    if (object_type(group.get(), name, path) != H5I_DATASET) throw CaseError("unexpected object " + path + " (not a dataset)");
    datasets.push_back(read_dataset(group.get(), name, path));
  }
  return datasets;
}

DType parse_dtype_attribute(const RawDataset& raw, const std::string& where) {
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::i32})
    if (raw.dtype == dtype_name(t)) return t;
  throw CaseError(where + ": dtype attribute '" + raw.dtype + "' names no dtype (f32, f16, bf16, i32, f64)");
}

Tensor to_tensor(const RawDataset& raw, const std::string& where) {
  const DType dtype = parse_dtype_attribute(raw, where);
  try {
    return decode_values(dtype, raw.shape, raw.storage, raw.bytes);
  } catch (const CaseError& e) {
    throw CaseError(where + ": dtype attribute " + raw.dtype + " but " + e.what());
  }
}

std::vector<std::uint8_t> to_mask(const RawDataset& raw, const Shape& shape, const std::string& where) {
  if (raw.dtype != kMaskDtype || raw.storage != Storage::u8)
    throw CaseError(where + ": a mask must be uint8 with dtype attribute u8");
  if (raw.shape != shape)
    throw CaseError(where + ": shape " + shape_string(raw.shape) + " differs from its output's " + shape_string(shape));
  for (std::uint8_t v : raw.bytes)
    if (v > 1) throw CaseError(where + ": a mask holds only 0 and 1");
  return raw.bytes;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Values and, under "<name><suffix>", their masks.
struct Split {
  std::vector<const RawDataset*> values;
  std::map<std::string, const RawDataset*> masks;
};

Split split_masks(const std::vector<RawDataset>& group, std::string_view group_name, std::string_view suffix) {
  Split split;
  for (const RawDataset& raw : group) {
    if (ends_with(raw.name, suffix))
      split.masks[raw.name.substr(0, raw.name.size() - suffix.size())] = &raw;
    else
      split.values.push_back(&raw);
  }
  for (const auto& [base, raw] : split.masks) {
    const bool has_base = std::any_of(split.values.begin(), split.values.end(),
                                      [&base = base](const RawDataset* v) { return v->name == base; });
    if (!has_base) throw CaseError("unexpected dataset /" + std::string(group_name) + "/" + raw->name + " (a mask of nothing)");
  }
  return split;
}

CaseKind parse_kind(const std::string& text) {
  for (CaseKind k : {CaseKind::golden, CaseKind::inputs, CaseKind::results})
    if (text == case_kind_name(k)) return k;
  throw CaseError("attribute kind '" + text + "' is none of golden, inputs, results");
}

bool has_signature(std::span<const std::uint8_t> bytes) {
  static const std::uint8_t signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  // HDF5 looks at 0 and then at 512, 1024, 2048, ... (files with a user block).
  for (std::size_t at = 0; at + 8 <= bytes.size(); at = at == 0 ? 512 : 2 * at)
    if (std::memcmp(bytes.data() + at, signature, 8) == 0) return true;
  return false;
}

std::string required_string(hid_t root, const char* name) {
  auto value = read_string_attribute(root, name, "/");
  if (!value) throw CaseError("missing root attribute " + std::string(name));
  return *value;
}

CaseFile decode_image(std::span<const std::uint8_t> bytes) {
  if (bytes.empty()) throw CaseError("empty file, not an HDF5 file");
  if (!has_signature(bytes)) throw CaseError("not an HDF5 file (no HDF5 signature)");
  Hid fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.valid() || H5Pset_fapl_core(fapl.get(), 1 << 16, 0) < 0 ||
      H5Pset_file_image(fapl.get(), const_cast<std::uint8_t*>(bytes.data()), bytes.size()) < 0)
    fail_hdf5("cannot set up the file image");
  Hid file(H5Fopen(unique_image_name("read").c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
  if (!file.valid()) {
    const std::string detail = hdf5_error_detail();
    const bool truncated = detail.find("truncated") != std::string::npos;
    throw CaseError(std::string(truncated ? "truncated file" : "corrupted HDF5 file, HDF5 cannot open it") +
                    (detail.empty() ? "" : " (HDF5: " + detail + ")"));
  }
  const hid_t root = file.get();

  // Foreign files: any HDF5 file without our format marker.
  const auto format = read_string_attribute(root, "format", "/");
  if (!format || *format != kCaseFormat)
    throw CaseError("not an ssd case file (no root attribute format = \"" + std::string(kCaseFormat) + "\")");
  const auto version = read_int_attribute(root, "format_version", "/");
  if (!version) throw CaseError("missing root attribute format_version");
  if (*version != kCaseFormatVersion)
    throw CaseError("format_version " + std::to_string(*version) + " is not supported (this build reads " +
                    std::to_string(kCaseFormatVersion) + ")");

  CaseFile c;
  c.kind = parse_kind(required_string(root, "kind"));
  const std::string problem_text = required_string(root, "problem");
  try {
    c.problem = parse_problem(problem_text);
  } catch (const ArgumentError& e) {
    throw CaseError("attribute problem '" + problem_text + "': " + e.what());
  }
  c.contract_version = required_string(root, "contract_version");
  c.generator_version = required_string(root, "generator_version");
  c.oracle_version = required_string(root, "oracle_version");

  const std::vector<std::string> groups = member_names(root, "/");
  for (const std::string& name : groups) {
    const bool known = name == "inputs" || name == "oracle" || name == "bounds" || name == "outputs";
    if (!known || object_type(root, name, "/" + name) != H5I_GROUP)
      throw CaseError("unexpected object /" + name + " (a case file holds the groups inputs, oracle, bounds, outputs)");
  }
  auto has_group = [&](const char* name) { return std::find(groups.begin(), groups.end(), name) != groups.end(); };
  if (!has_group("inputs")) throw CaseError("missing group /inputs");
  const bool golden = c.kind == CaseKind::golden;
  if (golden && !has_group("oracle")) throw CaseError("missing group /oracle");
  if (golden && !has_group("bounds")) throw CaseError("missing group /bounds");
  if (has_group("oracle") != has_group("bounds")) throw CaseError("/oracle and /bounds come together");
  if (c.kind == CaseKind::inputs && has_group("oracle")) throw CaseError("unexpected group /oracle in an inputs case");
  if (c.kind == CaseKind::results && !has_group("outputs")) throw CaseError("missing group /outputs");
  if (c.kind != CaseKind::results && has_group("outputs"))
    throw CaseError("unexpected group /outputs in a " + std::string(case_kind_name(c.kind)) + " case");

  // Every dataset is read (and its checksum verified) before any is interpreted.
  const std::vector<RawDataset> inputs = read_group(root, "inputs");
  const std::vector<RawDataset> oracle = has_group("oracle") ? read_group(root, "oracle") : std::vector<RawDataset>{};
  const std::vector<RawDataset> bounds = has_group("bounds") ? read_group(root, "bounds") : std::vector<RawDataset>{};
  const std::vector<RawDataset> outputs = has_group("outputs") ? read_group(root, "outputs") : std::vector<RawDataset>{};

  for (const RawDataset& raw : inputs) c.inputs.put(raw.name, to_tensor(raw, "/inputs/" + raw.name));
  check_inputs(c);

  const Split oracle_split = split_masks(oracle, "oracle", ".defined");
  for (const RawDataset* raw : oracle_split.values) {
    const std::string where = "/oracle/" + raw->name;
    Tensor value = to_tensor(*raw, where);
    std::vector<std::uint8_t> defined;
    if (auto it = oracle_split.masks.find(raw->name); it != oracle_split.masks.end())
      defined = to_mask(*it->second, value.shape(), where + ".defined");
    c.oracle.add(raw->name, std::move(value), std::move(defined));
  }
  const Split bounds_split = split_masks(bounds, "bounds", ".exact");
  for (const RawDataset* raw : bounds_split.values) {
    const std::string where = "/bounds/" + raw->name;
    OutputBound b;
    b.name = raw->name;
    b.bound = to_tensor(*raw, where);
    if (!raw->reduction_length || *raw->reduction_length < 1)
      throw CaseError(where + ": needs a positive reduction_length attribute");
    b.reduction_length = *raw->reduction_length;
    if (auto it = bounds_split.masks.find(raw->name); it != bounds_split.masks.end())
      b.exact = to_mask(*it->second, b.bound.shape(), where + ".exact");
    c.bounds.add(std::move(b));
  }
  for (const RawDataset& raw : outputs) c.outputs.add(raw.name, to_tensor(raw, "/outputs/" + raw.name));

  // The shapes of the outputs are what the oracle produces on these inputs.
  Outputs reference;
  try {
    reference = op_spec(c.problem.op).chunked(c.problem, c.inputs);
  } catch (const ArgumentError& e) {
    throw CaseError(std::string("the oracle rejects the stored inputs: ") + e.what());
  }
  check_outputs(c, reference);
  return c;
}

}  // namespace

CaseFile decode_case(std::span<const std::uint8_t> bytes, const std::string& name) {
  silence_hdf5();
  try {
    return decode_image(bytes);
  } catch (const CaseError& e) {
    throw ArgumentError(name, e.what());
  } catch (const ArgumentError& e) {
    throw ArgumentError(name, e.what());
  } catch (const std::bad_alloc&) {
    throw ArgumentError(name, "out of memory while reading (corrupted extents?)");
  }
}

CaseFile read_case(const std::filesystem::path& path) { return decode_case(read_file_bytes(path), path.string()); }

}  // namespace ssd
