#include "sim/serving/service_placement.hpp"

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

/// The slots a replica holds at `t`: its last placement from t_s <= t (empty: down). With
/// `while_down`, a replica that is down gives where it last was (its links do not matter then).
const std::vector<Slot>& slots_at(const std::vector<PlacementChange>& placements, double t,
                                  bool while_down = false) {
  static const std::vector<Slot> kNone;
  const std::vector<Slot>* at = &kNone;
  for (const auto& p : placements) {
    if (p.t_s > t) break;
    if (!while_down || !p.slots.empty()) at = &p.slots;
  }
  return *at;
}

/// The times replicas were placed again after their first placement (failover), sorted, unique.
std::vector<double> move_times(const PlacementHistory& replicas, bool placed_only) {
  std::vector<double> times;
  for (const auto& h : replicas)
    for (std::size_t i = 1; i < h.size(); ++i)
      if (!placed_only || !h[i].slots.empty()) times.push_back(h[i].t_s);
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  return times;
}

/// Replicas (of any service) other than one holding `slots` that share its GPU at `t`.
int others_at(const PlacementHistory& all, const std::vector<Slot>& slots, double t) {
  if (slots.empty()) return 0;
  int others = -1;  // counts itself once
  for (const auto& h : all)
    for (const auto& s : slots_at(h, t))
      if (s.node == slots.front().node && s.gpu == slots.front().gpu) ++others;
  return std::max(0, others);
}

std::vector<KvLink> links_at(const ServiceSpec& spec, const ClusterSpec& cluster,
                             const PlacementHistory& mine, int prefill, int replicas, double t) {
  std::vector<KvLink> links;
  for (int p = 0; p < prefill; ++p)
    for (int d = prefill; d < replicas; ++d)
      links.push_back(link_between(cluster, slots_at(mine[static_cast<std::size_t>(p)], t, true),
                                   slots_at(mine[static_cast<std::size_t>(d)], t, true),
                                   spec.tensor_parallel));
  return links;
}

}  // namespace

void apply_placement(const ServiceSpec& spec, const ClusterSpec& cluster, const PlacementHistory& mine,
                     const PlacementHistory& all, const std::vector<std::vector<OccupancyChange>>& occupancy,
                     double colocation_slowdown, ServingEngineConfig& engine) {
  const int prefill = engine.prefill_replicas;
  if (prefill > 0 && spec.kv_link_gbps <= 0 && static_cast<int>(mine.size()) == engine.replicas) {
    engine.kv_links = links_at(spec, cluster, mine, prefill, engine.replicas, 0);
    engine.kv_link_changes.clear();
    for (double t : move_times(mine, true))
      engine.kv_link_changes.push_back({t, links_at(spec, cluster, mine, prefill, engine.replicas, t)});
  }
  if (spec.mps_share <= 0) return;
  engine.replica_speed.clear();
  engine.replica_speed_changes.clear();
  const std::vector<double> moves = move_times(all, false);
  for (std::size_t k = 0; k < mine.size(); ++k) {
    const double t0 = mine[k].empty() ? 0.0 : mine[k].front().t_s;
    const int first = others_at(all, slots_at(mine[k], t0), t0);
    engine.replica_speed.push_back(std::pow(colocation_slowdown, first));
    const std::vector<OccupancyChange> none;
    const auto& changes = k < occupancy.size() ? occupancy[k] : none;
    std::vector<ServingEngineConfig::SpeedChange> factors;
    // Its speed changes when the jobs beside it change (changes) or any replica moves (moves).
    std::vector<double> times = moves;
    for (const auto& c : changes) times.push_back(c.t_s);
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    std::size_t next_change = 0;
    int jobs = 0;
    for (double t : times) {
      for (; next_change < changes.size() && changes[next_change].t_s <= t; ++next_change)
        jobs = changes[next_change].jobs;
      const auto& here = slots_at(mine[k], t);
      if (here.empty()) continue;  // down: it runs no step
      // Factors multiply the first placement's speed (replica_speed).
      factors.push_back({t, std::pow(colocation_slowdown, jobs + others_at(all, here, t) - first)});
    }
    engine.replica_speed_changes.push_back(std::move(factors));
  }
}

}  // namespace fleetsim
