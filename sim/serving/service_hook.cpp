#include "sim/serving/service_hook.hpp"

#include <algorithm>

#include "workloads/base/input_error.hpp"

namespace fleetsim {

void ServiceReservations::attach(ClusterControl& control, std::size_t /*jobs*/) {
  control_ = &control;
  const ClusterState& cluster = control.cluster();
  for (const auto& d : demands_) {
    const int type = cluster.type_index(d.gpu);
    if (type < 0)
      throw InputError(d.file, d.line, "gpu",
                       "service '" + d.service + "' runs on " + d.gpu + ", which the cluster does not have");
    Request r;
    r.gpus = d.gpus;
    r.milli = d.gpu_milli;
    r.types = TypeMask{1} << type;
    r.single_node = true;
    const auto alloc = d.shared ? control.reserve_shared(r) : control.reserve(r);
    if (!alloc)
      throw InputError(d.file, d.line, "replicas",
                       "service '" + d.service + "': replica " + std::to_string(nodes_.size() + 1) + " (" +
                           std::to_string(d.gpus) + " x " + d.gpu + (d.gpu_milli < 1000 ? " slice" : "") +
                           " on one node) does not fit in the cluster beside the replicas before it");
    std::vector<int> nodes;
    for (const auto& s : alloc->slots)
      if (std::find(nodes.begin(), nodes.end(), s.node) == nodes.end()) nodes.push_back(s.node);
    nodes_.push_back(std::move(nodes));
    slots_.push_back(alloc->slots);
    held_ += d.gpus * (d.gpu_milli / 1000.0);
  }
  occupancy_.assign(demands_.size(), {});
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
    if (!demands_[k].shared) continue;
    const bool beside = std::any_of(job_slots.begin(), job_slots.end(), [&](const Slot& s) {
      return std::any_of(slots_[k].begin(), slots_[k].end(), [&](const Slot& mine) {
        return s.gpu >= 0 && s.node == mine.node && s.gpu == mine.gpu;
      });
    });
    if (!beside) continue;
    auto& changes = occupancy_[k];
    const int jobs = (changes.empty() ? 0 : changes.back().jobs) + delta;
    const double now = control_->now();
    if (!changes.empty() && changes.back().t_s == now)
      changes.back().jobs = jobs;  // several changes at one instant: the last count holds
    else
      changes.push_back({now, jobs});
  }
}

}  // namespace fleetsim
