#include "sim/serving/service_hook.hpp"

#include <algorithm>

#include "workloads/base/input_error.hpp"

namespace fleetsim {

void ServiceReservations::attach(ClusterControl& control, std::size_t /*jobs*/) {
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
    const auto alloc = control.reserve(r);
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
}

}  // namespace fleetsim
