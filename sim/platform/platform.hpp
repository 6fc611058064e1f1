#pragma once
// Builds a SimGrid platform from a ClusterSpec through the S4U zone API (call before Engine::run()).
//
// Shape (details and the SimGrid 3.32 reasons in platform.cpp): one zone per *leaf* (Dijkstra
// routing) holding, per node, one host per GPU ("<node>-gpu<i>", speed = catalog FP32 peak), a CPU
// host ("<node>-cpu"), a node switch router and the node's NIC link to the leaf router. Intra-node:
// each GPU has its own split-duplex link of intra_node_gbps (NVSwitch crossbar; NVLink approximated
// the same way; PCIe adds one shared switch uplink on the way to the NIC). Leaf-spine: root star zone
// "fabric" with one aggregated uplink per leaf (nodes_per_leaf * nic / oversubscription). Fat-tree:
// SimGrid fat-tree zone "fabric" whose positions are the leaf zones, with
// max(1, round(nodes_per_leaf / oversubscription)) spines linked to every leaf at NIC bandwidth.
// Rail-optimized: per group of nodes_per_leaf nodes one leaf per rail (NIC index), rail leaves
// joined by the group's spine router; GPU pairs inside a node by the NVSwitch/PCIe crossbar.
// Leaves are assigned by position (node index / nodes_per_leaf).
// 3-tier (leaf-spine, rail-optimized; network.leaves_per_pod > 0): leaf groups sit in pod zones
// "pod-<p>" whose spine router reaches the other pods through one core uplink "pod-<p>-core" of the
// pod's group uplink capacity / core_oversubscription.
// Trap: SimGrid 3.32 may list a route's links out of path order (Host::route_to); treat it as a set.
#include <string>
#include <vector>

#include "sim/platform/cluster_spec.hpp"

namespace simgrid::s4u {
class Engine;
class Host;
class Link;
class NetZone;
}  // namespace simgrid::s4u

namespace fleetsim {

struct NodeHandles {
  std::vector<simgrid::s4u::Host*> gpus;  ///< one host per GPU, speed = catalog FP32 peak (flop/s)
  simgrid::s4u::Host* cpu = nullptr;      ///< host for CPU-side work (the node's CPUs)
  simgrid::s4u::Link* nic = nullptr;      ///< NIC link, UP side (= traffic leaving the node); first NIC
  std::vector<simgrid::s4u::Link*> nics;  ///< every NIC link, UP side (rail-optimized: NIC r = rail r)
};

struct Platform {
  simgrid::s4u::NetZone* root = nullptr;
  simgrid::s4u::Host* control = nullptr;  ///< where the controller actor lives: the first node's CPU host
  std::vector<NodeHandles> nodes;         ///< same order as ClusterSpec::nodes
  /// Leaf-spine: one per leaf (UP side); rail-optimized: one per rail leaf, group-major
  /// (group g rail r at g * nics_per_node + r); fat-tree: empty.
  std::vector<simgrid::s4u::Link*> leaf_uplinks;
};

/// Build the platform into the (already created) engine. Host names: "<node>-gpu<i>", "<node>-cpu".
Platform build_platform(const ClusterSpec& spec);

/// The controller's host alone, for a run where no fidelity hook routes traffic (`delay`): job times
/// come from the job models there, so the cluster's hosts and links would sit unused, and SimGrid 3.32
/// checks each new host's name against every host created before it (NetZoneImpl::create_host), about
/// 10 s for 100,000 GPUs. Validates the spec as build_platform() does. `nodes` is empty.
Platform build_control_platform(const ClusterSpec& spec);

/// Re-rates the links of a platform built from a spec with network `built` to what `target` gives
/// when the two differ only in nic_gbps and intra_node_gbps: NIC, leaf-uplink and spine links scale
/// with nic_gbps (a rail-optimized GPU's PCIe link to its NIC is max(PCIe 4.0 x16, nic_gbps)), GPU
/// and intra-node links with intra_node_gbps. Lets a caller measure routes on the built network
/// first (e.g. to calibrate transfers) and then simulate the what-if network.
void rerate_network(const NetworkSpec& built, const NetworkSpec& target);

}  // namespace fleetsim
