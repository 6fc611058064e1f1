#pragma once
// FailureConfig: the [failures] keys (declared in failure_config.cpp), validated. Failures are on
// when a rate, an MTBF, a domain rate, a fault trace or planned maintenance is given; otherwise
// nothing attaches and every output is as without this feature.
#include <optional>
#include <string>
#include <vector>

#include "workloads/base/options.hpp"

namespace fleetsim {

struct RepairConfig {
  std::string kind = "lognormal";  ///< lognormal | empirical
  double median_s = 3600;          ///< automatic stage: log-normal median
  double sigma = 1;                ///< and sigma
  std::vector<double> samples_s;   ///< empirical: repair times drawn uniformly
  double manual_probability = 0;   ///< a second, manual stage follows with this probability
  double manual_median_s = 86400;
  double manual_sigma = 1;
};

struct FailureConfig {
  // --- generated processes
  double node_rate_per_s = 0;                ///< per node, all components (before lemons)
  std::string interarrival = "exponential";  ///< exponential | weibull
  double weibull_shape = 1;
  std::vector<std::string> components;  ///< names
  std::vector<double> component_rates;  ///< per node per s, summing to node_rate_per_s
  double lemon_fraction = 0;
  double lemon_multiplier = 1;
  std::string domain = "none";   ///< none | leaf
  double domain_rate_per_s = 0;  ///< per domain
  RepairConfig repair;
  RepairConfig domain_repair;
  // --- or a recorded trace
  std::string trace;                          ///< path ("" = none)
  std::string trace_format;                   ///< registered fault-trace reader
  std::string trace_mapping = "round-robin";  ///< round-robin | random
  // --- what a failure costs a job
  double detection_s = 0;
  double restart_s = 0;
  double restore_s = 0;
  double restore_gb_per_s_per_node = 0;  ///< 0: no size-dependent restore
  std::string checkpoint = "none";       ///< none | fixed | auto
  double checkpoint_interval_s = 0;      ///< fixed: compute time between checkpoints
  double checkpoint_write_s = 0;         ///< fixed write time (used when no state size is given)
  double checkpoint_gb_per_gpu = 0;      ///< state written per GPU
  double storage_gb_per_s_per_node = 0;  ///< write / read bandwidth per node
  // --- hot spares and planned maintenance
  int spare_nodes = 0;                ///< nodes held out of service until a failure needs one
  double maintenance_interval_s = 0;  ///< a planned window opens every this long (0: none)
  int maintenance_nodes = 1;          ///< nodes drained per window, rolling through the cluster
  double maintenance_duration_s = 3600;
  std::uint64_t seed = 1;
  std::string file;  ///< the scenario, for messages

  bool generated() const { return node_rate_per_s > 0 || domain_rate_per_s > 0; }
  /// nullopt when failures and maintenance are off. `cluster_nodes` bounds spares and windows. Errors
  /// name the scenario file, line and key.
  static std::optional<FailureConfig> from(const Options& failures, std::uint64_t seed,
                                           std::size_t cluster_nodes);
};

/// Components a generated process may name (a trace may name any).
const std::vector<std::string>& known_components();

}  // namespace fleetsim
