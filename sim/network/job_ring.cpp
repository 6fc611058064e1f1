#include "sim/network/job_ring.hpp"

#include <algorithm>
#include <utility>

#include "models/collective/collective_model.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "sim/network/network_hook.hpp"
#include "sim/platform/platform.hpp"
#include "sim/platform/ring.hpp"

namespace fleetsim {

std::optional<JobRing> job_ring(JobClock& clock, const Platform& platform, const ClusterSpec& cluster,
                                const NetworkFidelityConfig& config, JobId id,
                                const PlacementSummary& where) {
  if (where.gpus < 2) return std::nullopt;
  const Execution& run = clock.execution(id);
  std::vector<std::pair<int, int>> gpus;
  for (const auto& s : clock.allocation(id).slots)
    if (s.gpu >= 0) gpus.push_back({s.node, s.gpu});
  JobRing r;
  for (const auto& [node, gpu] : ring_order(gpus))
    r.hosts.push_back(platform.nodes[static_cast<std::size_t>(node)].gpus[static_cast<std::size_t>(gpu)]);
  const GpuSpec* g = find_gpu(where.gpu_type);
  if (r.hosts.size() < 2 || g == nullptr || !(run.runtime > 0)) return std::nullopt;
  double compute_s = config.iteration_compute_s, comm_s = 0;
  if (const auto shape = clock.job_model().iteration_shape(clock.job(id), where)) {
    compute_s = shape->compute_s;
    comm_s = shape->exposed_comm_s;
  } else {
    const auto& net = cluster.network;
    const int node_gpus = cluster.nodes[static_cast<std::size_t>(gpus.front().first)].gpus;
    CollectiveDesc d;
    d.bytes = config.grad_bytes;
    d.ranks = static_cast<int>(r.hosts.size());
    d.nodes = std::max(1, where.nodes);
    comm_s =
        predict_analytic(d, fabric_for(*g, net.nic_gbps, net.nics_per_node, cluster.gpus_per_nic(node_gpus)))
            .seconds;
  }
  if (!(comm_s > 0) || !(compute_s > 0)) return std::nullopt;
  r.iteration_s = compute_s + comm_s;
  r.phi = compute_s / r.iteration_s;
  return r;
}

}  // namespace fleetsim
