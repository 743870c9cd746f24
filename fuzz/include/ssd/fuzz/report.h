// Machine-readable reports of a campaign: JSON (per op and dtype: cases, each verdict, max r, the r
// histogram in decades, the failures with their problem strings and repro commands) and JUnit XML
// (one testcase per op and dtype) for CI systems. Files are written to a temporary name and renamed.
#pragma once
#include <filesystem>
#include <string>

#include "ssd/fuzz/campaign.h"

namespace ssd {

// What the report says about how the campaign was run.
struct ReportContext {
  std::string kernels;       // the --kernels argument
  std::string library_name;  // the table's name
  std::uint64_t seed = 0;
  std::string shard;         // "i/n"
  std::string repro_prefix;  // the command a repro line starts with, e.g. "ssd-fuzz --kernels x.so"
};

std::string json_report(const CampaignResult& result, const ReportContext& context);
std::string junit_report(const CampaignResult& result, const ReportContext& context);
// The full command that replays one problem: `<repro_prefix> --problem '<problem>'`.
std::string repro_command(const ReportContext& context, const std::string& problem);

// Writes `text` to `path` atomically (temporary file in the same folder, then rename); throws
// ArgumentError naming `option` when the file cannot be written.
void write_report_file(const std::filesystem::path& path, const std::string& text, const char* option);

}  // namespace ssd
