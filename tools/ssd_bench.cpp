// ssd-bench: device time of a kernel library on every workload of spec/workloads.md, measured as
// the workloads document says: a CUDA graph of 20 back-to-back calls, replayed, median replay
// time / 20 (no L2 flush; host launch overhead excluded). Prints one row per workload with the
// traffic floor (every input read once and every output written once, at 4.25 TB/s); with
// --against, another library's times of the same workloads beside ours, their ratio and geometric
// means; with --targets, each workload's target (spec/workloads.md) and whether it is met; with
// --json, every figure of the table in a file; with --memory-rates, the device's own copy and fill
// rates timed the same way first (the ceilings the floor's 4.25 TB/s stands for).
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench_targets.h"
#include "ssd/harness/runner.h"

namespace {

constexpr double kCopyBytesPerSecond = 4.25e12;  // the H200's device-to-device copy rate
constexpr int kCallsPerGraph = 20;

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// Keys in the order written, so the file reads as the table does.
using Json = nlohmann::ordered_json;

// read(), its errors prefixed with the argument whose file it reads.
template <class Read>
auto naming_argument(const std::string& argument, Read read) {
  try {
    return read();
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("argument '" + argument + "': " + e.what());
  }
}

// A --json path that cannot be written fails before the timings, not after them.
void check_writable(const std::string& path) {
  const std::string part = path + ".part";
  if (!std::ofstream(part)) throw std::runtime_error("argument '--json': cannot write " + part);
  std::remove(part.c_str());
}

// Writes text to path through path.part, renamed at the end: a run cut short leaves no half file.
void write_whole(const std::string& path, const std::string& text) {
  const std::string part = path + ".part";
  bool written = false;
  {
    std::ofstream out(part);
    written = static_cast<bool>(out << text << std::flush);
  }
  if (!written || std::rename(part.c_str(), path.c_str()) != 0) {
    std::remove(part.c_str());
    throw std::runtime_error("argument '--json': cannot write " + path);
  }
}

// The median device time of one call over replays of a CUDA graph of kCallsPerGraph calls of
// `call` captured on `stream` (at least 5 replays, then up to `replays` within `max_seconds`).
struct Timing {
  double us = 0;
  std::size_t replays = 0;
};
template <class Call>
Timing time_graph(cudaStream_t stream, Call call, int replays, double max_seconds) {
  cudaEvent_t begin, end;
  cuda_check(cudaEventCreate(&begin), "event");
  cuda_check(cudaEventCreate(&end), "event");
  cudaGraph_t graph;
  cuda_check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture");
  for (int i = 0; i < kCallsPerGraph; ++i) call();
  cuda_check(cudaStreamEndCapture(stream, &graph), "capture");
  cudaGraphExec_t exec;
  cuda_check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  std::vector<float> ms;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < replays; ++r) {
    cuda_check(cudaEventRecord(begin, stream), "record");
    cuda_check(cudaGraphLaunch(exec, stream), "launch");
    cuda_check(cudaEventRecord(end, stream), "record");
    cuda_check(cudaEventSynchronize(end), "sync");
    float t = 0;
    cuda_check(cudaEventElapsedTime(&t, begin, end), "elapsed");
    ms.push_back(t);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > max_seconds && r >= 4) break;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  std::nth_element(ms.begin(), ms.begin() + static_cast<std::ptrdiff_t>(ms.size() / 2), ms.end());
  return {1e3 * ms[ms.size() / 2] / kCallsPerGraph, ms.size()};
}

// Device memory of one probe, freed however the probe ends.
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(std::size_t bytes) {
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
      cudaGetLastError();  // clear it: the error is reported here, not by the next call
      throw std::runtime_error("argument '--memory-rates': cannot allocate " + std::to_string(bytes >> 20) +
                               " MiB of device memory (two buffers of that size are needed)");
    }
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(p); }
};

// What the memory itself allows, timed as the workloads are: a device-to-device copy of `bytes`
// (each byte read and written once, so its rate counts 2 x bytes: spec/workloads.md's floor rate is
// this one) and a memset of `bytes` (written only: the ceiling of a kernel whose traffic is almost
// all stores, such as discretize_segsum's).
struct MemoryRates {
  std::size_t bytes = 0;
  Timing copy, fill;
  double copy_bytes_per_second() const { return 2.0 * static_cast<double>(bytes) / (copy.us * 1e-6); }
  double fill_bytes_per_second() const { return static_cast<double>(bytes) / (fill.us * 1e-6); }
};
MemoryRates measure_memory_rates(cudaStream_t stream, std::size_t bytes, int replays, double max_seconds) {
  DeviceBuffer from(bytes), to(bytes);
  cuda_check(cudaMemsetAsync(from.p, 1, bytes, stream), "memset");  // warm up, and defined contents
  cuda_check(cudaMemcpyAsync(to.p, from.p, bytes, cudaMemcpyDeviceToDevice, stream), "copy");
  cuda_check(cudaStreamSynchronize(stream), "warm-up");
  MemoryRates rates;
  rates.bytes = bytes;
  rates.copy = time_graph(
      stream, [&] { cudaMemcpyAsync(to.p, from.p, bytes, cudaMemcpyDeviceToDevice, stream); }, replays, max_seconds);
  rates.fill = time_graph(stream, [&] { cudaMemsetAsync(to.p, 0, bytes, stream); }, replays, max_seconds);
  return rates;
}

// The run's device, driver and runtime, as the JSON's header.
Json device_json() {
  int device = 0, driver = 0, runtime = 0;
  cudaDeviceProp prop{};
  cuda_check(cudaGetDevice(&device), "device");
  cuda_check(cudaGetDeviceProperties(&prop, device), "device properties");
  cuda_check(cudaDriverGetVersion(&driver), "driver version");
  cuda_check(cudaRuntimeGetVersion(&runtime), "runtime version");
  return {{"device", prop.name}, {"cuda_driver", driver}, {"cuda_runtime", runtime}};
}

double rounded(double v) { return std::round(v * 1e4) / 1e4; }  // 4 decimals: the table's precision and more

struct Row {
  std::string op, workload;
  double us = 0, floor_us = 0, against_us = 0;  // against_us 0: not in --against
  std::size_t replays = 0, min_bytes = 0;
  double seed_ratio = 0;                        // 0: no target in --targets
  ssd::bench::TargetVerdict target;
};

// The mean time over an op's rows, against the op's mean target (--targets' mean_us).
struct OpMean {
  double mean_us = 0, target_us = 0;
  int workloads = 0;
  bool met() const { return mean_us <= target_us; }
};
OpMean op_mean(const std::vector<Row>& rows, const std::string& op, double target_us) {
  OpMean m;
  m.target_us = target_us;
  for (const Row& r : rows)
    if (r.op == op) {
      m.mean_us += r.us;
      ++m.workloads;
    }
  if (m.workloads > 0) m.mean_us /= m.workloads;
  return m;
}

// Geometric mean of against/ours over the rows that have both (0 when none).
double geomean_ratio(const std::vector<Row>& rows, const std::string& op) {
  double log_sum = 0;
  int n = 0;
  for (const Row& r : rows)
    if (r.against_us > 0 && (op.empty() || r.op == op)) {
      log_sum += std::log(r.against_us / r.us);
      ++n;
    }
  return n == 0 ? 0.0 : std::exp(log_sum / n);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Times a kernel library on the benchmark workloads (CUDA graphs of 20 calls)."};
  std::string kernels, against, against_name = "other", targets_file, json;
  std::vector<std::string> ops;
  std::string filter;
  int replays = 100, memory_rates_mib = 0;
  double seconds_per_workload = 3;
  app.add_option("--kernels", kernels, "path to a CUDA kernel library (.so); required unless --memory-rates alone");
  app.add_option("--ops", ops, "ops to time (default: all the library implements)");
  app.add_option("--filter", filter, "only workloads whose problem string contains this text");
  app.add_option("--replays", replays, "graph replays per workload (default 100)")->check(CLI::PositiveNumber);
  app.add_option("--max-seconds", seconds_per_workload,
                 "cap on replay time per workload; slow workloads get fewer replays (default 3)");
  app.add_option("--against", against,
                 "JSON object of another library's times: problem string -> us per call; adds its column, the "
                 "ratio (its time / ours) and geometric means");
  app.add_option("--against-name", against_name, "column title of --against's times (default 'other')");
  app.add_option("--targets", targets_file,
                 "JSON of each workload's target (tools/bench/workload_targets.json): adds the target (--against's "
                 "time / seed ratio) and whether it is met (or at floor_share of the floor), and op mean targets")
      ->needs("--against");
  app.add_option("--json", json, "also write every figure of the table to this JSON file");
  app.add_option("--memory-rates", memory_rates_mib,
                 "first time a device-to-device copy and a memset of this many MiB as the workloads are timed "
                 "(the copy's rate counts bytes read and written); alone, without --kernels, only these")
      ->check(CLI::Range(1, 1 << 16));
  CLI11_PARSE(app, argc, argv);
  try {
    if (kernels.empty() && memory_rates_mib == 0)
      throw std::runtime_error("argument '--kernels': required (a CUDA kernel library), unless --memory-rates alone");
    const std::map<std::string, double> other =
        against.empty() ? std::map<std::string, double>{}
                        : naming_argument("--against", [&] { return ssd::bench::read_times(against); });
    const bool with_targets = !targets_file.empty();
    const ssd::bench::Targets targets =
        with_targets ? naming_argument("--targets", [&] { return ssd::bench::read_targets(targets_file); })
                     : ssd::bench::Targets{};
    if (!json.empty()) check_writable(json);
    cudaStream_t stream;
    cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    MemoryRates rates;
    if (memory_rates_mib > 0) {
      rates = measure_memory_rates(stream, static_cast<std::size_t>(memory_rates_mib) << 20, replays,
                                   seconds_per_workload);
      std::printf("Memory rates (%d MiB; CUDA graph of %d calls, median): device-to-device copy %.3f TB/s (bytes read "
                  "and written / time; %.2f us), memset %.3f TB/s (bytes written / time; %.2f us)\n\n",
                  memory_rates_mib, kCallsPerGraph, rates.copy_bytes_per_second() / 1e12, rates.copy.us,
                  rates.fill_bytes_per_second() / 1e12, rates.fill.us);
      std::fflush(stdout);
    }
    Json memory_json;
    if (memory_rates_mib > 0)
      memory_json = {{"bytes", rates.bytes},
                     {"copy_us", rounded(rates.copy.us)},
                     {"copy_bytes_per_second", std::round(rates.copy_bytes_per_second())},
                     {"fill_us", rounded(rates.fill.us)},
                     {"fill_bytes_per_second", std::round(rates.fill_bytes_per_second())}};
    if (kernels.empty()) {
      if (!json.empty()) {
        Json table = device_json();
        table["memory_rates"] = memory_json;
        write_whole(json, table.dump(2) + "\n");
      }
      return 0;
    }
    const ssd::KernelLibrary library = ssd::KernelLibrary::open(kernels);
    if (library.table().memory_kind != SSD_MEMORY_CUDA) throw std::runtime_error(kernels + " is not a CUDA library");
    std::vector<ssd::Op> selected;
    for (const auto& name : ops) selected.push_back(ssd::parse_op(name));
    if (selected.empty())
      for (ssd::Op op : ssd::kAllOps)
        if (library.implements(op)) selected.push_back(op);
    const bool side_by_side = !against.empty();
    std::printf("| op | workload | us per call | replays | min bytes | floor us | of floor |%s%s\n|---|---|---:|---:|---:|---:|---:|%s%s\n",
                side_by_side ? (" " + against_name + " us | ratio |").c_str() : "", with_targets ? " target us | met |" : "",
                side_by_side ? "---:|---:|" : "", with_targets ? "---:|:-:|" : "");
    std::vector<Row> rows;
    for (ssd::Op op : selected) {
      for (const ssd::Problem& p : ssd::op_spec(op).workloads()) {
        const std::string problem = ssd::to_string(p);
        if (!filter.empty() && problem.find(filter) == std::string::npos) continue;
        const ssd::InputSet inputs = ssd::make_inputs(p);
        const ssd::PreparedCall call(library, p, inputs);
        for (int i = 0; i < 3; ++i)  // warm up (and surface argument errors before capturing)
          if (call.invoke(stream) != SSD_STATUS_OK) throw std::runtime_error(library.table().last_error());
        cuda_check(cudaStreamSynchronize(stream), "warm-up");
        const Timing timing = time_graph(stream, [&] { call.invoke(stream); }, replays, seconds_per_workload);
        Row row;
        row.op = std::string(ssd::op_benchmark_name(op));
        row.workload = problem;
        row.us = timing.us;
        row.replays = timing.replays;
        row.min_bytes = call.min_bytes();
        row.floor_us = 1e6 * static_cast<double>(call.min_bytes()) / kCopyBytesPerSecond;
        const auto found = other.find(problem);
        if (found != other.end()) row.against_us = found->second;
        std::printf("| %s | `%s` | %.2f | %zu | %zu | %.2f | %.0f%% |", row.op.c_str(), problem.c_str(), row.us,
                    row.replays, row.min_bytes, row.floor_us, 100.0 * row.floor_us / row.us);
        if (side_by_side) {
          if (row.against_us > 0)
            std::printf(" %.2f | %.2fx |", row.against_us, row.against_us / row.us);
          else
            std::printf(" - | - |");
        }
        if (with_targets) {
          const auto ratio = targets.seed_ratio.find(problem);
          if (ratio != targets.seed_ratio.end()) {
            row.seed_ratio = ratio->second;
            row.target =
                ssd::bench::judge_target(row.us, row.floor_us, row.against_us, row.seed_ratio, targets.floor_share);
            if (row.target.target_us > 0)
              std::printf(" %.2f | %s |", row.target.target_us, row.target.met ? "yes" : "no");
            else
              std::printf(" - | %s |", row.target.met ? "yes" : "no");
          } else {
            std::printf(" - | - |");
          }
        }
        std::printf("\n");
        std::fflush(stdout);
        rows.push_back(row);
      }
    }
    std::vector<std::string> op_names;
    for (const Row& r : rows)
      if (std::find(op_names.begin(), op_names.end(), r.op) == op_names.end()) op_names.push_back(r.op);
    if (side_by_side) {
      std::printf("\nGeometric mean of %s / ours (workloads in both):\n", against_name.c_str());
      for (const std::string& op : op_names)
        if (geomean_ratio(rows, op) > 0) std::printf("  %-22s %.2fx\n", op.c_str(), geomean_ratio(rows, op));
      std::printf("  %-22s %.2fx\n", "all", geomean_ratio(rows, ""));
    }
    int targets_met = 0, targets_total = 0;
    for (const Row& r : rows)
      if (r.seed_ratio > 0) {
        ++targets_total;
        targets_met += r.target.met ? 1 : 0;
      }
    if (with_targets) {
      std::printf("\nTargets met: %d of %d workloads (%s's time / seed ratio, or %.0f%% of the floor)\n", targets_met,
                  targets_total, against_name.c_str(), 100.0 * targets.floor_share);
      for (const auto& [op, target_us] : targets.mean_us) {
        const OpMean m = op_mean(rows, op, target_us);
        if (m.workloads > 0)
          std::printf("  %s: mean %.2f us over %d workloads, target %.2f us: %s\n", op.c_str(), m.mean_us, m.workloads,
                      m.target_us, m.met() ? "met" : "not met");
      }
    }
    if (!json.empty()) {
      const auto num = rounded;
      Json table = {{"library", library.table().name}};
      table.update(device_json());
      table["method"] =
          "CUDA graph of " + std::to_string(kCallsPerGraph) + " calls, median over replays / 20, no L2 flush";
      table["floor_bytes_per_second"] = kCopyBytesPerSecond;
      if (memory_rates_mib > 0) table["memory_rates"] = memory_json;
      if (side_by_side) table["against"] = against_name;
      Json& json_rows = table["rows"] = Json::array();
      for (const Row& r : rows) {
        Json row = {{"op", r.op},          {"workload", r.workload},         {"us", num(r.us)},
                    {"replays", r.replays}, {"min_bytes", r.min_bytes},       {"floor_us", num(r.floor_us)},
                    {"of_floor", num(r.floor_us / r.us)}};
        if (r.against_us > 0) {
          row["against_us"] = num(r.against_us);
          row["ratio"] = num(r.against_us / r.us);
        }
        if (r.seed_ratio > 0) {
          row["seed_ratio"] = r.seed_ratio;
          if (r.target.target_us > 0) row["target_us"] = num(r.target.target_us);
          row["met"] = r.target.met;
        }
        json_rows.push_back(row);
      }
      if (side_by_side) {
        Json& means = table["geomean_ratio"] = Json::object();
        for (const std::string& op : op_names)
          if (geomean_ratio(rows, op) > 0) means[op] = num(geomean_ratio(rows, op));
        means["all"] = num(geomean_ratio(rows, ""));
      }
      if (with_targets) {
        Json means = Json::object();
        for (const auto& [op, target_us] : targets.mean_us) {
          const OpMean m = op_mean(rows, op, target_us);
          if (m.workloads > 0)
            means[op] = {
                {"mean_us", num(m.mean_us)}, {"workloads", m.workloads}, {"target_us", m.target_us}, {"met", m.met()}};
        }
        table["targets"] = {{"file", targets_file},
                            {"floor_share", targets.floor_share},
                            {"met", targets_met},
                            {"workloads", targets_total},
                            {"means", means}};
      }
      write_whole(json, table.dump(2) + "\n");
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ssd-bench: %s\n", e.what());
    return 2;
  }
}
