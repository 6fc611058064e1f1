// Kineto replay speed: parsing a generated ~100 MB trace, building its execution graph, and the
// whole `fleetsim replay` of the largest shared trace (parse, build, simulate, write) as a process.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "sim/replay/exec_graph.hpp"
#include "workloads/profiler/kineto_trace.hpp"

namespace {

namespace fs = std::filesystem;

// A synthetic trace of about `mb` megabytes: per launch one cpu_op, one cudaLaunchKernel, one kernel.
const std::string& big_trace(int mb) {
  static std::string path;
  if (!path.empty()) return path;
  path = (fs::temp_directory_path() / ("fleetsim-bench-kineto-" + std::to_string(mb) + "mb.json")).string();
  if (fs::exists(path) && fs::file_size(path) > static_cast<std::uintmax_t>(mb) * 1000000) return path;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  std::fputs(
      "{\"schemaVersion\":1,\"distributedInfo\":{\"rank\":0,\"world_size\":1},\"deviceProperties\":[{\"id\":"
      "0,"
      "\"name\":\"NVIDIA A100-SXM4-80GB\"}],\"traceEvents\":[\n",
      f);
  long i = 0;
  double ts = 1000;
  while (std::ftell(f) < static_cast<long>(mb) * 1000000) {
    std::fprintf(
        f,
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":1,\"tid\":1,\"ts\":%.3f,\"dur\":20."
        "5,"
        "\"args\":{\"External id\":%ld,\"Input Dims\":[[1024,1024],[1024,1024]],\"Input type\":[\"float\","
        "\"float\"]}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":%."
        "3f,"
        "\"dur\":5.25,\"args\":{\"External id\":%ld,\"cbid\":211,\"correlation\":%ld}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"void at::native::vectorized_elementwise_kernel<4, "
        "at::native::CUDAFunctor_add<float> >(int, at::native::CUDAFunctor_add<float>)\",\"pid\":0,\"tid\":7,"
        "\"ts\":%.3f,\"dur\":12.0,\"args\":{\"External id\":%ld,\"queued\":0,\"device\":0,\"context\":1,"
        "\"stream\":7,\"correlation\":%ld,\"registers per thread\":16,\"shared "
        "memory\":0,\"grid\":[4096,1,1],"
        "\"block\":[128,1,1]}},\n",
        ts, i, ts + 2, i, i, ts + 10, i, i);
    ts += 25;
    ++i;
  }
  std::fputs(
      "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaDeviceSynchronize\",\"pid\":1,\"tid\":1,\"ts\":",
      f);
  std::fprintf(f, "%.3f,\"dur\":20}]}\n", ts + 100);
  std::fclose(f);
  return path;
}

void BM_ParseKineto100MB(benchmark::State& state) {
  const std::string& path = big_trace(100);
  for (auto _ : state) {
    auto t = fleetsim::read_kineto_trace(path);
    benchmark::DoNotOptimize(t.events.data());
  }
  state.counters["MB"] = static_cast<double>(fs::file_size(path)) / 1e6;
}
BENCHMARK(BM_ParseKineto100MB)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_BuildGraph100MB(benchmark::State& state) {
  const auto t = fleetsim::read_kineto_trace(big_trace(100));
  for (auto _ : state) {
    auto g = fleetsim::replay::build_exec_graph({&t});
    benchmark::DoNotOptimize(g.steps.data());
  }
  state.counters["events"] = static_cast<double>(t.events.size());
}
BENCHMARK(BM_BuildGraph100MB)->Unit(benchmark::kMillisecond)->Iterations(2);

// The whole command on the largest shared trace, as the user runs it (one process per run).
void BM_ReplayLargestSharedTrace(benchmark::State& state) {
  const std::string trace =
      std::string(FLEETSIM_SHARED_DATA) + "/kineto/hta/negative_queue_length_values_check_rank0.json.gz";
  if (!fs::exists(trace)) {
    state.SkipWithError("shared data not available");
    return;
  }
  const std::string out = (fs::temp_directory_path() / "fleetsim-bench-replay").string();
  const std::string cmd = std::string(FLEETSIM_BINARY) + " replay " + trace + " --out " + out + " --quiet";
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    if (std::system(cmd.c_str()) != 0) state.SkipWithError("fleetsim replay failed");
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  fs::remove_all(out);
}
BENCHMARK(BM_ReplayLargestSharedTrace)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
