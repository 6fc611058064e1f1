// Speed of the kernel models: one predict() call (calibrated, table, roofline; interpolated and
// extrapolated devices) and fitting all NeuSight training files (../shared/data/microbench/neusight).
// Skips (with a message) when the shared data is missing.
//
//   build/tests/bench/bench_kernel_model
//   build/tests/bench/bench_kernel_model --benchmark_filter=Predict
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "models/kernel/kernel_model.hpp"

namespace fs = std::filesystem;
using namespace fleetsim;

namespace {

const std::string kTrain = std::string(FLEETSIM_SHARED_DATA) + "/microbench/neusight/train";

std::vector<KernelSample> training_samples() {
  std::vector<KernelSample> all;
  if (!fs::exists(kTrain)) return all;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kTrain))
    if (e.path().extension() == ".csv") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    auto s = read_kernel_csv(f.string());
    all.insert(all.end(), s.begin(), s.end());
  }
  return all;
}

const std::vector<KernelSample>& samples() {
  static const std::vector<KernelSample> s = training_samples();
  return s;
}

const KernelCalibration& calibration() {
  static const KernelCalibration c = fit_kernels(samples());
  return c;
}

/// 1024 random GEMM shapes (half linear, half bmm) to cycle through.
std::vector<KernelDesc> shapes() {
  std::mt19937 rng(1);
  std::uniform_int_distribution<long> dim(16, 8192), batch(1, 256);
  std::vector<KernelDesc> out;
  for (int i = 0; i < 1024; ++i) {
    const bool lin = i % 2 == 0;
    out.push_back(
        {lin ? "linear" : "bmm", DType::fp32, lin ? 1 : batch(rng), dim(rng), dim(rng), dim(rng), 0});
  }
  return out;
}

void predict(benchmark::State& state, const char* model_name, const char* gpu_name) {
  if (samples().empty()) {
    state.SkipWithError("shared data missing (../shared/data/microbench/neusight/train)");
    return;
  }
  const auto model = kernel_models().create(model_name, calibration());
  const GpuSpec& gpu = *find_gpu(gpu_name);
  const auto ks = shapes();
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(model->predict(ks[i++ & 1023], gpu));
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_FitAllTrainingFiles(benchmark::State& state) {
  if (samples().empty()) {
    state.SkipWithError("shared data missing (../shared/data/microbench/neusight/train)");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(fit_kernels(samples()));
  state.counters["rows"] = static_cast<double>(samples().size());
}

void BM_ReadAndFitAllTrainingFiles(benchmark::State& state) {
  if (!fs::exists(kTrain)) {
    state.SkipWithError("shared data missing (../shared/data/microbench/neusight/train)");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(fit_kernels(training_samples()));
}

}  // namespace

BENCHMARK_CAPTURE(predict, CalibratedInterpolated, "calibrated", "V100-PCIE-32GB");
BENCHMARK_CAPTURE(predict, CalibratedExtrapolated, "calibrated", "L4");
BENCHMARK_CAPTURE(predict, TableInterpolated, "table", "V100-PCIE-32GB");
BENCHMARK_CAPTURE(predict, Roofline, "roofline", "V100-PCIE-32GB");
BENCHMARK(BM_FitAllTrainingFiles)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadAndFitAllTrainingFiles)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK_MAIN();
