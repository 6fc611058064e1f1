#include "sim/serving/service_hook.hpp"

#include <algorithm>
#include <limits>

#include "workloads/base/input_error.hpp"

namespace fleetsim {

Request replica_request(const ReplicaDemand& d, int type) {
  Request r;
  r.gpus = d.gpus;
  r.milli = d.gpu_milli;
  r.types = TypeMask{1} << type;
  r.single_node = true;
  return r;
}

namespace {

std::vector<int> nodes_of(const std::vector<Slot>& slots) {
  std::vector<int> nodes;
  for (const auto& s : slots)
    if (std::find(nodes.begin(), nodes.end(), s.node) == nodes.end()) nodes.push_back(s.node);
  return nodes;
}

/// Whether a job on `job` shares a GPU with a replica on `mine`.
bool shares_gpu(const std::vector<Slot>& job, const std::vector<Slot>& mine) {
  return std::any_of(job.begin(), job.end(), [&](const Slot& s) {
    return s.gpu >= 0 && std::any_of(mine.begin(), mine.end(),
                                     [&](const Slot& m) { return s.node == m.node && s.gpu == m.gpu; });
  });
}
}  // namespace

void ServiceReservations::attach(ClusterControl& control, std::size_t /*jobs*/) {
  control_ = &control;
  nodes_can_leave_ = control.nodes_can_leave();
  const ClusterState& cluster = control.cluster();
  occupancy_.assign(demands_.size(), {});
  beside_.assign(demands_.size(), {});
  open_.assign(demands_.size(), -1);
  power_.assign(demands_.size(), Power::kOn);
  boundary_.assign(demands_.size(), 0);
  granted_.assign(demands_.size(), {});
  stats_.assign(demands_.size(), {});
  for (std::size_t k = 0; k < demands_.size(); ++k) {
    const ReplicaDemand& d = demands_[k];
    const int type = cluster.type_index(d.gpu);
    if (type < 0)
      throw InputError(d.file, d.line, "gpu",
                       "service '" + d.service + "' runs on " + d.gpu + ", which the cluster does not have");
    if (d.reclaim != Reclaim::kHold && (d.windows.empty() || d.windows.front().on_s > 0)) {
      // Switched off at the start: holds nothing until the autoscaler switches it on.
      power_[k] = Power::kOff;
      nodes_.emplace_back();
      slots_.emplace_back();
      placements_.push_back({{control.now(), {}}});
      allocs_.emplace_back();
      continue;
    }
    const auto request = replica_request(d, type);
    const auto alloc = d.shared ? control.reserve_shared(request) : control.reserve(request);
    if (!alloc)
      throw InputError(d.file, d.line, "replicas",
                       "service '" + d.service + "': replica " + std::to_string(nodes_.size() + 1) + " (" +
                           std::to_string(d.gpus) + " x " + d.gpu + (d.gpu_milli < 1000 ? " slice" : "") +
                           " on one node) does not fit in the cluster beside the replicas before it");
    nodes_.push_back(nodes_of(alloc->slots));
    slots_.push_back(alloc->slots);
    placements_.push_back({{control.now(), alloc->slots}});
    allocs_.push_back(*alloc);
    held_ += d.gpus * (d.gpu_milli / 1000.0);
    if (d.reclaim != Reclaim::kHold) {
      boundary_[k] = 1;  // window 0's on: now
      granted_[k].push_back(d.windows.front());
    }
  }
}

void ServiceReservations::on_start(JobId id, const PlacementSummary& /*where*/) {
  occupy(id, +1);
}

void ServiceReservations::on_leave(JobId id) {
  occupy(id, -1);
}

void ServiceReservations::occupy(JobId id, int delta) {
  if (control_ == nullptr) return;
  const auto& job_slots = control_->allocation(id).slots;
  for (std::size_t k = 0; k < demands_.size(); ++k) {
    if (!demands_[k].shared || open_[k] >= 0 || power_[k] != Power::kOn) continue;  // down: holds no GPU
    auto& ids = beside_[k];
    const auto it = std::find(ids.begin(), ids.end(), id);
    if (delta > 0) {
      // Counted once however often it is seen (a job already counted when the replica moved).
      if (it != ids.end() || !shares_gpu(job_slots, slots_[k])) continue;
      ids.push_back(id);
    } else {
      if (it == ids.end()) continue;  // not counted beside this replica (e.g. beside its old GPUs)
      ids.erase(it);
    }
    record_occupancy(k, static_cast<int>(ids.size()));
  }
}

void ServiceReservations::record_occupancy(std::size_t k, int jobs) {
  auto& changes = occupancy_[k];
  if (!changes.empty() && changes.back().jobs == jobs) return;
  const double now = control_->now();
  if (!changes.empty() && changes.back().t_s == now)
    changes.back().jobs = jobs;  // several changes at one instant: the last count holds
  else
    changes.push_back({now, jobs});
}

int ServiceReservations::node_lost(int node, long event) {
  int hit = 0;
  for (std::size_t d = 0; d < demands_.size(); ++d) {
    if (open_[d] >= 0 || power_[d] != Power::kOn) continue;  // down, or switched off: holds nothing
    const auto& nodes = nodes_[d];
    if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) continue;
    control_->release(allocs_[d]);  // a shared replica also leaves its GPUs' co-location
    ++waiting_;
    open_[d] = static_cast<int>(outages_.size());
    outages_.push_back(
        {static_cast<int>(d), control_->now(), std::numeric_limits<double>::infinity(), event});
    placements_[d].push_back({control_->now(), {}});
    if (demands_[d].shared) {
      // Down, it shares no GPU: no job is counted beside it until it is placed again.
      beside_[d].clear();
      record_occupancy(d, 0);
    }
    ++hit;
  }
  return hit;
}

void ServiceReservations::capacity_back() {
  const ClusterState& cluster = control_->cluster();
  for (std::size_t d = 0; d < demands_.size() && waiting_ > 0; ++d) {
    if (power_[d] == Power::kWanting) {
      try_take(d, false);
      continue;
    }
    if (open_[d] < 0) continue;
    const ReplicaDemand& demand = demands_[d];
    const auto request = replica_request(demand, cluster.type_index(demand.gpu));
    const auto alloc = demand.shared ? control_->reserve_shared(request) : control_->reserve(request);
    if (!alloc) continue;
    hold(d, *alloc);
    --waiting_;
    outages_[static_cast<std::size_t>(open_[d])].up_s = control_->now() + demand.load_s;
    open_[d] = -1;
  }
}

void ServiceReservations::hold(std::size_t d, const Allocation& alloc) {
  nodes_[d] = nodes_of(alloc.slots);
  slots_[d] = alloc.slots;
  placements_[d].push_back({control_->now(), alloc.slots});
  allocs_[d] = alloc;
  if (!demands_[d].shared) return;
  // The jobs already running on the new GPUs share them from now on (on_start will not tell us about
  // them again; a job seen twice is counted once).
  auto& ids = beside_[d];
  ids.clear();
  for (JobId j : control_->running())
    if (shares_gpu(control_->allocation(j).slots, slots_[d])) ids.push_back(j);
  record_occupancy(d, static_cast<int>(ids.size()));
}

void ServiceReservations::on_finish(JobId /*id*/) {
  if (waiting_ > 0) capacity_back();
}

long ServiceReservations::requests_rerouted(long event) const {
  const auto it = rerouted_.find(event);
  return it == rerouted_.end() ? 0 : it->second;
}

void ServiceReservations::add_rerouted(long event, long requests) {
  rerouted_[event] += requests;
}

}  // namespace fleetsim
