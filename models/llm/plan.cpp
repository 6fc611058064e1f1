// Layout search: enumerate, predict, drop what does not fit, rank (plan.hpp).
#include "models/llm/plan.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "workloads/base/input_error.hpp"

namespace fleetsim::llm {
namespace {

std::vector<long> divisors(long n) {
  std::vector<long> out;
  for (long d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

bool tp_fits(const TransformerConfig& m, long tp) {
  return m.heads % tp == 0 && (m.kv_heads % tp == 0 || tp % m.kv_heads == 0);
}

}  // namespace

long plan_steps(const PlanGoal& goal, const TrainingSetup& base, const std::string& file) {
  if (goal.steps > 0) return goal.steps;
  if (!(goal.tokens > 0)) throw InputError(file, 0, "--tokens", "give a positive --tokens or --steps");
  const double per_step = static_cast<double>(base.global_batch) * static_cast<double>(base.seq);
  return static_cast<long>(std::ceil(goal.tokens / per_step));
}

std::vector<TrainingSetup> enumerate_layouts(const TransformerConfig& m, const TrainingSetup& base,
                                             const PlanSpace& space, int gpus_per_node) {
  std::vector<TrainingSetup> out;
  const long total = space.total_gpus;
  for (long n : divisors(total)) {
    if (space.all_gpus && n != total) continue;
    for (long tp : divisors(std::gcd(n, static_cast<long>(gpus_per_node)))) {
      if (!tp_fits(m, tp)) continue;
      for (long pp : divisors(n / tp)) {
        if (m.layers % pp != 0) continue;
        const long dp = n / (tp * pp);
        if (base.global_batch % dp != 0) continue;
        std::vector<long> eps{1};
        if (m.experts > 0) {
          eps.clear();
          for (long ep : divisors(dp))
            if (m.experts % ep == 0) eps.push_back(ep);
        }
        for (long ep : eps)
          for (long micro : divisors(base.global_batch / dp))
            for (Recompute rc : space.recomputes)
              for (int zero : space.zero_stages) {
                if (zero > 0 && dp == 1) continue;
                TrainingSetup s = base;
                s.tp = static_cast<int>(tp), s.pp = static_cast<int>(pp), s.dp = static_cast<int>(dp);
                s.ep = static_cast<int>(ep), s.micro_batch = micro, s.recompute = rc, s.zero = zero;
                s.sequence_parallel = base.sequence_parallel && tp > 1;
                s.schedule = PipelineSchedule::one_f_one_b, s.virtual_stages = 1;
                out.push_back(s);
                if (space.interleaved && pp > 1 && m.layers % (2 * pp) == 0) {
                  s.schedule = PipelineSchedule::interleaved, s.virtual_stages = 2;
                  out.push_back(s);
                }
              }
      }
    }
  }
  return out;
}

PlanResult plan_training(const TransformerConfig& m, const TrainingSetup& base, const PlanSpace& space,
                         const PlanGoal& goal, const LlmPlatform& p, const KernelModel& kernels,
                         const CollectiveModel& collectives) {
  if (space.total_gpus < 1) throw InputError(m.file, 0, "cluster.pool", "the cluster has no GPUs");
  if (base.seq < 1) throw InputError(m.file, 0, "--seq", "must be at least 1");
  if (base.global_batch < 1) throw InputError(m.file, 0, "--global-batch", "must be at least 1");
  PlanResult r;
  r.steps = plan_steps(goal, base, m.file);
  const std::vector<TrainingSetup> layouts = enumerate_layouts(m, base, space, p.gpus_per_node);
  if (layouts.empty())
    throw InputError(m.file, 0, "--global-batch",
                     "no layout of the model on " + std::to_string(space.total_gpus) +
                         " GPUs splits global batch " + std::to_string(base.global_batch));
  r.searched = static_cast<long>(layouts.size());
  double least_memory = 0;
  for (const TrainingSetup& s : layouts) {
    validate(m, s, m.file);
    const Prediction pr = predict_iteration(m, s, p, kernels, collectives);
    if (!pr.feasible) {
      ++r.infeasible;
      least_memory = least_memory == 0 ? pr.memory_bytes : std::min(least_memory, pr.memory_bytes);
      continue;
    }
    PlanRow row;
    row.setup = s;
    row.iteration_s = pr.total_s;
    row.train_s = static_cast<double>(r.steps) * pr.total_s;
    row.gpu_hours = row.train_s / 3600 * s.gpus();
    row.cost_usd = row.gpu_hours * goal.usd_per_gpu_hour;
    row.memory_bytes = pr.memory_bytes;
    row.tokens_per_s = pr.tokens_per_s;
    row.dominant = pr.dominant();
    r.ranked.push_back(std::move(row));
  }
  r.feasible = static_cast<long>(r.ranked.size());
  if (r.ranked.empty())
    throw InputError(m.file, 0, "--platform",
                     "none of the " + std::to_string(r.searched) + " layouts fits in the " +
                         std::to_string(static_cast<long>(p.gpu->memory_gib)) + " GiB of " + p.gpu->name +
                         " (the smallest needs " +
                         std::to_string(static_cast<long>(least_memory / (1024.0 * 1024 * 1024))) +
                         " GiB per GPU)");
  std::stable_sort(r.ranked.begin(), r.ranked.end(), [](const PlanRow& a, const PlanRow& b) {
    if (a.train_s != b.train_s) return a.train_s < b.train_s;
    if (a.gpu_hours != b.gpu_hours) return a.gpu_hours < b.gpu_hours;
    return a.setup.gpus() < b.setup.gpus();
  });
  r.best = predict_iteration(m, r.ranked.front().setup, p, kernels, collectives);
  return r;
}

}  // namespace fleetsim::llm
