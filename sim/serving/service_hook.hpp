#pragma once
// Services on the training cluster (issue 14): a ClusterHook that, before the first event, places
// every replica of every [[service]] with the scenario's placer (a whole GPU per TP rank on one node,
// or one MIG slice) and holds those GPUs for the whole run, so training jobs get what is left. A
// replica that does not fit is an input error naming the service's key. Replicas are not moved,
// scaled or released while the simulation runs, except by failover and reclaim (below): as a
// NodeTenant (hooks.hpp), a
// replica on a node that leaves service (a failure or drain) releases its GPUs and goes down; it is
// placed again on healthy GPUs as soon as they fit (at once on a spare or free GPUs, else when a node
// is repaired or a drain or a training job ends; replicas before jobs) and serves model_load_s later.
// The outages are handed to the serving engine (ReplicaOutage), which re-routes the requests.
// An MPS replica (`shared`) is reserved (and re-reserved on failover) as a co-location occupant
// (ClusterControl::reserve_shared): training jobs given a fraction of its GPU run slower beside it,
// and the hook records, per replica, how many training jobs share its GPU over time (from
// on_start/on_leave), which slows the replica in turn (sim/serving/service_placement).
// With `reclaim` (sim/serving/gpu_reclaim.hpp; replica_reclaim.cpp) a replica holds GPUs only while
// the autoscaler has it on (its PowerWindows, timed events of this hook): switched off, it releases
// them to training; switched on, it is placed again, preempting training jobs in its way (kPreempt)
// or waiting for free GPUs (kWait). The windows it was granted (granted()) are what the service then
// serves on.
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "sim/engine/hooks.hpp"
#include "sim/serving/serving_engine.hpp"

namespace fleetsim {

/// What a replica switched on does when its GPUs are taken (`[[service]] reclaim`).
enum class Reclaim {
  kHold,     ///< never releases its GPUs: held for the whole run, on or off
  kPreempt,  ///< released while off; switched on, it preempts the training jobs in its way
  kWait,     ///< released while off; switched on, it waits for free GPUs
};

struct ReplicaDemand {
  std::string service;
  std::string gpu;       ///< canonical catalog name
  int gpus = 1;          ///< whole GPUs (TP), or 1 with a MIG slice
  int gpu_milli = 1000;  ///< < 1000: a MIG slice's or an MPS share
  bool shared = false;   ///< an MPS share: interferes with jobs on the same GPU (a MIG slice does not)
  double load_s = 60;    ///< failover: time a re-placed replica takes to load before it serves
  std::string file;      ///< where the service is declared, for messages
  long line = 0;
  Reclaim reclaim = Reclaim::kHold;
  std::vector<PowerWindow> windows;  ///< not kHold: when the autoscaler has it on (time order)
};

/// What placing one replica asks of the cluster: its GPUs (or share) of GPU type `type`, on one node.
Request replica_request(const ReplicaDemand& d, int type);

/// A replica's reclaim figures from the cluster run.
struct ReclaimStats {
  long jobs_preempted = 0;  ///< training jobs it preempted to switch on
  double waited_s = 0;      ///< switched on, waiting for GPUs (summed over its windows)
};

/// From t_s on, `jobs` training jobs share the replica's GPU.
struct OccupancyChange {
  double t_s = 0;
  int jobs = 0;
};

/// One replica's placement from t_s on (slots empty: down, waiting to be placed again).
struct PlacementChange {
  double t_s = 0;
  std::vector<Slot> slots;
};

/// One replica's outage from the cluster run (demand index: replica in ServiceReservations order).
struct TenantOutage {
  int demand = 0;
  double down_s = 0;
  double up_s = 0;  ///< inf: still down at the end
  long event = -1;  ///< the taker's event (FailureHook: its failures.csv row)
};

class ServiceReservations final : public ClusterHook, public NodeTenant {
 public:
  explicit ServiceReservations(std::vector<ReplicaDemand> demands) : demands_(std::move(demands)) {}
  void attach(ClusterControl& control, std::size_t jobs) override;
  void on_start(JobId id, const PlacementSummary& where) override;
  void on_leave(JobId id) override;
  void on_finish(JobId id) override;
  int node_lost(int node, long event) override;
  void capacity_back() override;
  long requests_rerouted(long event) const override;
  /// After the run, once the services ran: `requests` were re-routed because of the taker's `event`.
  void add_rerouted(long event, long requests);
  /// Some cluster hook may take nodes out of service (known from attach()).
  bool nodes_can_leave() const { return nodes_can_leave_; }
  /// Per demand (replica), the training jobs on its GPU over time, in time order (empty: none ever;
  /// always empty unless `shared`).
  const std::vector<std::vector<OccupancyChange>>& occupancy() const { return occupancy_; }
  /// Failover outages, in the order they began.
  const std::vector<TenantOutage>& outages() const { return outages_; }
  /// Per demand (replica), the nodes it got, after attach().
  const std::vector<std::vector<int>>& nodes() const { return nodes_; }
  /// Per demand (replica), the GPU slots it holds (at the end of the run: where it ended).
  const std::vector<std::vector<Slot>>& slots() const { return slots_; }
  /// Per demand (replica), every placement it held, in time order: the first at attach(), then an
  /// empty one at each outage and the new GPUs when placed again (a replica that moved by failover
  /// serves at each placement's speed in turn, sim/serving/service_placement).
  const std::vector<std::vector<PlacementChange>>& placements() const { return placements_; }
  /// GPUs held at the start (whole GPUs, a slice counted by its share).
  double gpus_held() const { return held_; }
  /// Preempting training jobs: a job's restart pays fixed_s + s_per_gpu x its GPUs ([execution]).
  void set_preemption_cost(double fixed_s, double s_per_gpu) {
    restart_s_ = fixed_s;
    restart_s_per_gpu_ = s_per_gpu;
  }
  /// Per demand (replica) with reclaim, per window: when it got its GPUs (on_s; inf: never), served
  /// from (ready_s) and was switched off (off_s). Empty for kHold demands.
  const std::vector<std::vector<PowerWindow>>& granted() const { return granted_; }
  const std::vector<ReclaimStats>& reclaim_stats() const { return stats_; }

  double next_event_s() const override;
  void on_event() override;
  /// A replica is still to be switched off (or on, then off) by its power windows.
  bool frees_capacity_later() const override {
    return next_event_s() < std::numeric_limits<double>::infinity();
  }

 private:
  std::vector<ReplicaDemand> demands_;
  std::vector<std::vector<int>> nodes_;
  std::vector<std::vector<Slot>> slots_;
  std::vector<std::vector<PlacementChange>> placements_;
  std::vector<std::vector<OccupancyChange>> occupancy_;
  ClusterControl* control_ = nullptr;
  double held_ = 0;
  /// The job entered (+1) or left (-1) the GPUs of the shared replicas it touches.
  void occupy(JobId id, int delta);
  /// Records that `jobs` training jobs share demand k's GPU from now on.
  void record_occupancy(std::size_t k, int jobs);
  std::vector<Allocation> allocs_;  ///< per demand: what it holds now
  std::vector<int> open_;           ///< per demand: its outage in progress (-1: up)
  int waiting_ = 0;                 ///< replicas down, waiting for GPUs
  std::vector<TenantOutage> outages_;
  std::map<long, long> rerouted_;  ///< per taker's event: requests re-routed
  bool nodes_can_leave_ = false;
  /// Per shared demand: the training jobs counted beside its GPUs now (occupancy_'s count).
  std::vector<std::vector<JobId>> beside_;

  // Reclaim: per demand, its power, the next window boundary (2w: window w's on, 2w+1: its off).
  enum class Power : char { kOn, kOff, kWanting };
  std::vector<Power> power_;
  std::vector<std::size_t> boundary_;
  std::vector<std::vector<PowerWindow>> granted_;
  std::vector<ReclaimStats> stats_;
  double restart_s_ = 30;
  double restart_s_per_gpu_ = 0;
  double boundary_s(std::size_t d) const;
  /// Holds `alloc` for demand d from now on (placement record, co-location count).
  void hold(std::size_t d, const Allocation& alloc);
  void switch_on(std::size_t d);
  void switch_off(std::size_t d);
  /// Demand d, switched on and waiting, tries to get GPUs (preempting jobs when allowed).
  bool try_take(std::size_t d, bool preempt);
};

}  // namespace fleetsim
