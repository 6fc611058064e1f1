#pragma once
// JobModel: how long a job runs on a given placement. Pure function of its inputs (no SimGrid).
// Registered by name; the scenario's [execution] job_model selects one.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "workloads/base/options.hpp"
#include "workloads/base/registry.hpp"
#include "workloads/jobs/job.hpp"

namespace fleetsim {

/// What the model needs to know about where a job was placed.
struct PlacementSummary {
  std::string gpu_type;  ///< canonical catalog name of the GPUs it got
  int gpus = 1;
  int nodes = 1;         ///< distinct nodes spanned
  int leaves = 1;        ///< distinct leaf switches spanned
  int gpu_milli = 1000;  ///< share of each GPU
  /// GPUs on each node, in the order the placer used the nodes; empty when not known (an estimate
  /// before placement).
  std::vector<int> gpus_per_node;
};

/// One training iteration of a data-parallel job on a placement, for the network fidelity
/// (sim/network/network_hook.hpp): compute on the critical path and the all-reduce time that is
/// not hidden behind it, both on the idle fabric.
struct IterationShape {
  double compute_s = 0;
  double exposed_comm_s = 0;
};

/// What a job model is given: every [execution] key of the scenario (each model declares and reads
/// its own, workloads/base/keys.hpp), the [workload] keys (e.g. workload.throughputs) and the
/// cluster facts a model may need.
struct JobModelParams {
  Options settings;            ///< [execution] keys, paths resolved
  Options workload;            ///< [workload] keys, paths resolved
  std::string scenario_file;   ///< for messages
  double nic_gbps = 100;       ///< per-node NIC bandwidth, Gbit/s
  int nics_per_node = 1;       ///< NICs per node (rail-optimised: one per GPU)
  int gpus_per_nic = 1;        ///< GPUs sharing one NIC (first pool)
  double intra_node_gbps = 0;  ///< intra-node bandwidth per GPU, Gbit/s (0 = the GPU's catalog NVLink)
};

class JobModel {
 public:
  virtual ~JobModel() = default;
  /// Run time in seconds, or nullopt with `why` set when this model cannot time this job
  /// (the simulator then skips the job and reports why).
  virtual std::optional<double> run_time_s(const JobSpec& job, const PlacementSummary& where,
                                           std::string& why) const = 0;
  /// Can the model time this job at all (on some GPU type)? Used to skip jobs up front.
  virtual bool can_time(const JobSpec& job, std::string& why) const = 0;
  /// The job's iteration on this placement, if the model knows it; nullopt = the network
  /// fidelity's scenario defaults (execution.iteration_compute_s, grad_mb_default).
  virtual std::optional<IterationShape> iteration_shape(const JobSpec& /*job*/,
                                                        const PlacementSummary& /*where*/) const {
    return std::nullopt;
  }
  /// Elastic jobs: the most GPUs this job can use when a policy sizes it (e.g. its batch over the
  /// smallest per-GPU batch); nullopt = no limit from the model.
  virtual std::optional<int> max_gpus(const JobSpec& /*job*/) const { return std::nullopt; }
  /// Speed factor (0, 1] of `job` while it shares a GPU of type `gpu_type` with `other`, if the
  /// model has a measurement for the pair; nullopt = use the scenario's configured factor.
  virtual std::optional<double> colocated_speed(const JobSpec& /*job*/, const JobSpec& /*other*/,
                                                const std::string& /*gpu_type*/) const {
    return std::nullopt;
  }
};

using JobModelRegistry = Registry<JobModel, const JobModelParams&>;
JobModelRegistry& job_models();

/// execution.job_model = "auto": a model may register a rule; the rule of highest priority that
/// accepts the scenario and its jobs names the model ("trace" when none does).
using JobModelAutoRule = std::function<bool(const JobModelParams&, const std::vector<JobSpec>&)>;
std::string auto_job_model(const JobModelParams& params, const std::vector<JobSpec>& jobs);

struct JobModelRegistrar {
  JobModelRegistrar(std::string name, std::string description, JobModelRegistry::Factory f,
                    int auto_priority = 0, JobModelAutoRule auto_rule = nullptr);
};

}  // namespace fleetsim
