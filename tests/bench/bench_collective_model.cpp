// Speed of the collective models: one predict() call (target < 1 us) and fitting every shared
// nccl-tests table (14 files, 14,336 rows), including reading them.
//
//   build/tests/bench/bench_collective_model
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "models/collective/collective_model.hpp"

using namespace fleetsim;

namespace {

std::vector<std::string> shared_tables() {
  std::vector<std::string> out;
  for (const char* sys : {"a100", "v100"})
    for (int n = 2; n <= 8; ++n)
      out.push_back(std::string(FLEETSIM_SHARED_DATA) + "/collectives/nccl-allreduce-" + sys + "/AR_GPU" +
                    std::to_string(n) + "_1M_1024M_LUT");
  return out;
}

std::vector<CollectiveSample> read_all() {
  std::vector<CollectiveSample> rows;
  for (const auto& p : shared_tables()) {
    auto r = read_nccl_tests(p);
    rows.insert(rows.end(), r.begin(), r.end());
  }
  return rows;
}

void predict_loop(benchmark::State& state, const CollectiveModel& model, const CommFabric& fabric) {
  const double sizes[] = {4096, 1 << 20, 24e6, 3e8};
  const int ranks[] = {2, 3, 5, 8};
  std::size_t i = 0;
  for (auto _ : state) {
    CollectiveDesc d{Collective::all_reduce, sizes[i % 4], ranks[(i / 4) % 4], 1};
    benchmark::DoNotOptimize(model.predict(d, fabric));
    ++i;
  }
}

void BM_PredictNcclDefault(benchmark::State& state) {
  auto model = collective_models().create("nccl-default", CollectiveModelParams{});
  CommFabric f;
  f.system = "A100";
  predict_loop(state, *model, f);
}
BENCHMARK(BM_PredictNcclDefault);

void BM_PredictCalibrated(benchmark::State& state) {
  CollectiveModelParams params;
  params.calibration = std::make_shared<const CollectiveCalibration>(fit_collectives(read_all()));
  auto model = collective_models().create("calibrated", params);
  CommFabric f;
  f.system = "A100";
  predict_loop(state, *model, f);
}
BENCHMARK(BM_PredictCalibrated);

void BM_PredictCalibratedMultiNode(benchmark::State& state) {
  CollectiveModelParams params;
  params.calibration = std::make_shared<const CollectiveCalibration>(fit_collectives(read_all()));
  auto model = collective_models().create("calibrated", params);
  CommFabric f;
  f.system = "A100-80GB";
  f.nics_per_node = 8;
  std::size_t i = 0;
  for (auto _ : state) {
    CollectiveDesc d{Collective::all_reduce, 1e6 * static_cast<double>(1 + i % 512), 64, 8};
    benchmark::DoNotOptimize(model->predict(d, f));
    ++i;
  }
}
BENCHMARK(BM_PredictCalibratedMultiNode);

void BM_ReadSharedTables(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(read_all());
}
BENCHMARK(BM_ReadSharedTables)->Unit(benchmark::kMillisecond);

void BM_FitSharedTables(benchmark::State& state) {
  const auto rows = read_all();
  for (auto _ : state) benchmark::DoNotOptimize(fit_collectives(rows));
  state.counters["rows"] = static_cast<double>(rows.size());
}
BENCHMARK(BM_FitSharedTables)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
