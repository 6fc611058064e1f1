// LLM layout search (models/llm/plan.hpp, `fleetsim llm plan`): the enumerated set on a hand-checkable
// cluster, infeasible layouts never ranked (over a whole search), the ranking sorted, the best layout
// equal to its direct prediction, the cost arithmetic, and bad input (exit 2, nothing written).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <tuple>

#include "models/llm/plan.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;
using namespace fleetsim::llm;
namespace fs = std::filesystem;

namespace {

LlmPlatform platform(const std::string& gpu, int gpus_per_node) {
  LlmPlatform p;
  p.gpu = &gpu_spec(gpu);
  p.gpus_per_node = gpus_per_node;
  p.fabric = fabric_for(*p.gpu, 200);
  return p;
}

struct Models {
  std::unique_ptr<KernelModel> kernels = kernel_models().create("roofline", KernelCalibration{});
  std::unique_ptr<CollectiveModel> comm = collective_models().create("nccl-default", CollectiveModelParams{});
};

using Key = std::tuple<int, int, int, int, long>;  // gpus, tp, pp, dp, micro
Key key(const TrainingSetup& s) {
  return {s.gpus(), s.tp, s.pp, s.dp, s.micro_batch};
}

}  // namespace

TEST_CASE("llm plan: 4 GPUs on one server enumerate exactly the hand-listed layouts") {
  const TransformerConfig m = gpt_config(2, 64, 4, 128, 16);  // 2 layers, 4 heads
  TrainingSetup base;
  base.seq = 16, base.global_batch = 4;
  PlanSpace space;
  space.total_gpus = 4;
  space.recomputes = {Recompute::none};
  space.zero_stages = {0};
  std::set<Key> got;
  for (const TrainingSetup& s : enumerate_layouts(m, base, space, 4)) CHECK(got.insert(key(s)).second);
  // n = 1: (1,1,1) x micro {1,2,4}; n = 2: tp 2 or pp 2 (micro 1,2,4), dp 2 (micro 1,2);
  // n = 4: tp 4; tp 2 pp 2; tp 2 dp 2; pp 2 dp 2; dp 4 (pp 4 > 2 layers is not searched).
  const std::set<Key> expected{
      {1, 1, 1, 1, 1}, {1, 1, 1, 1, 2}, {1, 1, 1, 1, 4}, {2, 2, 1, 1, 1}, {2, 2, 1, 1, 2}, {2, 2, 1, 1, 4},
      {2, 1, 2, 1, 1}, {2, 1, 2, 1, 2}, {2, 1, 2, 1, 4}, {2, 1, 1, 2, 1}, {2, 1, 1, 2, 2}, {4, 4, 1, 1, 1},
      {4, 4, 1, 1, 2}, {4, 4, 1, 1, 4}, {4, 2, 2, 1, 1}, {4, 2, 2, 1, 2}, {4, 2, 2, 1, 4}, {4, 2, 1, 2, 1},
      {4, 2, 1, 2, 2}, {4, 1, 2, 2, 1}, {4, 1, 2, 2, 2}, {4, 1, 1, 4, 1}};
  CHECK(got == expected);
  // The full space: 15 single-replica layouts x 3 recomputations, 7 with dp > 1 x 3 x 4 ZeRO stages.
  space.recomputes = PlanSpace{}.recomputes;
  space.zero_stages = PlanSpace{}.zero_stages;
  CHECK(enumerate_layouts(m, base, space, 4).size() == 15 * 3 + 7 * 3 * 4);
  space.all_gpus = true;
  for (const TrainingSetup& s : enumerate_layouts(m, base, space, 4)) CHECK(s.gpus() == 4);
  // Interleaved: only where pp > 1 and 2 pp divides the layers (none here: 2 layers, pp 2 -> 4).
  space.interleaved = true;
  for (const TrainingSetup& s : enumerate_layouts(m, base, space, 4))
    CHECK(s.schedule == PipelineSchedule::one_f_one_b);
}

TEST_CASE(
    "llm plan: infeasible layouts are never ranked, the ranking is sorted, the best is its prediction") {
  const TransformerConfig m = gpt_config(24, 2048, 16, 50304, 2048);  // 1.3B: tight on 16 GB
  TrainingSetup base;
  base.seq = 2048, base.global_batch = 32, base.dtype = DType::fp16;
  PlanSpace space;
  space.total_gpus = 16;
  PlanGoal goal;
  goal.tokens = 1e9, goal.usd_per_gpu_hour = 3;
  const LlmPlatform p = platform("V100", 8);
  const Models k;
  const PlanResult r = plan_training(m, base, space, goal, p, *k.kernels, *k.comm);
  const auto layouts = enumerate_layouts(m, base, space, p.gpus_per_node);
  CHECK(r.searched == static_cast<long>(layouts.size()));
  CHECK(r.searched == r.feasible + r.infeasible);
  CHECK(r.infeasible > 0);
  CHECK(r.feasible > 0);
  CHECK(r.ranked.size() == static_cast<std::size_t>(r.feasible));
  CHECK(r.steps == static_cast<long>(std::ceil(1e9 / (32.0 * 2048))));
  // Property over the whole search: a layout is ranked iff its own prediction fits.
  long fits = 0;
  for (const TrainingSetup& s : layouts) fits += predict_iteration(m, s, p, *k.kernels, *k.comm).feasible;
  CHECK(fits == r.feasible);
  const double capacity = p.gpu->memory_gib * 1024.0 * 1024.0 * 1024.0;
  for (const PlanRow& row : r.ranked) {
    CHECK(row.memory_bytes <= capacity);
    CHECK(predict_iteration(m, row.setup, p, *k.kernels, *k.comm).feasible);
  }
  for (std::size_t i = 1; i < r.ranked.size(); ++i) {
    const PlanRow &a = r.ranked[i - 1], &b = r.ranked[i];
    CHECK((a.train_s < b.train_s || (a.train_s == b.train_s && a.gpu_hours <= b.gpu_hours)));
  }
  const PlanRow& best = r.ranked.front();
  const Prediction direct = predict_iteration(m, best.setup, p, *k.kernels, *k.comm);
  CHECK(best.iteration_s == direct.total_s);
  CHECK(r.best.total_s == direct.total_s);
  CHECK(best.train_s == doctest::Approx(static_cast<double>(r.steps) * direct.total_s));
  CHECK(best.gpu_hours == doctest::Approx(best.train_s / 3600 * best.setup.gpus()));
  CHECK(best.cost_usd == doctest::Approx(3 * best.gpu_hours));
  // A step count instead of tokens.
  goal.steps = 10;
  CHECK(plan_steps(goal, base, "") == 10);
}

TEST_CASE("llm plan: a MoE model searches expert parallelism dividing dp and the experts") {
  TransformerConfig m = gpt_config(2, 64, 4, 128, 16);
  m.experts = 4, m.top_k = 2, m.moe_intermediate = 256;
  TrainingSetup base;
  base.seq = 16, base.global_batch = 8;
  PlanSpace space;
  space.total_gpus = 8;
  std::set<int> eps;
  for (const TrainingSetup& s : enumerate_layouts(m, base, space, 8)) {
    CHECK(s.dp % s.ep == 0);
    CHECK(m.experts % s.ep == 0);
    eps.insert(s.ep);
  }
  CHECK(eps == std::set<int>{1, 2, 4});
}

TEST_CASE("llm plan: bad input is an InputError") {
  const Models k;
  PlanSpace space;
  space.total_gpus = 8;
  PlanGoal goal;
  goal.steps = 100;
  TrainingSetup base;
  base.seq = 2048, base.global_batch = 8;
  // GPT-3 175B on one 8 x A100-40GB server: nothing fits.
  TransformerConfig big = gpt_config(96, 12288, 96, 50304, 2048);
  big.file = "gpt3.json";
  CHECK_THROWS_WITH_AS(
      plan_training(big, base, space, goal, platform("A100-SXM4-40GB", 8), *k.kernels, *k.comm),
      doctest::Contains("none of the"), InputError);
  // Neither tokens nor steps.
  const TransformerConfig small = gpt_config(2, 64, 4, 128, 16);
  CHECK_THROWS_AS(
      plan_training(small, base, space, PlanGoal{}, platform("A100-80GB", 8), *k.kernels, *k.comm),
      InputError);
  // Every GPU used, 3 heads (tp 1), 1 layer (pp 1): dp 8 cannot split a global batch of 2.
  TransformerConfig odd = gpt_config(1, 48, 3, 128, 16);
  base.global_batch = 2;
  space.all_gpus = true;
  CHECK_THROWS_WITH_AS(plan_training(odd, base, space, goal, platform("A100-80GB", 8), *k.kernels, *k.comm),
                       doctest::Contains("no layout"), InputError);
}

TEST_CASE("llm plan: the CLI writes plan.csv and plan.json, or exits 2 with nothing written") {
  const auto dir = test::temp_dir("llm-plan");
  test::write_file(dir / "config.json",
                   R"({"n_layer": 4, "n_embd": 256, "n_head": 8, "vocab_size": 1000, "n_positions": 128})");
  test::write_file(dir / "bad.json", "{\"n_layer\": 4,\n \"n_embd\": }");
  const std::string cfg = (dir / "config.json").string(), out = (dir / "out").string();
  const std::string args =
      " --seq 128 --global-batch 8 --steps 1000 --nodes 2 --gpus-per-node 4 --out " + out;
  auto r = test::run_fleetsim("llm plan --model " + cfg + " --gpu NoSuchGPU" + args);
  CHECK(r.code == 2);
  CHECK(r.output.find("--gpu") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out" / "plan.csv"));
  r = test::run_fleetsim("llm plan --model " + (dir / "bad.json").string() + args);
  CHECK(r.code == 2);
  CHECK(r.output.find("bad.json") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out" / "plan.csv"));
  r = test::run_fleetsim("llm plan --model " + cfg + args + " --top 3");
  CHECK(r.code == 0);
  CHECK(r.output.find("layouts searched") != std::string::npos);
  CHECK(fs::exists(dir / "out" / "plan.csv"));
  CHECK(fs::exists(dir / "out" / "plan.json"));
  CHECK(test::read_file(dir / "out" / "plan.json").find("\"searched\"") != std::string::npos);
  // A scenario's first pool (2 DGX H100 servers) and network.
  const std::string scenario = std::string(FLEETSIM_SOURCE_DIR) + "/scenarios/h100-superpod.toml";
  r = test::run_fleetsim(
      "llm plan --model " + cfg + " --platform " + scenario +
      " --set cluster.pool.0.nodes=2 --seq 128 --global-batch 8 --tokens 1e6 --all-gpus --out " + out);
  CHECK(r.code == 0);
  CHECK(r.output.find("16 x H100") != std::string::npos);
  const std::string csv = test::read_file(dir / "out" / "plan.csv");
  CHECK(csv.find("\n1,16,") != std::string::npos);
  fs::remove_all(dir);
}
