#pragma once
// The [[service]]s of a scenario on its training cluster. Before the run, every service is prepared
// (step model, KV cache, requests: bad input surfaces before anything runs) and its replicas' GPUs are
// held in the cluster run by ServiceReservations, which also hears of nodes leaving service. After
// the run, each service's requests are simulated on the placements its replicas held there (KV links,
// MPS co-tenants, failover outages: service_placement.hpp), and the requests each outage re-routed are
// reported back to whoever took the node (NodeTenant::requests_rerouted). A service with `reclaim`
// (gpu_reclaim.hpp) is run once alone first, for its replicas' power windows; a disaggregated one whose
// KV transfers go on the cluster's network (kv_fabric.hpp) once at the run's start, for its transfers.
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/engine_config.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/metrics/energy.hpp"
#include "sim/platform/cluster_spec.hpp"
#include "sim/serving/service.hpp"
#include "sim/serving/service_hook.hpp"

namespace fleetsim {

class KvFabric;

class ClusterServices {
 public:
  /// `specs` in scenario order (names unique). Throws InputError on bad input.
  /// `engine`: the [execution] settings (co-location slowdown; the restart cost of a training job a
  /// replica preempts, with `reclaim = "preempt"`).
  /// `network_fidelity`: training all-reduces run on SimGrid (execution.fidelity = network), and
  /// `failures`: nodes may leave service; they decide where `kv_transfers = "auto"` puts KV transfers.
  ClusterServices(std::vector<ServiceSpec> specs, const ClusterSpec& cluster, const EngineConfig& engine,
                  const PowerConfig& power, bool network_fidelity = false, bool failures = false);
  ~ClusterServices();
  ClusterServices(const ClusterServices&) = delete;
  ClusterServices& operator=(const ClusterServices&) = delete;

  /// What preparing found worth a warning (requests that can never fit a replica's KV cache), before run().
  std::vector<std::string> warnings() const;
  /// Holds the replicas' GPUs for the run (a cluster hook) and hears of nodes leaving (a tenant).
  void attach(Simulation& sim);
  /// After the run: simulates every service's requests.
  void run();

  /// requests.csv and serving_timeseries.csv, every service's rows in scenario order.
  void write_requests(std::ostream& out) const;
  void write_series(std::ostream& out) const;
  /// The summary's "services" block: per service, its figures (and, when nodes could leave service,
  /// replicas_hit and requests_rerouted).
  nlohmann::ordered_json summary() const;
  /// GPUs the replicas held in the cluster (a slice counted by its share).
  double gpus_held() const { return reservations_.gpus_held(); }

 private:
  std::vector<ServiceSpec> specs_;
  std::vector<PreparedService> prepared_;
  std::vector<Reclaim> reclaim_;  ///< per service (gpu_reclaim.hpp)
  std::vector<int> on_network_;   ///< per service: its index among the KvFabric's services (-1: link times)
  const ClusterSpec& cluster_;
  double colocation_slowdown_;
  PowerConfig power_;
  ServiceReservations reservations_;
  std::unique_ptr<KvFabric> kv_;  ///< KV transfers on the network; null: none
  struct Outcome {
    ServiceRun run;
    long replicas_hit = 0;
    long rerouted = 0;
  };
  std::vector<Outcome> outcomes_;  ///< per service, after run()
};

}  // namespace fleetsim
