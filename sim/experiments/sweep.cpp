#include "sim/experiments/sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "sim/experiments/process_pool.hpp"
#include "sim/experiments/sweep_plan.hpp"

namespace fleetsim {

std::size_t sweep_parallelism(const SweepPlan& plan, const SweepOptions& o) {
  const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
  return std::max<std::size_t>(1, std::min(plan.pending.size(), o.jobs > 0 ? o.jobs : hw));
}

void print_sweep_start(const SweepPlan& plan, std::size_t parallel, bool quiet) {
  if (quiet) return;
  std::fprintf(stderr,
               "fleetsim sweep: %zu runs (%zu combinations x %zu seeds): %zu to run, %zu done before; %zu "
               "at a time\n",
               plan.runs.size(), plan.combos.size(), plan.spec.seeds.size(), plan.pending.size(),
               plan.runs.size() - plan.pending.size(), parallel);
}

int run_pending_locally(const SweepPlan& plan, const SweepOptions& o) {
  const std::size_t parallel = sweep_parallelism(plan, o);
  std::vector<SweepJob> jobs;
  std::vector<ProcessTask> tasks;
  for (const std::size_t i : plan.pending) {
    jobs.push_back(sweep_job(plan, i, o.exe));
    tasks.push_back(job_task(jobs.back()));
  }
  std::size_t finished = 0;
  ProcessHooks hooks;
  hooks.before = [&](std::size_t k) { prepare_job(jobs[k]); };
  hooks.done = [&](std::size_t k, const ProcessResult& r) {
    const SweepJobOutcome outcome = record_job(jobs[k], r);
    ++finished;
    if (!o.quiet) print_job_progress(plan, plan.pending[k], finished, tasks.size(), outcome);
    return true;  // a failed run never stops the others
  };
  if (run_processes(tasks, parallel, hooks) == PoolEnd::kInterrupted) {
    return report_interrupted(finished, tasks.size());
  }
  return 0;
}

int run_sweep(const std::string& path, const SweepOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const SweepPlan plan = plan_sweep(path, o.out, o.force, o.yes);
  print_sweep_start(plan, sweep_parallelism(plan, o), o.quiet);
  if (const int rc = run_pending_locally(plan, o); rc != 0) return rc;
  return finish_sweep(plan, o.quiet, plan.pending.size(), t0);
}

}  // namespace fleetsim
