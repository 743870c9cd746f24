// ssd-bench: device time of a kernel library on every workload of spec/workloads.md, measured as
// the workloads document says: a CUDA graph of 20 back-to-back calls, replayed, median replay
// time / 20 (no L2 flush; host launch overhead excluded). Prints one row per workload with the
// traffic floor (every input read once and every output written once, at 4.25 TB/s); with
// --against, another library's times of the same workloads beside ours, their ratio and geometric
// means; with --json, every figure of the table in a file.
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "ssd/harness/runner.h"

namespace {

constexpr double kCopyBytesPerSecond = 4.25e12;  // the H200's device-to-device copy rate
constexpr int kCallsPerGraph = 20;

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// Reads a flat JSON object whose number values are times in us keyed by problem string (as
// tools/bench/time_mamba_ssm.py writes it); members whose value is not a number are ignored.
std::map<std::string, double> read_times(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot read " + path);
  std::stringstream buffer;
  buffer << file.rdbuf();
  const std::string s = buffer.str();
  std::size_t i = 0;
  auto bad = [&](const char* what) { return std::runtime_error(path + ": " + what + " at offset " + std::to_string(i)); };
  auto skip_ws = [&] {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  };
  auto read_string = [&] {
    if (s[i] != '"') throw bad("expected a string");
    std::string out;
    for (++i; i < s.size() && s[i] != '"'; ++i) {
      if (s[i] == '\\' && i + 1 < s.size()) ++i;  // problem strings hold no escapes beyond \" and \\ .
      out += s[i];
    }
    if (i >= s.size()) throw bad("unterminated string");
    ++i;
    return out;
  };
  std::map<std::string, double> times;
  skip_ws();
  if (i >= s.size() || s[i] != '{') throw bad("expected a JSON object");
  ++i;
  for (;;) {
    skip_ws();
    if (i < s.size() && s[i] == '}') break;
    const std::string key = read_string();
    skip_ws();
    if (i >= s.size() || s[i] != ':') throw bad("expected ':'");
    ++i;
    skip_ws();
    if (i < s.size() && s[i] == '"') {
      read_string();
    } else {
      const char* begin = s.c_str() + i;
      char* end = nullptr;
      const double v = std::strtod(begin, &end);
      if (end == begin) {  // null, true, false: skipped
        while (i < s.size() && s[i] != ',' && s[i] != '}') ++i;
      } else {
        times[key] = v;
        i += static_cast<std::size_t>(end - begin);
      }
    }
    skip_ws();
    if (i < s.size() && s[i] == ',') {
      ++i;
      continue;
    }
    if (i < s.size() && s[i] == '}') break;
    throw bad("expected ',' or '}'");
  }
  return times;
}

std::string json_string(const std::string& v) {
  std::string out = "\"";
  for (char ch : v) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

struct Row {
  std::string op, workload;
  double us = 0, floor_us = 0, against_us = 0;  // against_us 0: not in --against
  std::size_t replays = 0, min_bytes = 0;
};

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
  std::string kernels, against, against_name = "other", json;
  std::vector<std::string> ops;
  std::string filter;
  int replays = 100;
  double seconds_per_workload = 3;
  app.add_option("--kernels", kernels, "path to a CUDA kernel library (.so)")->required();
  app.add_option("--ops", ops, "ops to time (default: all the library implements)");
  app.add_option("--filter", filter, "only workloads whose problem string contains this text");
  app.add_option("--replays", replays, "graph replays per workload (default 100)")->check(CLI::PositiveNumber);
  app.add_option("--max-seconds", seconds_per_workload,
                 "cap on replay time per workload; slow workloads get fewer replays (default 3)");
  app.add_option("--against", against,
                 "JSON object of another library's times: problem string -> us per call; adds its column, the "
                 "ratio (its time / ours) and geometric means");
  app.add_option("--against-name", against_name, "column title of --against's times (default 'other')");
  app.add_option("--json", json, "also write every figure of the table to this JSON file");
  CLI11_PARSE(app, argc, argv);
  try {
    const std::map<std::string, double> other = against.empty() ? std::map<std::string, double>{} : read_times(against);
    const ssd::KernelLibrary library = ssd::KernelLibrary::open(kernels);
    if (library.table().memory_kind != SSD_MEMORY_CUDA) throw std::runtime_error(kernels + " is not a CUDA library");
    std::vector<ssd::Op> selected;
    for (const auto& name : ops) selected.push_back(ssd::parse_op(name));
    if (selected.empty())
      for (ssd::Op op : ssd::kAllOps)
        if (library.implements(op)) selected.push_back(op);
    cudaStream_t stream;
    cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    cudaEvent_t begin, end;
    cuda_check(cudaEventCreate(&begin), "event");
    cuda_check(cudaEventCreate(&end), "event");
    const bool side_by_side = !against.empty();
    std::printf("| op | workload | us per call | replays | min bytes | floor us | of floor |%s\n|---|---|---:|---:|---:|---:|---:|%s\n",
                side_by_side ? (" " + against_name + " us | ratio |").c_str() : "", side_by_side ? "---:|---:|" : "");
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
        cudaGraph_t graph;
        cuda_check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture");
        for (int i = 0; i < kCallsPerGraph; ++i) call.invoke(stream);
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
          if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds_per_workload &&
              r >= 4)
            break;
        }
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
        std::nth_element(ms.begin(), ms.begin() + static_cast<std::ptrdiff_t>(ms.size() / 2), ms.end());
        Row row;
        row.op = std::string(ssd::op_benchmark_name(op));
        row.workload = problem;
        row.us = 1e3 * ms[ms.size() / 2] / kCallsPerGraph;
        row.replays = ms.size();
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
    if (!json.empty()) {
      int device = 0, driver = 0, runtime = 0;
      cudaDeviceProp prop{};
      cuda_check(cudaGetDevice(&device), "device");
      cuda_check(cudaGetDeviceProperties(&prop, device), "device properties");
      cuda_check(cudaDriverGetVersion(&driver), "driver version");
      cuda_check(cudaRuntimeGetVersion(&runtime), "runtime version");
      std::ofstream out(json);
      if (!out) throw std::runtime_error("cannot write " + json);
      char buf[64];
      auto num = [&](double v) {
        std::snprintf(buf, sizeof buf, "%.4f", v);
        return std::string(buf);
      };
      out << "{\n  \"library\": " << json_string(library.table().name) << ",\n  \"device\": " << json_string(prop.name)
          << ",\n  \"cuda_driver\": " << driver << ",\n  \"cuda_runtime\": " << runtime
          << ",\n  \"method\": \"CUDA graph of " << kCallsPerGraph
          << " calls, median over replays / 20, no L2 flush\",\n  \"floor_bytes_per_second\": " << kCopyBytesPerSecond;
      if (side_by_side) out << ",\n  \"against\": " << json_string(against_name);
      out << ",\n  \"rows\": [";
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        out << (i ? ",\n" : "\n") << "    {\"op\": " << json_string(r.op) << ", \"workload\": " << json_string(r.workload)
            << ", \"us\": " << num(r.us) << ", \"replays\": " << r.replays << ", \"min_bytes\": " << r.min_bytes
            << ", \"floor_us\": " << num(r.floor_us) << ", \"of_floor\": " << num(r.floor_us / r.us);
        if (r.against_us > 0) out << ", \"against_us\": " << num(r.against_us) << ", \"ratio\": " << num(r.against_us / r.us);
        out << "}";
      }
      out << "\n  ]";
      if (side_by_side) {
        out << ",\n  \"geomean_ratio\": {";
        bool first = true;
        for (const std::string& op : op_names)
          if (geomean_ratio(rows, op) > 0) {
            out << (first ? "" : ", ") << json_string(op) << ": " << num(geomean_ratio(rows, op));
            first = false;
          }
        out << (first ? "" : ", ") << "\"all\": " << num(geomean_ratio(rows, "")) << "}";
      }
      out << "\n}\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ssd-bench: %s\n", e.what());
    return 2;
  }
}
