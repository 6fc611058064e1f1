#pragma once
// Disaggregated services' KV transfers on the cluster's network (`[[service]] kv_transfers`).
//
// With execution.fidelity = "network", training all-reduces are SimGrid ptasks on the fabric; a
// prefill -> decode KV transfer is put there too, as one ptask of its own, so that the two share
// GPU links, NICs, leaf uplinks and spine links by SimGrid's solver: a training all-reduce crossing
// a link a transfer uses slows down, and the transfer takes what the links give it. The serving
// engine is not on SimGrid's clock, so a service on the network runs in three steps (as a
// reclaiming service does, gpu_reclaim.hpp):
// 1. first pass (at the cluster run's start, once its replicas are placed): the service alone, each KV
//    transfer timed as it would go alone on the idle platform (kv_platform_link: the route's latency and
//    bottleneck, where `link` charges each GPU its share of the NIC); each transfer that reached its
//    decode replica gives a flow: request, prefill and decode replica, bytes, when it left;
// 2. the cluster run: each flow starts at its time as a ptask from the prefill replica's GPUs to the
//    decode replica's (a TP replica's shards in parallel, GPU i to GPU i), beside the training ptasks,
//    and its end is recorded;
// 3. second pass: the service served with each request's transfer taking its measured time
//    (ServingEngineConfig::kv_measured) when it leaves the same prefill replica for the same decode
//    replica as in the first pass; to another decode replica, its time alone there x the slowdown its
//    flow met (measured / alone); requests whose flow never went on the network, their time alone.
// One fixed-point step: the decode start times the measured transfers move are not fed back into the
// cluster run (the flows keep their first-pass start times), nor is the second pass run again.
// Flows whose start comes after the last training job ended, or whose replica is down then, are not
// put on the network (they keep the link's time); training traffic then is none, and other transfers
// are not modelled against them.
#include <cstddef>
#include <string>
#include <vector>

#include <simgrid/forward.h>
#include <nlohmann/json.hpp>

#include "sim/engine/hooks.hpp"
#include "sim/platform/cluster_spec.hpp"
#include "sim/platform/ring.hpp"
#include "sim/serving/service.hpp"
#include "sim/serving/service_hook.hpp"

namespace fleetsim {

/// The service's `kv_transfers` key: "link" (latency + bytes / bandwidth of the placement's link),
/// "network" (on the cluster's network, beside training), "auto" (default: "network" when the run
/// has the network fidelity and no [failures], the service is disaggregated, kv_link_gbps is unset and
/// `reclaim` is hold; else "link"). Returns true for the network. "network" where it cannot be
/// (another fidelity, failures, no disaggregation, kv_link_gbps, reclaim, a one-server cluster)
/// throws InputError naming the key.
bool kv_on_network(const ServiceSpec& spec, bool network_fidelity, bool failures, Reclaim reclaim,
                   const ClusterSpec& cluster);

/// Starts one KV transfer as a SimGrid ptask (needs host/model:ptask_L07): `bytes` split evenly over
/// the GPU pairs src[i] -> dst[i]; nothing computed.
simgrid::s4u::ExecPtr start_kv_ptask(const std::vector<simgrid::s4u::Host*>& src,
                                     const std::vector<simgrid::s4u::Host*>& dst, double bytes);
/// The link such a transfer sees alone on the idle platform: the longest pair route's latency, and
/// pairs / (the most pairs per byte a link carries: pairs on it / bandwidth; a FATPIPE link 1 /
/// bandwidth) bytes per second. No link (one host): infinite bandwidth, no latency.
KvLink kv_platform_link(const std::vector<simgrid::s4u::Host*>& src,
                        const std::vector<simgrid::s4u::Host*>& dst, RouteCache& routes);

class KvFabric final : public ClusterHook, public ExecutionHook {
 public:
  /// One service whose transfers go on the network: its spec and prepared state (alive until the run
  /// ends), and its replicas' first demand in `reservations`.
  struct Service {
    const ServiceSpec* spec = nullptr;
    const PreparedService* prepared = nullptr;
    std::size_t first = 0;
  };
  KvFabric(std::vector<Service> services, const ServiceReservations& reservations, const ClusterSpec& cluster,
           double colocation_slowdown);

  // ExecutionHook: the flows in flight are its activities.
  bool needs_ptasks() const override { return true; }
  void attach(JobClock& clock, const Platform& platform, std::size_t jobs) override;
  const std::vector<simgrid::s4u::ExecPtr>* activities() const override { return &inflight_; }
  JobId activity_done(std::size_t k) override;

  // ClusterHook: the first pass at attach (replicas placed), then each flow's start is an event.
  void attach(ClusterControl& control, std::size_t jobs) override;
  double next_event_s() const override;
  void on_event() override;

  /// After the run: service s's measured transfers, per request (ServingEngineConfig::kv_measured).
  std::vector<ServingEngineConfig::KvMeasured> measured(std::size_t s) const;
  /// Service s's KV links alone on the idle platform (ServingEngineConfig::kv_links), after attach.
  const std::vector<KvLink>& links(std::size_t s) const { return links_[s]; }
  /// Service s's figures: flows of the first pass, those put on the network, their mean time alone
  /// on the idle platform and measured, and `used` (second-pass transfers that took a measured time).
  nlohmann::ordered_json summary(std::size_t s, long used) const;

 private:
  struct Flow {
    std::size_t service = 0;
    int request = 0;
    int from = 0;  ///< prefill replica
    int to = 0;    ///< decode replica
    double start_s = 0;
    double bytes = 0;
    double alone_s = -1;  ///< on the idle platform (-1: not put on the network)
    double end_s = -1;    ///< when it landed (-1: not on the network, or still in flight at the end)
  };
  /// GPU hosts of demand d now (empty: down).
  std::vector<simgrid::s4u::Host*> hosts_of(std::size_t d) const;
  void start(std::size_t f);

  std::vector<Service> services_;
  const ServiceReservations& reservations_;
  const ClusterSpec& cluster_;
  double colocation_slowdown_;
  JobClock* clock_ = nullptr;
  const Platform* platform_ = nullptr;
  RouteCache routes_;
  std::vector<Flow> flows_;                 ///< by start time
  std::vector<std::size_t> requests_;       ///< per service: its requests
  std::vector<std::vector<KvLink>> links_;  ///< per service: prefill-major, as kv_links
  std::size_t next_ = 0;                    ///< the next flow to start
  std::vector<simgrid::s4u::ExecPtr> inflight_;
  std::vector<std::size_t> inflight_flow_;
};

}  // namespace fleetsim
