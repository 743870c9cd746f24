// What ssd-bench reads beside its own timings: another library's times of the workloads
// (--against) and the targets of spec/workloads.md (--targets), and the verdict of one time against
// its target. Plain C++ (no CUDA), so the host tests check it where no GPU is.
#pragma once

#include <map>
#include <string>

namespace ssd::bench {

// A flat JSON object of times in us keyed by problem string, as tools/bench/time_mamba_ssm.py writes
// it; members whose value is not a number (null where a workload failed) are ignored. Throws
// std::runtime_error naming the file on a missing file or malformed JSON, and the member on a
// negative or non-finite time.
std::map<std::string, double> read_times(const std::string& path);

// The targets of spec/workloads.md (tools/bench/workload_targets.json):
//   seed_ratio: problem string -> the ratio to the reference library's time that the workload must
//               reach (its target is the reference time of the same run divided by this);
//   floor_share: the share of the traffic floor that meets a target where the floor allows no more;
//   mean_us:    op benchmark name -> the largest mean time over that op's workloads.
struct Targets {
  std::map<std::string, double> seed_ratio;
  double floor_share = 0.85;
  std::map<std::string, double> mean_us;
};

// Throws std::runtime_error naming the file and the member on a missing file, malformed JSON, a
// missing "seed_ratio" object, or a ratio, share or mean that is not a positive number (a share
// above 1 included).
Targets read_targets(const std::string& path);

// One workload against its target. target_us: the reference time over the seed ratio (0 where
// either is unknown). met: at or under target_us, or at floor_share of the floor or more
// (floor_us / us: the floor is what no kernel can beat, so a kernel that close to it has no more
// to gain whatever the reference does).
struct TargetVerdict {
  double target_us = 0;
  bool met = false;
};
TargetVerdict judge_target(double us, double floor_us, double reference_us, double seed_ratio, double floor_share);

}  // namespace ssd::bench
