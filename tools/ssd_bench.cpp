// ssd-bench: device time of a kernel library on every workload of spec/workloads.md, measured as
// the workloads document says: a CUDA graph of 20 back-to-back calls, replayed, median replay
// time / 20 (no L2 flush; host launch overhead excluded). Prints one row per workload with the
// traffic floor (every input read once and every output written once, at 4.25 TB/s).
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "ssd/harness/runner.h"

namespace {

constexpr double kCopyBytesPerSecond = 4.25e12;  // the H200's device-to-device copy rate
constexpr int kCallsPerGraph = 20;

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Times a kernel library on the benchmark workloads (CUDA graphs of 20 calls)."};
  std::string kernels;
  std::vector<std::string> ops;
  int replays = 100;
  double seconds_per_workload = 3;
  app.add_option("--kernels", kernels, "path to a CUDA kernel library (.so)")->required();
  app.add_option("--ops", ops, "ops to time (default: all the library implements)");
  app.add_option("--replays", replays, "graph replays per workload (default 100)")->check(CLI::PositiveNumber);
  app.add_option("--max-seconds", seconds_per_workload,
                 "cap on replay time per workload; slow workloads get fewer replays (default 3)");
  CLI11_PARSE(app, argc, argv);
  try {
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
    std::printf("| op | workload | us per call | replays | min bytes | floor us | of floor |\n|---|---|---:|---:|---:|---:|---:|\n");
    for (ssd::Op op : selected) {
      for (const ssd::Problem& p : ssd::op_spec(op).workloads()) {
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
        const double us = 1e3 * ms[ms.size() / 2] / kCallsPerGraph;
        const double floor_us = 1e6 * static_cast<double>(call.min_bytes()) / kCopyBytesPerSecond;
        std::printf("| %s | `%s` | %.2f | %zu | %zu | %.2f | %.0f%% |\n", std::string(ssd::op_benchmark_name(op)).c_str(),
                    ssd::to_string(p).c_str(), us, ms.size(), call.min_bytes(), floor_us, 100.0 * floor_us / us);
        std::fflush(stdout);
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ssd-bench: %s\n", e.what());
    return 2;
  }
}
