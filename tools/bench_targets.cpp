// Reading ssd-bench's --against and --targets files (nlohmann::json), and one time's verdict.
#include "bench_targets.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace ssd::bench {
namespace {

using json = nlohmann::json;

json parse_file(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot read " + path);
  try {
    return json::parse(file);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(path + ": not JSON (" + e.what() + ")");
  }
}

// value as a positive finite number, or an error naming the file and the member.
double positive(const json& value, const std::string& path, const std::string& member) {
  if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() <= 0)
    throw std::runtime_error(path + ": " + member + " is " + value.dump() + ", not a positive number");
  return value.get<double>();
}

}  // namespace

std::map<std::string, double> read_times(const std::string& path) {
  const json j = parse_file(path);
  if (!j.is_object()) throw std::runtime_error(path + ": expected a JSON object of problem string -> us");
  std::map<std::string, double> times;
  for (const auto& [problem, value] : j.items()) {
    if (!value.is_number()) continue;
    const double us = value.get<double>();
    if (!std::isfinite(us) || us < 0)
      throw std::runtime_error(path + ": \"" + problem + "\" is " + value.dump() + ", not a time in us");
    times[problem] = us;
  }
  return times;
}

Targets read_targets(const std::string& path) {
  const json j = parse_file(path);
  if (!j.is_object() || !j.contains("seed_ratio") || !j["seed_ratio"].is_object())
    throw std::runtime_error(path + ": expected an object with a \"seed_ratio\" object (problem string -> ratio)");
  Targets t;
  for (const auto& [problem, ratio] : j["seed_ratio"].items())
    t.seed_ratio[problem] = positive(ratio, path, "seed_ratio \"" + problem + "\"");
  if (j.contains("floor_share")) {
    t.floor_share = positive(j["floor_share"], path, "floor_share");
    if (t.floor_share > 1) throw std::runtime_error(path + ": floor_share is " + j["floor_share"].dump() + ", above 1");
  }
  if (j.contains("mean_us")) {
    if (!j["mean_us"].is_object()) throw std::runtime_error(path + ": mean_us is not an object (op -> us)");
    for (const auto& [op, us] : j["mean_us"].items()) t.mean_us[op] = positive(us, path, "mean_us \"" + op + "\"");
  }
  return t;
}

TargetVerdict judge_target(double us, double floor_us, double reference_us, double seed_ratio, double floor_share) {
  TargetVerdict v;
  if (reference_us > 0 && seed_ratio > 0) v.target_us = reference_us / seed_ratio;
  const bool under_target = v.target_us > 0 && us <= v.target_us;
  const bool near_floor = us > 0 && floor_us / us >= floor_share;
  v.met = under_target || near_floor;
  return v;
}

}  // namespace ssd::bench
