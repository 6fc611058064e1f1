#pragma once
// Simulation: replays jobs on a cluster, strictly event-driven on SimGrid's clock.
//
// One SimGrid actor (the controller, on the first node's CPU host) sleeps until the next event
// (arrival or completion) and handles every event of that instant: completions first (freeing
// resources), then arrivals, then one scheduling decision. Job run times come from the job
// model at start time, given the placement. SimGrid's engine is one per process: construct at
// most one Simulation per process.
#include <memory>
#include <string>
#include <vector>

#include "models/job_model.hpp"
#include "sim/core/cluster_state.hpp"
#include "sim/core/network_fidelity.hpp"
#include "sim/metrics/observer.hpp"
#include "sim/platform/cluster_spec.hpp"
#include "sim/scheduling/placer.hpp"
#include "sim/scheduling/scheduler.hpp"
#include "workloads/job.hpp"

namespace fleetsim {

struct SimulationParts {
  ClusterSpec cluster;
  std::vector<JobSpec> jobs;  ///< sorted by submit time
  std::string trace_file;     ///< for messages about jobs
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<Placer> placer;
  std::unique_ptr<JobModel> job_model;
  double restart_overhead_s = 30;    ///< checkpoint-restore cost on restart, s
  double restart_s_per_gb = 0;       ///< plus s per GB of model state
  double state_gb_per_gpu = 0;       ///< model state per GPU, GB
  double colocation_slowdown = 1;    ///< speed factor per co-located job where the model has no pair rate
  bool network_fidelity = false;     ///< multi-GPU jobs share the fabric (network_fidelity.hpp)
  double grad_bytes = 1e9;           ///< network: bytes all-reduced per iteration
  double iteration_compute_s = 0.5;  ///< network: compute per iteration, s
  int chunks_shared = 16;            ///< network: chunks per job while it shares links
};

struct SimulationResult {
  long jobs = 0;
  long completed = 0;
  long skipped = 0;
  double end_time_s = 0;
  long events = 0;
  std::shared_ptr<const NetworkReport> network;  ///< network fidelity only: link utilization
};

class Simulation {
 public:
  explicit Simulation(SimulationParts parts);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  void add_observer(SimObserver& observer);
  /// Build the SimGrid platform, run to completion, notify observers.
  SimulationResult run();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

/// Translate a job's trace request into a placement request for this cluster (canonical GPU
/// type names; an unknown type name is an InputError naming the job's line).
Request make_request(const JobSpec& job, const ClusterState& state, const std::string& trace_file);

}  // namespace fleetsim
