// The golden manifest: problem strings, one per line, with '#' comments.
#include <map>

#include "ssd/golden/case_file.h"
#include "ssd/reference/errors.h"

namespace ssd {

std::vector<ManifestEntry> read_manifest(const std::filesystem::path& path) {
  const std::vector<std::uint8_t> bytes = read_file_bytes(path);
  const std::string text(bytes.begin(), bytes.end());
  std::vector<ManifestEntry> entries;
  std::map<std::string, std::size_t> seen;  // canonical string -> line
  std::size_t line_number = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    at = end + 1;
    ++line_number;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = "line " + std::to_string(line_number) + ": ";
    ManifestEntry entry;
    entry.line = line_number;
    try {
      entry.problem = parse_problem(line);
    } catch (const ArgumentError& e) {
      throw ArgumentError(path.string(), where + e.what());
    }
    if (auto why = invalid_reason(entry.problem))
      throw ArgumentError(path.string(), where + "invalid problem: " + *why);
    entry.text = to_string(entry.problem);
    const auto first = line.find_first_not_of(" \t");
    const auto last = line.find_last_not_of(" \t");
    entry.canonical = line.substr(first, last - first + 1) == entry.text;
    if (auto [it, fresh] = seen.emplace(entry.text, line_number); !fresh)
      throw ArgumentError(path.string(), where + "the same problem as line " + std::to_string(it->second));
    entry.file_name = case_file_name(entry.problem);
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace ssd
