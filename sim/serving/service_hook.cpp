#include "sim/serving/service_hook.hpp"

#include <algorithm>
#include <limits>

#include "workloads/base/input_error.hpp"

namespace fleetsim {

namespace {
Request request_of(const ReplicaDemand& d, int type) {
  Request r;
  r.gpus = d.gpus;
  r.milli = d.gpu_milli;
  r.types = TypeMask{1} << type;
  r.single_node = true;
  return r;
}

std::vector<int> nodes_of(const std::vector<Slot>& slots) {
  std::vector<int> nodes;
  for (const auto& s : slots)
    if (std::find(nodes.begin(), nodes.end(), s.node) == nodes.end()) nodes.push_back(s.node);
  return nodes;
}
}  // namespace

void ServiceReservations::attach(ClusterControl& control, std::size_t /*jobs*/) {
  control_ = &control;
  const ClusterState& cluster = control.cluster();
  for (const auto& d : demands_) {
    const int type = cluster.type_index(d.gpu);
    if (type < 0)
      throw InputError(d.file, d.line, "gpu",
                       "service '" + d.service + "' runs on " + d.gpu + ", which the cluster does not have");
    const auto alloc = control.reserve(request_of(d, type));
    if (!alloc)
      throw InputError(d.file, d.line, "replicas",
                       "service '" + d.service + "': replica " + std::to_string(nodes_.size() + 1) + " (" +
                           std::to_string(d.gpus) + " x " + d.gpu + (d.gpu_milli < 1000 ? " slice" : "") +
                           " on one node) does not fit in the cluster beside the replicas before it");
    nodes_.push_back(nodes_of(alloc->slots));
    slots_.push_back(alloc->slots);
    allocs_.push_back(*alloc);
    held_ += d.gpus * (d.gpu_milli / 1000.0);
  }
  open_.assign(demands_.size(), -1);
}

int ServiceReservations::node_lost(int node, long event) {
  int hit = 0;
  for (std::size_t d = 0; d < demands_.size(); ++d) {
    if (open_[d] >= 0) continue;
    const auto& nodes = nodes_[d];
    if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) continue;
    control_->release(allocs_[d]);
    ++waiting_;
    open_[d] = static_cast<int>(outages_.size());
    outages_.push_back(
        {static_cast<int>(d), control_->now(), std::numeric_limits<double>::infinity(), event});
    ++hit;
  }
  return hit;
}

void ServiceReservations::capacity_back() {
  const ClusterState& cluster = control_->cluster();
  for (std::size_t d = 0; d < demands_.size() && waiting_ > 0; ++d) {
    if (open_[d] < 0) continue;
    const auto alloc = control_->reserve(request_of(demands_[d], cluster.type_index(demands_[d].gpu)));
    if (!alloc) continue;
    nodes_[d] = nodes_of(alloc->slots);
    slots_[d] = alloc->slots;
    allocs_[d] = *alloc;
    --waiting_;
    outages_[static_cast<std::size_t>(open_[d])].up_s = control_->now() + demands_[d].load_s;
    open_[d] = -1;
  }
}

void ServiceReservations::on_finish(JobId /*id*/) {
  if (waiting_ > 0) capacity_back();
}

}  // namespace fleetsim
