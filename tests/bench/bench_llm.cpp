// Speed of the LLM training model (issue 18), in process (models/llm is pure):
//   - one iteration prediction (GPT-3 175B, tp 8, pp 8, dp 16 on 1,024 H100s): target < 1 ms;
//   - `llm plan` over every layout of GPT-3 175B on 1,024 H100s (128 DGX H100 servers, 400 Gbit/s
//     NICs, one per GPU; global batch 1536, seq 2048): target >= 10,000 layouts in < 10 s.
// The model is tests/data/llm/gpt3-175b.json and the calibration the shipped neusight-fp32.json, both
// loaded outside the timed loop.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "models/calibration/calibration.hpp"
#include "models/llm/comm.hpp"
#include "models/llm/plan.hpp"

namespace {

using namespace fleetsim;
using namespace fleetsim::llm;

struct Fixture {
  TransformerConfig model =
      read_transformer_config(std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/llm/gpt3-175b.json");
  std::shared_ptr<Calibration> cal = std::make_shared<Calibration>(
      load_calibration(std::string(FLEETSIM_SOURCE_DIR) + "/models/calibrations/neusight-fp32.json"));
  std::unique_ptr<KernelModel> kernels = kernel_models().create("calibrated", cal->kernels);
  std::unique_ptr<CollectiveModel> comm;
  LlmPlatform platform;
  TrainingSetup base;

  Fixture() {
    CollectiveModelParams cp;
    cp.calibration = training_collectives(cal->collectives);
    comm = collective_models().create("calibrated", cp);
    platform.gpu = &gpu_spec("H100");
    platform.gpus_per_node = 8;
    platform.fabric = fabric_for(*platform.gpu, 400, 8, 1);
    platform.fabric.intra_gbs = 900;
    set_link(platform, *cp.calibration);
    platform.host.launch_s = llm::kDefaultLaunchUs * 1e-6;
    base.seq = 2048, base.global_batch = 1536, base.dtype = DType::bf16;
  }
};

void BM_llm_predict(benchmark::State& state) {
  const Fixture f;
  TrainingSetup s = f.base;
  s.tp = 8, s.pp = 8, s.dp = 16, s.micro_batch = 1, s.recompute = Recompute::selective;
  double total = 0;
  for (auto _ : state) total = predict_iteration(f.model, s, f.platform, *f.kernels, *f.comm).total_s;
  state.counters["iteration_s"] = total;
}

void BM_llm_plan(benchmark::State& state) {
  const Fixture f;
  PlanSpace space;
  space.total_gpus = 1024;
  PlanGoal goal;
  goal.tokens = 300e9;
  long searched = 0, feasible = 0;
  for (auto _ : state) {
    const PlanResult r = plan_training(f.model, f.base, space, goal, f.platform, *f.kernels, *f.comm);
    searched = r.searched, feasible = r.feasible;
  }
  state.counters["layouts"] = static_cast<double>(searched);
  state.counters["feasible"] = static_cast<double>(feasible);
  state.counters["layouts_per_s"] =
      benchmark::Counter(static_cast<double>(searched), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK(BM_llm_predict)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_llm_plan)->Unit(benchmark::kMillisecond)->Iterations(3);

BENCHMARK_MAIN();
