// ServiceReservations, reclaim (`[[service]] reclaim`, sim/serving/gpu_reclaim.hpp): a replica holds
// GPUs only inside its power windows. At a window's end it releases them (training jobs queued take
// them as the scheduler next runs); at a window's start it is placed again with the scenario's placer.
// When nothing fits: kPreempt interrupts the training jobs of the node where the fewest GPUs of jobs
// must stop (their progress is checkpointed then, they pay the [execution] restart cost when they
// start again, and go back to the scheduler's queue); kWait waits, retried whenever a job ends or
// capacity comes back, before queued jobs are started. A replica still waiting at its window's end
// never got GPUs for that window.
#include <algorithm>
#include <limits>

#include "sim/serving/service_hook.hpp"

namespace fleetsim {
namespace {

/// The training jobs to stop so that `r` fits on one node: on each node of an allowed type in service,
/// its jobs by most GPUs there first (later jobs first on ties) until enough GPUs are free; the node
/// whose victims hold the fewest GPUs in all wins (then the fewest victims, then the lowest node).
/// Empty when no node can be freed.
std::vector<JobId> victims(const ClusterControl& control, const Request& r) {
  const ClusterState& cluster = control.cluster();
  std::vector<JobId> best;
  double best_cost = std::numeric_limits<double>::infinity();
  for (int n = 0; n < cluster.node_count(); ++n) {
    if (cluster.is_down(n) || cluster.node_type(n) < 0 ||
        (r.types & (TypeMask{1} << cluster.node_type(n))) == 0)
      continue;
    const int need = r.gpus - cluster.free_whole(n);
    if (need <= 0 || r.gpus > cluster.node_gpus(n)) continue;
    struct Holder {
      JobId id;
      int here;  // distinct GPUs of node n it touches
    };
    std::vector<Holder> holders;
    for (JobId j : control.jobs_on_node(n)) {
      std::vector<int> gpus;
      for (const Slot& s : control.allocation(j).slots)
        if (s.node == n && s.gpu >= 0 && std::find(gpus.begin(), gpus.end(), s.gpu) == gpus.end())
          gpus.push_back(s.gpu);
      if (!gpus.empty()) holders.push_back({j, static_cast<int>(gpus.size())});
    }
    std::stable_sort(holders.begin(), holders.end(), [](const Holder& a, const Holder& b) {
      return a.here != b.here ? a.here > b.here : a.id > b.id;
    });
    std::vector<JobId> chosen;
    int freed = 0;
    double cost = 0;
    for (const Holder& h : holders) {
      if (freed >= need) break;
      chosen.push_back(h.id);
      freed += h.here;
      cost += static_cast<double>(control.allocation(h.id).slots.size());
    }
    if (freed < need) continue;
    if (cost < best_cost || (cost == best_cost && chosen.size() < best.size())) {
      best_cost = cost;
      best = std::move(chosen);
    }
  }
  return best;
}

}  // namespace

double ServiceReservations::boundary_s(std::size_t d) const {
  const auto& w = demands_[d].windows;
  const std::size_t b = boundary_[d];
  if (demands_[d].reclaim == Reclaim::kHold || b >= 2 * w.size())
    return std::numeric_limits<double>::infinity();
  return b % 2 == 0 ? w[b / 2].on_s : w[b / 2].off_s;
}

double ServiceReservations::next_event_s() const {
  double t = std::numeric_limits<double>::infinity();
  for (std::size_t d = 0; d < demands_.size(); ++d) t = std::min(t, boundary_s(d));
  return t;
}

void ServiceReservations::on_event() {
  const double now = control_->now();
  // Replicas switched off first, so that one switched on at the same instant may take their GPUs.
  for (bool again = true; again;) {
    again = false;
    for (std::size_t d = 0; d < demands_.size(); ++d)
      if (boundary_[d] % 2 == 1 && boundary_s(d) <= now) {
        switch_off(d);
        again = true;
      }
    for (std::size_t d = 0; d < demands_.size(); ++d)
      if (boundary_[d] % 2 == 0 && boundary_s(d) <= now) {
        switch_on(d);
        again = true;
      }
  }
  if (waiting_ > 0) capacity_back();
}

void ServiceReservations::switch_off(std::size_t d) {
  ++boundary_[d];
  const double now = control_->now();
  if (power_[d] == Power::kWanting) {
    --waiting_;
  } else if (power_[d] == Power::kOn && open_[d] >= 0) {
    // Down by failover, waiting to be placed again: it stops waiting.
    outages_[static_cast<std::size_t>(open_[d])].up_s = now;
    open_[d] = -1;
    --waiting_;
  } else if (power_[d] == Power::kOn) {
    control_->release(allocs_[d]);
    allocs_[d] = {};
    nodes_[d].clear();
    slots_[d].clear();
    placements_[d].push_back({now, {}});
    if (demands_[d].shared) {
      beside_[d].clear();
      record_occupancy(d, 0);
    }
  }
  power_[d] = Power::kOff;
}

void ServiceReservations::switch_on(std::size_t d) {
  const PowerWindow& w = demands_[d].windows[boundary_[d] / 2];
  ++boundary_[d];
  power_[d] = Power::kWanting;
  ++waiting_;
  granted_[d].push_back(
      {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(), w.off_s});
  try_take(d, demands_[d].reclaim == Reclaim::kPreempt);
}

bool ServiceReservations::try_take(std::size_t d, bool preempt) {
  const ReplicaDemand& demand = demands_[d];
  const auto request = replica_request(demand, control_->cluster().type_index(demand.gpu));
  auto take = [&] { return demand.shared ? control_->reserve_shared(request) : control_->reserve(request); };
  auto alloc = take();
  if (!alloc && preempt) {
    for (JobId j : victims(*control_, request)) {
      control_->advance(j);
      const auto gpus = static_cast<double>(std::max<std::size_t>(1, control_->allocation(j).slots.size()));
      // Checkpointed as it stops (nothing to redo); it pays the usual restart when it starts again.
      control_->interrupt(j, control_->work_done(j), restart_s_ + restart_s_per_gpu_ * gpus);
      ++stats_[d].jobs_preempted;
    }
    alloc = take();
  }
  if (!alloc) return false;
  hold(d, *alloc);
  power_[d] = Power::kOn;
  --waiting_;
  const double now = control_->now();
  const PowerWindow& w = demand.windows[(boundary_[d] - 1) / 2];
  PowerWindow& g = granted_[d].back();
  g.on_s = now;
  g.ready_s = now + (w.ready_s - w.on_s);
  stats_[d].waited_s += now - w.on_s;
  return true;
}

}  // namespace fleetsim
