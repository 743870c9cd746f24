// Damaged and foreign files are reported - by the library as a one-line ArgumentError naming the
// file, by ssd-golden as one "ssd-golden: ..." line and a non-zero exit - and never changed.
#include <gtest/gtest.h>
#include <hdf5.h>

#include "ssd/reference/errors.h"
#include "support.h"

namespace {

using namespace golden_test;

// bf16 inputs (uint16 storage), masks (padding), an optional output (out_x with +z).
const char* const kProblem = "chunk_scan:bf16 b1 s20 h2 p4 g1 n4 q8 +z seq=0:9,-11 seed=3";

fs::path write_golden(const TempDir& dir, const char* line = kProblem) {
  const ssd::Problem p = ssd::parse_problem(line);
  const fs::path path = dir / ssd::case_file_name(p);
  ssd::write_case(path, ssd::make_golden_case(p));
  return path;
}

// The library and the command line both report `file` with a message containing `what`, and
// leave it as it was.
void expect_reported(const fs::path& file, const std::string& what) {
  SCOPED_TRACE(file.string() + ": expecting '" + what + "'");
  std::vector<std::uint8_t> before;
  if (fs::exists(file)) before = ssd::read_file_bytes(file);
  try {
    ssd::read_case(file);
    ADD_FAILURE() << "read without complaint";
  } catch (const ssd::ArgumentError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_NE(message.find(file.string()), std::string::npos) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
  }
  const ToolRun run = run_tool({"check", file.string()});
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  const auto lines = run.error_lines();
  ASSERT_EQ(lines.size(), 1u) << run.err;  // and so no HDF5 error stack either
  EXPECT_EQ(lines[0].rfind("ssd-golden: ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find(file.string()), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find(what), std::string::npos) << lines[0];
  if (!before.empty()) {
    EXPECT_TRUE(ssd::read_file_bytes(file) == before) << "the file was changed";
  }
}

// HDF5 edits of a case file, as a careless or malicious writer would make them.
struct Edit {
  hid_t file;
  explicit Edit(const fs::path& path) : file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)) {
    if (file < 0) throw std::runtime_error("cannot open " + path.string());
  }
  ~Edit() { H5Fclose(file); }
  Edit(const Edit&) = delete;
  Edit& operator=(const Edit&) = delete;

  void set_string_attribute(const char* object, const char* name, const std::string& value) const {
    const hid_t target = H5Oopen(file, object, H5P_DEFAULT);
    if (H5Aexists(target, name) > 0) H5Adelete(target, name);
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, value.size());
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t attribute = H5Acreate2(target, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attribute, type, value.data());
    H5Aclose(attribute);
    H5Sclose(space);
    H5Tclose(type);
    H5Oclose(target);
  }
};

haddr_t data_offset(const fs::path& path, const char* dataset) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(file, dataset, H5P_DEFAULT);
  const haddr_t offset = H5Dget_offset(d);
  H5Dclose(d);
  H5Fclose(file);
  return offset;
}

TEST(Corruption, TruncatedFile) {
  TempDir dir;
  const fs::path path = write_golden(dir);
  auto bytes = ssd::read_file_bytes(path);
  for (std::size_t keep : {bytes.size() / 2, bytes.size() - 1, std::size_t{600}}) {
    write_bytes(path, std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(keep)));
    expect_reported(path, "truncated");
  }
}

TEST(Corruption, FlippedByteInADataset) {
  TempDir dir;
  const fs::path path = write_golden(dir);
  auto bytes = ssd::read_file_bytes(path);
  bytes[data_offset(path, "/inputs/x") + 5] ^= 0x40;
  write_bytes(path, bytes);
  expect_reported(path, "/inputs/x: SHA-256 mismatch");
}

TEST(Corruption, EveryFlippedByteIsCaughtOrHarmless) {
  // Each byte of a whole file in turn: the reader must report it or read exactly the original
  // case (the byte was padding). It must never crash or return altered numbers.
  TempDir dir;
  const fs::path path = write_golden(dir, "chunk_cumsum:f16 b1 s10 h2 q8 +dt_bias seed=4");
  const auto original = ssd::read_file_bytes(path);
  const ssd::CaseFile want = ssd::read_case(path);
  std::size_t reported = 0;
  for (std::size_t at = 0; at < original.size(); ++at) {
    auto bytes = original;
    bytes[at] ^= 0x10;
    try {
      const ssd::CaseFile got = ssd::decode_case(bytes, "image");
      ASSERT_EQ(ssd::to_string(got.problem), ssd::to_string(want.problem)) << "byte " << at;
      for (const auto& [name, t] : want.inputs.all())
        ASSERT_EQ(got.inputs.at(name).values(), t.values()) << "byte " << at << " changed /inputs/" << name;
      for (const ssd::Output& o : want.oracle.all())
        ASSERT_EQ(got.oracle.get(o.name).value.values(), o.value.values()) << "byte " << at << " changed " << o.name;
      for (const ssd::OutputBound& b : want.bounds.all())
        ASSERT_EQ(got.bounds.get(b.name).bound.values(), b.bound.values()) << "byte " << at << " changed a bound";
    } catch (const ssd::ArgumentError& e) {
      ASSERT_EQ(std::string(e.what()).find('\n'), std::string::npos);
      ++reported;
    }
  }
  EXPECT_GT(reported, original.size() / 2) << "most bytes of a small case file matter";
}

TEST(Corruption, ForeignHdf5File) {
  TempDir dir;
  const fs::path path = dir / "foreign.h5";
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t dims[1] = {4};
  const hid_t space = H5Screate_simple(1, dims, nullptr);
  const hid_t d = H5Dcreate2(file, "data", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const double values[4] = {1, 2, 3, 4};
  H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values);
  H5Dclose(d);
  H5Sclose(space);
  H5Fclose(file);
  expect_reported(path, "not an ssd case file");
}

TEST(Corruption, NotAnHdf5File) {
  TempDir dir;
  const fs::path path = dir / "notes.h5";
  std::ofstream(path) << "chunk_scan:bf16 b1 s20 h2 p4 g1 n4 q8 seed=3\nthis is text, not HDF5\n";
  expect_reported(path, "not an HDF5 file");
  write_bytes(path, {});
  expect_reported(path, "empty file");
}

TEST(Corruption, MissingFile) { expect_reported("/nonexistent/dir/case.h5", "cannot open"); }

TEST(Corruption, MissingDataset) {
  TempDir dir;
  const fs::path path = write_golden(dir);
  {
    Edit edit(path);
    H5Ldelete(edit.file, "/inputs/C", H5P_DEFAULT);
  }
  expect_reported(path, "missing dataset /inputs/C");
  {
    Edit edit(path);
    H5Ldelete(edit.file, "/oracle/out_x", H5P_DEFAULT);
  }
  expect_reported(path, "missing dataset /inputs/C");  // the first fault is named
}

TEST(Corruption, MissingOutputDataset) {
  TempDir dir;
  const fs::path path = write_golden(dir);
  {
    Edit edit(path);
    H5Ldelete(edit.file, "/bounds/out_x", H5P_DEFAULT);
  }
  expect_reported(path, "missing dataset /bounds/out_x");
}

TEST(Corruption, DatasetWithTheWrongShape) {
  TempDir dir;
  const fs::path path = write_golden(dir);
  {
    // A consistent dataset (checksum and dtype right) whose shape is not the problem's.
    Edit edit(path);
    const hid_t old = H5Dopen2(edit.file, "/inputs/x", H5P_DEFAULT);
    std::vector<std::uint16_t> values(40);
    const hsize_t take[4] = {1, 20, 2, 1};
    const hsize_t start[4] = {0, 0, 0, 0};
    const hid_t old_space = H5Dget_space(old);
    H5Sselect_hyperslab(old_space, H5S_SELECT_SET, start, nullptr, take, nullptr);
    const hid_t memory = H5Screate_simple(4, take, nullptr);
    H5Dread(old, H5T_STD_U16LE, memory, old_space, H5P_DEFAULT, values.data());
    H5Sclose(old_space);
    H5Dclose(old);
    H5Ldelete(edit.file, "/inputs/x", H5P_DEFAULT);
    const hid_t d = H5Dcreate2(edit.file, "/inputs/x", H5T_STD_U16LE, memory, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_STD_U16LE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    H5Sclose(memory);
    H5Dclose(d);
    const std::span<const std::uint8_t> raw(reinterpret_cast<const std::uint8_t*>(values.data()), 2 * values.size());
    edit.set_string_attribute("/inputs/x", "dtype", "bf16");
    edit.set_string_attribute("/inputs/x", "sha256", ssd::sha256_hex(raw));
  }
  expect_reported(path, "/inputs/x: shape [1,20,2,1], but the problem implies [1,20,2,4]");
}

TEST(Corruption, WrongDtypeAttribute) {
  TempDir dir;
  const fs::path path = write_golden(dir);
  {
    Edit edit(path);
    edit.set_string_attribute("/inputs/x", "dtype", "f16");
  }
  expect_reported(path, "/inputs/x: dtype f16, but the problem implies bf16");
  {
    Edit edit(path);
    edit.set_string_attribute("/inputs/x", "dtype", "f32");
  }
  expect_reported(path, "/inputs/x: dtype attribute f32 but stored as uint16");
  {
    Edit edit(path);
    edit.set_string_attribute("/inputs/x", "dtype", "float");
  }
  expect_reported(path, "names no dtype");
}

TEST(Corruption, WrongFormatAttributes) {
  TempDir dir;
  const fs::path path = write_golden(dir);
  const auto original = ssd::read_file_bytes(path);
  {
    Edit edit(path);
    edit.set_string_attribute("/", "kind", "gold");
  }
  expect_reported(path, "attribute kind 'gold'");
  write_bytes(path, original);
  {
    Edit edit(path);
    edit.set_string_attribute("/", "problem", "chunk_scan:bf16 b1 s20 h2 p4 g1 n4 q8 +z seq=0:9,-11");
  }
  expect_reported(path, "missing seed");
  write_bytes(path, original);
  {
    Edit edit(path);
    // Another valid problem: the stored datasets no longer fit it.
    edit.set_string_attribute("/", "problem", "chunk_scan:bf16 b1 s20 h2 p4 g1 n4 q8 seq=0:9,-11 seed=3");
  }
  expect_reported(path, "unexpected dataset /inputs/z");
}

TEST(Corruption, VerifyAndRegenReportAndRepair) {
  // A golden directory of two cases with one flipped byte: verify names it, regen --check
  // reports it without writing, regen restores the original bytes.
  TempDir dir;
  const char* lines[] = {kProblem, "chunk_cumsum:bf16 b1 s10 h2 q8 seed=5"};
  std::ofstream(dir / "manifest.txt") << lines[0] << "\n" << lines[1] << "\n";
  ASSERT_EQ(run_tool({"regen", "--data", dir.path().string()}).exit_code, 0);
  const fs::path path = dir / ssd::case_file_name(ssd::parse_problem(kProblem));
  const auto original = ssd::read_file_bytes(path);
  auto bytes = original;
  bytes[data_offset(path, "/oracle/out") + 3] ^= 1;
  write_bytes(path, bytes);

  const ToolRun verify = run_tool({"verify", "--data", dir.path().string()});
  EXPECT_EQ(verify.exit_code, 1);
  ASSERT_EQ(verify.error_lines().size(), 1u) << verify.err;
  EXPECT_NE(verify.err.find("/oracle/out: SHA-256 mismatch"), std::string::npos) << verify.err;

  const ToolRun check = run_tool({"regen", "--check", "--data", dir.path().string()});
  EXPECT_EQ(check.exit_code, 1);
  EXPECT_TRUE(ssd::read_file_bytes(path) == bytes) << "regen --check wrote";

  std::ofstream(dir / "stray.h5") << "x";
  const ToolRun stray = run_tool({"verify", "--data", dir.path().string()});
  EXPECT_NE(stray.err.find("stray.h5: not in the manifest"), std::string::npos) << stray.err;
  fs::remove(dir / "stray.h5");

  EXPECT_EQ(run_tool({"regen", "--data", dir.path().string()}).exit_code, 0);
  EXPECT_TRUE(ssd::read_file_bytes(path) == original);
  EXPECT_EQ(run_tool({"verify", "--data", dir.path().string()}).exit_code, 0);
}

}  // namespace
