#pragma once
// A ring collective as ONE SimGrid parallel task (needs --cfg=host/model:ptask_L07 at engine
// creation): every ring neighbour pair ring[i] -> ring[i+1 mod n] carries the same bytes, and the
// flows progress in lockstep as an NCCL ring does. Shared by the network fidelity of the cluster
// simulation (sim/network/) and the Kineto replay (sim/replay/replay_network.cpp).
//
// L07 gives a ptask one rate r for all its flows; link l bounds (flows on l x bytes) x r <= C_l
// (a FATPIPE link bounds each flow alone). With B bytes per flow the ptask alone on an idle
// fabric therefore takes latency + B x s_per_byte, s_per_byte = max over links of count_l / C_l
// (FATPIPE: 1 / C_l), latency = the longest ring route's latency.
#include <simgrid/s4u/Exec.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace simgrid::s4u {
class Host;
class Link;
}  // namespace simgrid::s4u

namespace fleetsim {

struct RingRoutes {
  /// Each link the ring's flows cross, with the number of flows crossing it (first-use order).
  std::vector<std::pair<simgrid::s4u::Link*, int>> links;
  double s_per_byte = 0;  ///< ptask time per byte of each flow on the idle fabric (0: no link)
  double latency = 0;     ///< ptask start latency (the longest ring route's latency)
};

/// Routes between hosts of a built platform, asked of SimGrid once per ordered pair and kept: a built
/// platform's routes never change (turning hosts or links off does not reroute). Route lookups were
/// over half of a `fabric` run's time on 16,384 GPUs. At most `max_routes` are kept (then it starts over).
class RouteCache {
 public:
  struct Route {
    std::vector<simgrid::s4u::Link*> links;
    double latency = 0;
  };
  explicit RouteCache(std::size_t max_routes = 1 << 21) : max_(max_routes) {}
  const Route& get(simgrid::s4u::Host* from, simgrid::s4u::Host* to);
  std::size_t size() const { return routes_.size(); }

 private:
  struct PairHash {
    std::size_t operator()(const std::pair<const void*, const void*>& p) const {
      return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
    }
  };
  std::size_t max_;
  std::unordered_map<std::pair<const void*, const void*>, Route, PairHash> routes_;
};

/// Routes of the ring's neighbour flows on the built platform (empty for fewer than two hosts); with
/// a cache, each host pair's route is asked of SimGrid once.
RingRoutes ring_routes(const std::vector<simgrid::s4u::Host*>& ring, RouteCache* cache = nullptr);

/// Bytes per flow for which the ring's ptask alone on the idle fabric takes `seconds`; 0 when
/// `seconds` is not longer than the route latency or the ring crosses no link.
double ring_bytes_for(const RingRoutes& routes, double seconds);

/// Starts a ptask that moves `bytes` over each ring flow and computes nothing.
simgrid::s4u::ExecPtr start_ring_ptask(const std::vector<simgrid::s4u::Host*>& ring, double bytes);

/// Ring order of a job's (node, local GPU) pairs as NCCL builds it on rail-optimized pods: nodes in
/// order of first appearance, GPUs by local index, every other node walked backwards, so that each
/// node-to-node hop joins GPUs of the same local index (the same rail / NIC).
std::vector<std::pair<int, int>> ring_order(const std::vector<std::pair<int, int>>& gpus);

/// Link tier from a platform link name (sim/platform/platform.cpp naming): nic, leaf-uplink, intra,
/// gpu, cpu, core (3-tier: a pod's uplink "pod-<p>-core") or spine (anything else, e.g. SimGrid's
/// fat-tree links).
std::string link_tier(const std::string& link_name);

}  // namespace fleetsim
