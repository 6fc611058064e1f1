// fleetsim llm plan --model CONFIG.json (--platform SCENARIO [--set K=V] | --gpu T --nodes N)
//     (--tokens N | --steps N) --seq S --global-batch B [--calibration CAL] [--top K] --out DIR
// Searches the parallel layouts of a model on a cluster (models/llm/plan.hpp), prints the best K
// ranked by time to train and the best one's breakdown, and writes plan.csv (every feasible layout,
// ranked) and plan.json (the best, with the counts searched / feasible / infeasible). Staged: a bad
// input or no feasible layout exits 2 with nothing written.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "models/llm/plan.hpp"
#include "sim/app/staging.hpp"
#include "sim/cli/llm_cli.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim::cli {

using namespace fleetsim::llm;

struct PlanArgs {
  CommonArgs common;
  SetupArgs setup;
  std::string model, out;
  double tokens = 0, usd_per_gpu_hour = 2.0;
  long steps = 0;
  int top = 10;
  bool all_gpus = false, interleaved = false;
};

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string layout_csv(const PlanRow& r) {
  const TrainingSetup& s = r.setup;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%d,%d,%d,%d,%d,%ld,%s,%d,%s,%.6f,%.4f,%.2f,%.2f,%.3f,%.0f,%s", s.gpus(),
                s.tp, s.pp, s.dp, s.ep, s.micro_batch, std::string(to_string(s.recompute)).c_str(), s.zero,
                std::string(to_string(s.schedule)).c_str(), r.iteration_s, r.train_s / 86400, r.gpu_hours,
                r.cost_usd, r.memory_bytes / kGiB, r.tokens_per_s, r.dominant.c_str());
  return buf;
}

void print_top(const PlanResult& r, int top) {
  std::printf("%4s %5s %3s %3s %5s %3s %5s %-9s %4s %9s %8s %11s %12s %7s\n", "rank", "gpus", "tp", "pp",
              "dp", "ep", "micro", "recompute", "zero", "iter s", "days", "GPU-hours", "cost USD", "mem GiB");
  const std::size_t n = std::min(r.ranked.size(), static_cast<std::size_t>(std::max(top, 0)));
  for (std::size_t i = 0; i < n; ++i) {
    const PlanRow& row = r.ranked[i];
    const TrainingSetup& s = row.setup;
    std::printf("%4zu %5d %3d %3d %5d %3d %5ld %-9s %4d %9.3f %8.2f %11.0f %12.0f %7.1f\n", i + 1, s.gpus(),
                s.tp, s.pp, s.dp, s.ep, s.micro_batch, std::string(to_string(s.recompute)).c_str(), s.zero,
                row.iteration_s, row.train_s / 86400, row.gpu_hours, row.cost_usd, row.memory_bytes / kGiB);
  }
}

}  // namespace

std::shared_ptr<PlanArgs> add_plan(CLI::App& sub) {
  auto a = std::make_shared<PlanArgs>();
  CLI::App* plan = sub.add_subcommand(
      "plan", "search TP x PP x DP x EP x micro batch x recomputation x ZeRO: plan.csv, plan.json");
  plan->add_option("--model", a->model, "Hugging Face config.json")->required();
  plan->add_option("--out", a->out, "output folder")->required();
  plan->add_option("--tokens", a->tokens, "training tokens (steps = tokens / (global batch x seq))");
  plan->add_option("--steps", a->steps, "training steps (instead of --tokens)");
  plan->add_option("--seq", a->setup.seq, "sequence length");
  plan->add_option("--global-batch", a->setup.global_batch, "sequences per iteration");
  plan->add_option("--dtype", a->setup.dtype, "fp32 | fp16 | bf16 (mixed precision)");
  plan->add_flag("--sequence-parallel", a->setup.sequence_parallel, "sequence parallelism where TP > 1");
  plan->add_flag("--no-overlap", a->setup.no_overlap, "DP gradient reduction after the backward pass");
  plan->add_option("--usd-per-gpu-hour", a->usd_per_gpu_hour, "price of one GPU-hour (default 2.00)");
  plan->add_option("--top", a->top, "layouts printed (default 10)");
  plan->add_flag("--all-gpus", a->all_gpus, "only layouts on every GPU of the cluster");
  plan->add_flag("--interleaved", a->interleaved, "also the interleaved schedule (2 virtual stages)");
  add_common(plan, a->common);
  return a;
}

int run_plan(const PlanArgs& a) {
  const TransformerConfig m = read_transformer_config(a.model);
  const TrainingSetup base = to_setup(a.setup);
  const Models models = make_models(a.common);
  PlanSpace space;
  space.total_gpus = models.total_gpus;
  space.all_gpus = a.all_gpus;
  space.interleaved = a.interleaved;
  PlanGoal goal;
  goal.tokens = a.tokens, goal.steps = a.steps, goal.usd_per_gpu_hour = a.usd_per_gpu_hour;
  if (a.steps < 0) throw InputError(a.model, 0, "--steps", "must be positive");
  const PlanResult r =
      plan_training(m, base, space, goal, models.platform, *models.kernels, *models.collectives);
  const PlanRow& best = r.ranked.front();
  std::printf("%s (%.2fB parameters) on up to %d x %s (%d per server): %ld steps of %ld x %ld tokens\n",
              a.model.c_str(), m.total_params() / 1e9, space.total_gpus, models.platform.gpu->name.c_str(),
              models.platform.gpus_per_node, r.steps, base.global_batch, base.seq);
  std::printf("layouts searched %ld, feasible %ld, infeasible (memory) %ld\n", r.searched, r.feasible,
              r.infeasible);
  print_top(r, a.top);
  std::printf(
      "best: %d GPUs, tp %d, pp %d, dp %d, ep %d, micro batch %ld, recompute %s, ZeRO %d: %.2f days\n",
      best.setup.gpus(), best.setup.tp, best.setup.pp, best.setup.dp, best.setup.ep, best.setup.micro_batch,
      std::string(to_string(best.setup.recompute)).c_str(), best.setup.zero, best.train_s / 86400);
  print_breakdown(r.best);

  Staging staging(a.out, "--out");
  {
    auto csv = staging.open("plan.csv");
    csv << "rank,gpus,tp,pp,dp,ep,micro_batch,recompute,zero,schedule,iteration_s,train_days,gpu_hours,"
           "cost_usd,memory_gib,tokens_per_s,dominant\n";
    for (std::size_t i = 0; i < r.ranked.size(); ++i) csv << i + 1 << "," << layout_csv(r.ranked[i]) << "\n";
  }
  nlohmann::json j;
  j["counts"] = {{"searched", r.searched}, {"feasible", r.feasible}, {"infeasible", r.infeasible}};
  j["cluster"] = {{"gpus", space.total_gpus},
                  {"gpu", models.platform.gpu->name},
                  {"gpus_per_node", models.platform.gpus_per_node},
                  {"platform", a.common.platform}};
  j["goal"] = {{"tokens", a.tokens},
               {"steps", r.steps},
               {"seq", base.seq},
               {"global_batch", base.global_batch},
               {"usd_per_gpu_hour", a.usd_per_gpu_hour}};
  j["best"] = to_json(r.best, m, best.setup, models.platform);
  j["best"]["gpus"] = best.setup.gpus();
  j["best"]["train_days"] = best.train_s / 86400;
  j["best"]["gpu_hours"] = best.gpu_hours;
  j["best"]["cost_usd"] = best.cost_usd;
  staging.open("plan.json") << j.dump(2) << "\n";
  staging.commit();
  return 0;
}

}  // namespace fleetsim::cli
