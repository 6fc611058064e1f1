// fleetsim diagnose speed (issue 39's target: 100 jobs x 8 ranks in < 30 s on 2 cores): generated
// traces, the whole command as the user runs it (parse, analyse, rules, every fix's replay in forked
// children, outputs), timed as a child process.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

namespace fs = std::filesystem;

// One rank of a data-parallel job: 3 steps, each a DataLoader op (jobs with `stall`), 30 forward/backward
// GEMMs of 120 us with an element-wise kernel of 12 us after each, and an all-reduce matched across ranks.
void write_rank(const fs::path& file, int rank, int world, bool stall) {
  std::FILE* f = std::fopen(file.c_str(), "wb");
  if (f == nullptr) std::abort();
  std::fprintf(
      f,
      "{\"distributedInfo\":{\"rank\":%d,\"world_size\":%d,\"backend\":\"nccl\"},\"deviceProperties\":"
      "[{\"id\":0,\"name\":\"NVIDIA A100-SXM4-80GB\"}],\"traceEvents\":[\n",
      rank, world);
  long corr = 1;
  double s = 0;
  bool first = true;
  auto ev = [&](const char* cat, const std::string& name, int tid, double ts, double dur, long c) {
    std::fprintf(
        f, "%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%.1f,\"dur\":%.1f",
        first ? "" : ",\n", cat, name.c_str(), tid == 7 ? 0 : 1, tid, ts, dur);
    if (c >= 0) std::fprintf(f, ",\"args\":{\"correlation\":%ld,\"device\":0,\"stream\":7}", c);
    std::fputs("}", f);
    first = false;
  };
  for (int step = 0; step < 3; ++step) {
    const double start = s;
    double host = s + (stall ? 800 : 10), gpu = host + 10;
    if (stall) ev("cpu_op", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 1, s, 790, -1);
    for (int k = 0; k < 30; ++k) {
      for (const auto& [name, dur] :
           {std::pair<std::string, double>{"ampere_h16816gemm_256x128_nn", 120 + rank},
            {"void at::native::vectorized_elementwise_kernel<4, add>", 12}}) {
        const long c = corr++;
        ev("cuda_runtime", "cudaLaunchKernel", 1, host, 5, c);
        gpu = std::max(gpu, host + 10);
        ev("kernel", name, 7, gpu, dur, c);
        gpu += dur;
        host += 7;
      }
    }
    const long c = corr++;
    ev("cuda_runtime", "cudaLaunchKernel", 1, host, 5, c);
    ev("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float", 7, gpu, 300, c);
    gpu += 300;
    ev("cuda_runtime", "cudaDeviceSynchronize", 1, host + 7, gpu + 2 - host - 7, -1);
    s = gpu + 50;
    ev("user_annotation", "ProfilerStep#" + std::to_string(step + 1), 1, start, s - start, -1);
  }
  std::fputs("]}\n", f);
  std::fclose(f);
}

fs::path fleet(int jobs, int ranks) {
  const fs::path dir = fs::temp_directory_path() /
                       ("fleetsim-bench-diagnose-" + std::to_string(jobs) + "x" + std::to_string(ranks));
  if (fs::exists(dir / "done")) return dir;
  fs::remove_all(dir);
  for (int j = 0; j < jobs; ++j) {
    const fs::path job = dir / ("job" + std::to_string(j));
    fs::create_directories(job);
    for (int r = 0; r < ranks; ++r)
      write_rank(job / ("rank" + std::to_string(r) + ".json"), r, ranks, j % 3 == 0);
  }
  std::fclose(std::fopen((dir / "done").c_str(), "wb"));
  return dir;
}

void BM_Diagnose(benchmark::State& state) {
  const int jobs = static_cast<int>(state.range(0)), ranks = static_cast<int>(state.range(1));
  const fs::path dir = fleet(jobs, ranks);
  const std::string out = (fs::temp_directory_path() / "fleetsim-bench-diagnose-out").string();
  const std::string cmd = std::string(FLEETSIM_BINARY) + " diagnose " + (dir / "job*").string() + " --out " +
                          out + " --quiet --parallel 2";
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    if (std::system(cmd.c_str()) != 0) state.SkipWithError("fleetsim diagnose failed");
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  fs::remove_all(out);
  state.counters["jobs"] = jobs;
  state.counters["ranks"] = ranks;
}
BENCHMARK(BM_Diagnose)->Args({100, 8})->UseManualTime()->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
