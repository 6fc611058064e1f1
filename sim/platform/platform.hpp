#pragma once
// Builds a SimGrid platform from a ClusterSpec through the S4U zone API (call before Engine::run()).
//
// Shape (leaf-spine): root star zone "fabric" = the spine layer; one star zone per leaf whose
// uplink (aggregated capacity = nodes_per_leaf * nic / oversubscription) joins the spine; one star
// zone per node holding GPU hosts, each with an intra-node link (NVLink/NVSwitch/PCIe) to the
// node's NIC router, whose NIC link joins the leaf. Fat-tree: SimGrid's fat-tree zone whose leaves
// are the node zones.
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
  simgrid::s4u::Link* nic = nullptr;      ///< NIC link (UP side for split duplex)
};

struct Platform {
  simgrid::s4u::NetZone* root = nullptr;
  std::vector<NodeHandles> nodes;         ///< same order as ClusterSpec::nodes
  std::vector<simgrid::s4u::Link*> leaf_uplinks;  ///< leaf-spine: one per leaf (UP side)
};

/// Build the platform into the (already created) engine. Host names: "<node>-gpu<i>", "<node>-cpu".
Platform build_platform(const ClusterSpec& spec);

}  // namespace fleetsim
