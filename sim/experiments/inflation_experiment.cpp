#include "sim/experiments/inflation_experiment.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

#include "sim/app/runner.hpp"
#include "sim/cluster/cluster_state.hpp"
#include "sim/cluster/placer.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/sampler.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {

std::vector<InflationRun> run_inflation_experiment(const Scenario& sc, const InflationExperiment& e) {
  const Options& opts = sc.scheduler.placement_options;
  for (const auto& name : e.placements)
    placers().create(name, PlacerParams{sc.seed, &opts});  // reads the knobs
  opts.check_all_used("placement policies " + join(e.placements, ", "));

  const std::vector<JobSpec> jobs = load_jobs(sc);
  const std::string trace_file = sc.workload.path.empty() ? sc.file : sc.workload.path;
  std::vector<Request> pool;
  {
    const ClusterState state(sc.cluster);
    pool.reserve(jobs.size());
    for (const auto& j : jobs) pool.push_back(make_request(j, state, trace_file));
  }
  if (pool.empty()) throw InputError(trace_file, 0, "workload", "the trace has no jobs");

  struct Task {
    std::string name;
    std::uint64_t seed;
  };
  std::vector<Task> tasks;
  for (const auto& name : e.placements)
    for (int i = 0; i < e.seeds; ++i) tasks.push_back({name, sc.seed + static_cast<std::uint64_t>(i)});
  std::vector<InflationRun> runs(tasks.size());
  std::vector<std::exception_ptr> errors(tasks.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < tasks.size(); i = next++) {
      try {
        const Options local = opts;  // Options records reads: one copy per run, no sharing
        auto placer = placers().create(tasks[i].name, PlacerParams{splitmix64(tasks[i].seed), &local});
        runs[i] = run_inflation(sc.cluster, pool, *placer, tasks[i].seed, e.options);
        runs[i].placement = tasks[i].name;
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = std::min<std::size_t>(tasks.size(), e.threads > 0 ? e.threads : hw);
  std::vector<std::thread> pool_threads;
  for (std::size_t t = 1; t < threads; ++t) pool_threads.emplace_back(worker);
  worker();
  for (auto& t : pool_threads) t.join();
  for (const auto& err : errors)
    if (err) std::rethrow_exception(err);
  return runs;
}

}  // namespace fleetsim
