#include "sim/app/service_placement.hpp"

#include <algorithm>
#include <cmath>

#include "sim/serving/service.hpp"

namespace fleetsim {
namespace {

KvLink link_between(const ClusterSpec& cluster, const std::vector<Slot>& a, const std::vector<Slot>& b,
                    int tp) {
  const NetworkSpec& net = cluster.network;
  if (a.empty() || b.empty()) return {};
  const NodeSpec& na = cluster.nodes[static_cast<std::size_t>(a.front().node)];
  const NodeSpec& nb = cluster.nodes[static_cast<std::size_t>(b.front().node)];
  if (a.front().node == b.front().node) return {tp * net.intra_node_gbps * 1e9 / 8, net.link_latency_s};
  auto node_gbps = [&](const NodeSpec& n) {
    const double per_gpu = net.nic_gbps / std::max(1, cluster.gpus_per_nic(n.gpus));
    return std::min(tp * per_gpu, net.nic_gbps * std::max(1, net.nics_per_node));
  };
  const double gbps = std::min(node_gbps(na), node_gbps(nb));
  return {gbps * 1e9 / 8, net.link_latency_s * (na.leaf == nb.leaf ? 2 : 4)};
}

}  // namespace

void apply_placement(const ServiceSpec& spec, const ClusterSpec& cluster,
                     const std::vector<std::vector<Slot>>& mine, const std::vector<std::vector<Slot>>& all,
                     const std::vector<std::vector<OccupancyChange>>& occupancy, double colocation_slowdown,
                     ServingEngineConfig& engine) {
  const int prefill = engine.prefill_replicas;
  if (prefill > 0 && spec.kv_link_gbps <= 0 && static_cast<int>(mine.size()) == engine.replicas) {
    engine.kv_links.clear();
    for (int p = 0; p < prefill; ++p)
      for (int d = prefill; d < engine.replicas; ++d)
        engine.kv_links.push_back(link_between(cluster, mine[static_cast<std::size_t>(p)],
                                               mine[static_cast<std::size_t>(d)], spec.tensor_parallel));
  }
  if (spec.mps_share > 0) {
    engine.replica_speed.clear();
    for (const auto& slots : mine) {
      int others = -1;  // counts itself once
      for (const auto& other : all)
        for (const auto& s : other)
          if (!slots.empty() && s.node == slots.front().node && s.gpu == slots.front().gpu) ++others;
      engine.replica_speed.push_back(std::pow(colocation_slowdown, std::max(0, others)));
    }
    engine.replica_speed_changes.clear();
    for (const auto& changes : occupancy) {
      std::vector<ServingEngineConfig::SpeedChange> factors;
      for (const auto& c : changes) factors.push_back({c.t_s, std::pow(colocation_slowdown, c.jobs)});
      engine.replica_speed_changes.push_back(std::move(factors));
    }
  }
}

}  // namespace fleetsim
