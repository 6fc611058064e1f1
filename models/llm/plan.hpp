#pragma once
// Layout search for training a transformer on a cluster (issue 18 item 4, `fleetsim llm plan`): every
// parallel layout of the model on up to G = nodes x gpus_per_node GPUs of one type is predicted
// (predict_iteration), the ones that do not fit in memory are counted and dropped, and the rest are
// ranked by time to train. Pure: no SimGrid.
//
// Search space (n = GPUs used, h = heads, k = kv heads, L = layers, B = global batch):
//   n        every divisor of G (fewer GPUs than the cluster may cost fewer GPU-hours); only G when
//            PlanSpace::all_gpus
//   TP       divisors of gcd(n, gpus_per_node) that divide h and divide or are divided by k (TP stays
//            inside a server)
//   PP       divisors of n / TP that divide L (Megatron's even layer split)
//   DP       n / (TP PP), dividing B
//   EP       1 for dense models; for MoE every divisor of DP that divides the experts
//   micro    every divisor of B / DP
//   recompute PlanSpace::recomputes (default none, selective, full)
//   ZeRO     PlanSpace::zero_stages (default 0-3); stages above 0 only when DP > 1 (with one replica
//            they equal stage 0)
//   schedule 1F1B; with PlanSpace::interleaved also interleaved with 2 virtual stages where PP > 1
//            and 2 PP divides L
// dtype, sequence parallelism (applied to TP > 1 layouts) and gradient overlap come from the base
// setup.
// Time to train = steps x iteration, steps = ceil(tokens / (B x seq)) or given; GPU-hours = time x n;
// cost = GPU-hours x price. Ranked by time to train, then GPU-hours, then fewer GPUs, then the
// enumeration order (deterministic).
#include <string>
#include <vector>

#include "models/llm/iteration.hpp"

namespace fleetsim::llm {

struct PlanSpace {
  int total_gpus = 8;  ///< G: nodes x gpus_per_node (gpus_per_node is the platform's)
  bool all_gpus = false;
  std::vector<Recompute> recomputes{Recompute::none, Recompute::selective, Recompute::full};
  std::vector<int> zero_stages{0, 1, 2, 3};
  bool interleaved = false;
};

struct PlanGoal {
  double tokens = 0;  ///< training tokens (used when steps == 0)
  long steps = 0;
  double usd_per_gpu_hour = 0;
};

struct PlanRow {
  TrainingSetup setup;
  double iteration_s = 0;
  double train_s = 0;
  double gpu_hours = 0;
  double cost_usd = 0;
  double memory_bytes = 0;  ///< largest stage, per GPU
  double tokens_per_s = 0;
  std::string dominant;
};

struct PlanResult {
  long steps = 0;
  long searched = 0, feasible = 0, infeasible = 0;
  std::vector<PlanRow> ranked;  ///< feasible layouts, best first
  Prediction best;              ///< the best layout's prediction (breakdown)
};

/// Steps to train: `goal.steps`, else ceil(tokens / (global batch x seq)); InputError(file, 0, key)
/// when neither is positive.
long plan_steps(const PlanGoal& goal, const TrainingSetup& base, const std::string& file);

/// Every layout of the search space (see above), `base` giving seq, global batch, dtype, sequence
/// parallelism and overlap.
std::vector<TrainingSetup> enumerate_layouts(const TransformerConfig& m, const TrainingSetup& base,
                                             const PlanSpace& space, int gpus_per_node);

/// Predicts and ranks every layout. InputError(file, 0, key) on a bad request (no GPUs, no step count,
/// a batch no layout can split) and when no layout fits in memory.
PlanResult plan_training(const TransformerConfig& m, const TrainingSetup& base, const PlanSpace& space,
                         const PlanGoal& goal, const LlmPlatform& p, const KernelModel& kernels,
                         const CollectiveModel& collectives);

}  // namespace fleetsim::llm
