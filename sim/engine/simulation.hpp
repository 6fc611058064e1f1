#pragma once
// Simulation: the engine. Replays jobs on a cluster, strictly event-driven on SimGrid's clock.
//
// One SimGrid actor (the controller, on the first node's CPU host) sleeps until the next event
// (arrival, a job's phase end, a policy wake-up) and handles every event of that instant: phase
// ends first (freeing resources), then arrivals, then one scheduling decision. Policies act through
// the Launcher (policy.hpp); job run times come from the job model at start time, given the
// placement. Observers watch (observer.hpp); execution hooks (hooks.hpp) may change how running jobs
// progress, cluster hooks change the cluster under them, node tenants hold GPUs outside jobs. SimGrid's
// engine is one per process: construct at most one Simulation per process.
#include <memory>
#include <string>
#include <vector>

#include "models/job/job_model.hpp"
#include "sim/cluster/placer.hpp"
#include "sim/engine/engine_config.hpp"
#include "sim/engine/hooks.hpp"
#include "sim/engine/observer.hpp"
#include "sim/engine/policy.hpp"
#include "sim/platform/cluster_spec.hpp"
#include "workloads/jobs/job.hpp"
#include "workloads/jobs/trace_reader.hpp"

namespace fleetsim {

struct SimulationParts {
  ClusterSpec cluster;
  std::vector<JobSpec> jobs;  ///< sorted by submit time
  /// Instead of `jobs` (when set): the trace as a stream, read twice (validation, then the run) and
  /// held only from the oldest job not yet done (sim/engine/trace_jobs.hpp).
  std::unique_ptr<JobStream> stream;
  std::string trace_file;  ///< for messages about jobs
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<Placer> placer;
  std::unique_ptr<JobModel> job_model;
  EngineConfig engine;  ///< start and restart costs, co-location slowdown
  /// Keep every finished job's record, execution state and allocation until the end (also on when an
  /// attached cluster hook keeps_finished_jobs(): failures' per-job report). Off: a finished job's
  /// state is released and only the jobs in the system take memory; asking for a finished job is an
  /// error.
  bool keep_finished = true;
};

struct SimulationResult {
  long jobs = 0;
  long completed = 0;
  long skipped = 0;
  double end_time_s = 0;
  long events = 0;
};

class Simulation {
 public:
  explicit Simulation(SimulationParts parts);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  void add_observer(SimObserver& observer);
  /// Attach an execution hook (any number, called in attach order; each must outlive run()).
  void attach(ExecutionHook& hook);
  /// Attach a cluster hook (any number, called in attach order; each must outlive run()).
  void attach(ClusterHook& hook);
  /// Add a holder of GPUs outside jobs that must hear of nodes leaving service (must outlive run()).
  void add_tenant(NodeTenant& tenant);
  /// Build the SimGrid platform, run to completion, notify observers.
  SimulationResult run();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fleetsim
