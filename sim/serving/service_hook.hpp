#pragma once
// Services on the training cluster (issue 14): a ClusterHook that, before the first event, places
// every replica of every [[service]] with the scenario's placer (a whole GPU per TP rank on one node,
// or one MIG slice) and holds those GPUs for the whole run, so training jobs get what is left. A
// replica that does not fit is an input error naming the service's key. Static: replicas are not
// moved, scaled or released while the simulation runs. An MPS replica (`shared`) is reserved as a
// co-location occupant (ClusterControl::reserve_shared): training jobs given a fraction of its GPU
// run slower beside it, and the hook records, per replica, how many training jobs share its GPU over
// time (from on_start/on_leave), which slows the replica in turn (sim/app/service_placement).
#include <string>
#include <vector>

#include "sim/engine/hooks.hpp"

namespace fleetsim {

struct ReplicaDemand {
  std::string service;
  std::string gpu;       ///< canonical catalog name
  int gpus = 1;          ///< whole GPUs (TP), or 1 with a MIG slice
  int gpu_milli = 1000;  ///< < 1000: a MIG slice's or an MPS share
  bool shared = false;   ///< an MPS share: interferes with jobs on the same GPU (a MIG slice does not)
  std::string file;      ///< where the service is declared, for messages
  long line = 0;
};

/// From t_s on, `jobs` training jobs share the replica's GPU.
struct OccupancyChange {
  double t_s = 0;
  int jobs = 0;
};

class ServiceReservations final : public ClusterHook {
 public:
  explicit ServiceReservations(std::vector<ReplicaDemand> demands) : demands_(std::move(demands)) {}
  void attach(ClusterControl& control, std::size_t jobs) override;
  void on_start(JobId id, const PlacementSummary& where) override;
  void on_leave(JobId id) override;
  /// Per demand (replica), the training jobs on its GPU over time, in time order (empty: none ever;
  /// always empty unless `shared`).
  const std::vector<std::vector<OccupancyChange>>& occupancy() const { return occupancy_; }
  /// Per demand (replica), the nodes it got, after attach().
  const std::vector<std::vector<int>>& nodes() const { return nodes_; }
  /// Per demand (replica), the GPU slots it got, after attach().
  const std::vector<std::vector<Slot>>& slots() const { return slots_; }
  /// GPUs held (whole GPUs, a slice counted by its share).
  double gpus_held() const { return held_; }

 private:
  std::vector<ReplicaDemand> demands_;
  std::vector<std::vector<int>> nodes_;
  std::vector<std::vector<Slot>> slots_;
  std::vector<std::vector<OccupancyChange>> occupancy_;
  ClusterControl* control_ = nullptr;
  double held_ = 0;
  /// The job entered (+1) or left (-1) the GPUs of the shared replicas it touches.
  void occupy(JobId id, int delta);
};

}  // namespace fleetsim
