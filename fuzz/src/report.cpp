// JSON and JUnit reports of a campaign.
#include "ssd/fuzz/report.h"

#include <unistd.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ssd/reference/errors.h"

namespace ssd {
namespace {

// Keys in the order written, so the report reads top to bottom.
using json = nlohmann::ordered_json;

// JSON has no infinity: an infinite max r is written as the string "inf".
json number_or_inf(double v) { return std::isfinite(v) ? json(v) : json("inf"); }

json tally_json(const OpTally& t) {
  json decades = json::object();
  for (int d = 0; d < kRDecades; ++d) decades[r_decade_label(d)] = t.r_decades[static_cast<std::size_t>(d)];
  return {{"cases", t.cases},       {"PASSED", t.passed},   {"FAILED", t.failed},         {"MISTRUSTED", t.mistrusted},
          {"CRASHED", t.crashed},   {"TIMEOUT", t.timeout}, {"VARIANT", t.variant}, {"SUSPECT", t.suspect},
          {"SKIPPED", t.skipped},   {"INVALID", t.invalid}, {"not_finite", t.not_finite}, {"max_r", number_or_inf(t.max_r)},
          {"max_ratio", number_or_inf(t.max_ratio)},
          {"seconds", t.seconds},   {"r_decades", decades}};
}

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string repro_command(const ReportContext& context, const std::string& problem) {
  return context.repro_prefix + " --problem " + shell_quote(problem);
}

std::string json_report(const CampaignResult& r, const ReportContext& context) {
  json ops = json::array();
  for (const auto& [key, t] : r.by_dtype) {
    json row = tally_json(t);
    row["op"] = std::string(op_name(key.first));
    row["dtype"] = std::string(dtype_name(key.second));
    ops.push_back(std::move(row));
  }
  json failures = json::array();
  for (const Failure& f : r.failures)
    failures.push_back({{"op", std::string(op_name(f.minimal.op))},
                        {"dtype", std::string(dtype_name(f.minimal.dtype))},
                        {"verdict", std::string(verdict_name(f.judgement.verdict))},
                        {"problem", f.judgement.problem},
                        {"original", to_string(f.original)},
                        {"max_r", number_or_inf(f.judgement.max_r())},
                        {"max_ratio", number_or_inf(f.judgement.max_ratio())},
                        {"message", f.judgement.message},
                        {"description", describe(f.judgement)},
                        {"repro", repro_command(context, f.judgement.problem)},
                        {"case_file", f.dump.string()}});
  json unimplemented = json::array();
  for (Op op : r.unimplemented) unimplemented.push_back(std::string(op_name(op)));
  const CampaignSummary summary = summarize(r);
  const json report = {{"kernels", context.kernels},
                       {"library", context.library_name},
                       {"seed", context.seed},
                       {"shard", context.shard},
                       {"seconds", r.seconds},
                       {"exit_status", summary.exit_status},
                       {"summary", summary.line},
                       {"stopped_by", r.stopped_by ? json(signal_name(r.stopped_by)) : json(nullptr)},
                       {"unimplemented_ops", unimplemented},
                       {"by_op_and_dtype", ops},
                       {"failures", failures}};
  return report.dump(2) + "\n";
}

std::string junit_report(const CampaignResult& r, const ReportContext& context) {
  std::int64_t tests = 0, failures = 0, skipped = 0;
  std::string cases;
  for (const auto& [key, t] : r.by_dtype) {
    const std::string name = std::string(op_name(key.first)) + ":" + std::string(dtype_name(key.second));
    ++tests;
    cases += "    <testcase classname=\"ssd-fuzz." + xml_escape(context.library_name) + "\" name=\"" + xml_escape(name) +
             "\" time=\"" + std::to_string(t.seconds) + "\">\n";
    if (t.failed > 0 || t.suspect > 0) {
      ++failures;
      std::string text;
      for (const Failure& f : r.failures)
        if (f.minimal.op == key.first && f.minimal.dtype == key.second)
          text += describe(f.judgement) + "\n" + repro_command(context, f.judgement.problem) + "\n";
      const std::string what = t.failed > 0 ? std::to_string(t.failed) + " of " + std::to_string(t.cases) + " cases FAILED"
                                            : std::string();
      const std::string suspect = t.suspect > 0 ? std::to_string(t.suspect) + " of " + std::to_string(t.cases) + " cases SUSPECT"
                                                : std::string();
      cases += "      <failure message=\"" + what + (what.empty() || suspect.empty() ? "" : ", ") + suspect + "\">" +
               xml_escape(text) + "</failure>\n";
    } else if (t.cases == t.skipped) {
      ++skipped;
      cases += "      <skipped message=\"every case SKIPPED\"/>\n";
    }
    cases += "      <system-out>" + xml_escape(json(tally_json(t)).dump()) + "</system-out>\n    </testcase>\n";
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"ssd-fuzz\" tests=\"" +
         std::to_string(tests) + "\" failures=\"" + std::to_string(failures) + "\" skipped=\"" + std::to_string(skipped) +
         "\" time=\"" + std::to_string(r.seconds) + "\">\n" + cases + "  </testsuite>\n</testsuites>\n";
}

void write_report_file(const std::filesystem::path& path, const std::string& text, const char* option) {
  const std::filesystem::path temporary = path.string() + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw ArgumentError(option, "cannot write " + path.string());
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    throw ArgumentError(option, "cannot write " + path.string());
  }
}

}  // namespace ssd
