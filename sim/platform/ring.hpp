#pragma once
// A ring collective as ONE SimGrid parallel task (needs --cfg=host/model:ptask_L07 at engine
// creation): every ring neighbour pair ring[i] -> ring[i+1 mod n] carries the same bytes, and the
// flows progress in lockstep as an NCCL ring does. Shared by the network fidelity of the cluster
// simulation (sim/network/) and the Kineto replay (sim/replay/fabric.cpp).
//
// L07 gives a ptask one rate r for all its flows; link l bounds (flows on l x bytes) x r <= C_l
// (a FATPIPE link bounds each flow alone). With B bytes per flow the ptask alone on an idle
// fabric therefore takes latency + B x s_per_byte, s_per_byte = max over links of count_l / C_l
// (FATPIPE: 1 / C_l), latency = the longest ring route's latency.
#include <simgrid/s4u/Exec.hpp>

#include <string>
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

/// Routes of the ring's neighbour flows on the built platform (empty for fewer than two hosts).
RingRoutes ring_routes(const std::vector<simgrid::s4u::Host*>& ring);

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
