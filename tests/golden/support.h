// Shared by the golden tests: temporary directories, running ssd-golden, file bytes.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ssd/golden/case_file.h"

namespace golden_test {

namespace fs = std::filesystem;

// A fresh directory under $TMPDIR, removed with everything in it at the end of the scope.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "ssd-golden-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline void write_bytes(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

inline std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char ch : text) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}

struct ToolRun {
  int exit_code = -1;
  std::string out, err;
  // The lines of stderr (without the final newline).
  std::vector<std::string> error_lines() const {
    std::vector<std::string> lines;
    std::stringstream in(err);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
};

// Runs ssd-golden with `args`, with `env` ("NAME=value ...") prepended, capturing both streams.
inline ToolRun run_tool(const std::vector<std::string>& args, const std::string& env = "") {
  TempDir capture;
  // Appended piecewise: "literal" + std::string draws a false -Wrestrict from GCC 12.
  std::string command;
  if (!env.empty()) command.append("env ").append(env).append(" ");
  command.append(shell_quote(SSD_GOLDEN_TOOL));
  for (const std::string& a : args) command.append(" ").append(shell_quote(a));
  command.append(" >").append(shell_quote((capture / "out").string()));
  command.append(" 2>").append(shell_quote((capture / "err").string()));
  const int status = std::system(command.c_str());
  ToolRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = read_text(capture / "out");
  run.err = read_text(capture / "err");
  return run;
}

// Every *.h5 file of a directory with its bytes, by name.
inline std::vector<std::pair<std::string, std::vector<std::uint8_t>>> case_files(const fs::path& dir) {
  std::vector<std::pair<std::string, std::vector<std::uint8_t>>> files;
  for (const auto& item : fs::directory_iterator(dir))
    if (item.path().extension() == ".h5") files.emplace_back(item.path().filename().string(), ssd::read_file_bytes(item.path()));
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace golden_test
