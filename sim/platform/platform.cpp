#include "sim/platform/platform.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "models/gpu_catalog.hpp"
#include "workloads/input_error.hpp"

// Model of one node (both topologies). A node is a star zone named after the node:
//
//   <node>-gpu<i>  --[<node>-gpu<i>_UP/_DOWN]--+
//   <node>-cpu     --[<node>-cpu_UP/_DOWN]-----+-- (star centre = the node's switch)
//   <node>-nic (router) --[<node>-nic_UP/_DOWN]+
//
// A route between two members is "source link, destination link" (StarZone), so:
//  - NVSwitch: every GPU has its own split-duplex link of intra_node_gbps to a non-blocking centre:
//    the NVSwitch crossbar (any pairs at full rate; a GPU's link is shared by its own flows only).
//  - NVLink without a switch (e.g. DGX-1 hybrid cube mesh, 2-GPU bridges): the same approximation,
//    with intra_node_gbps the GPU's aggregate NVLink bandwidth; the mesh's uneven pair bandwidth
//    is not represented.
//  - PCIe: each GPU has its own x16 link of intra_node_gbps to a PCIe switch (GPU<->GPU peer
//    traffic through the switch uses only the two GPUs' links); traffic between the GPUs and the
//    NIC additionally crosses one shared link of intra_node_gbps (the switch's uplink), so all GPUs
//    of a node share it for network traffic.
//  - The CPU host hangs off the centre with a PCIe 4.0 x16 link (kHostLinkGbps).
//  - The NIC router is the node's gateway; its link carries all of the node's network traffic.
//    Outbound (node -> fabric) traffic uses the NIC link's UP side, inbound the DOWN side.
//
// Leaf-spine: root star zone "fabric" = the spine layer; one star zone per leaf ("leaf-<k>") whose
// gateway is a router "leaf-<k>-router", joined to the spine by one split-duplex link
// "leaf-<k>-uplink" of nodes_per_leaf * nic / oversubscription (the aggregate of the leaf's uplinks;
// ECMP over several spines is modelled as one fat link). The NIC link is the node<->leaf cable and
// carries link_latency_s, as does the uplink. Hops: same leaf 2 fabric links, across the spine 4.
//
// Fat-tree: SimGrid's two-level fat-tree zone "fabric": nodes_per_leaf nodes per leaf switch,
// ceil(nodes / nodes_per_leaf) leaf switches, max(1, round(nodes_per_leaf / oversubscription))
// spines each wired to every leaf by one link; every fat-tree link has the NIC bandwidth and
// link_latency_s and is split-duplex. The fat-tree's node->leaf cable is a link of its own, so the
// node's NIC link gets zero latency there (the hop counts then match leaf-spine). Positions beyond
// the real node count hold a bare router. Platform::leaf_uplinks stays empty for fat-trees.

namespace fleetsim {

namespace sg4 = simgrid::s4u;
using Dir = sg4::LinkInRoute::Direction;

namespace {

constexpr double kGbitToBytes = 1e9 / 8;    // Gbit/s -> B/s
constexpr double kNvlinkLatencyS = 250e-9;  // per NVLink/NVSwitch hop (GPU<->GPU = 2 hops = 0.5 us)
constexpr double kPcieLatencyS = 500e-9;    // per PCIe hop (GPU<->GPU through a switch = 1 us)
constexpr double kHostLinkGbps = 256;       // CPU<->node switch: PCIe 4.0 x16, ~32 GB/s
constexpr double kCpuCoreFlops = 5e10;      // nominal 50 GFLOP/s per CPU core (host-side work)

struct BuiltNode {
  sg4::NetZone* zone = nullptr;
  simgrid::kernel::routing::NetPoint* gateway = nullptr;
  NodeHandles handles;
};

BuiltNode build_node(const ClusterSpec& spec, const NodeSpec& node, sg4::NetZone* parent, double nic_latency) {
  const NetworkSpec& net = spec.network;
  BuiltNode out;
  out.zone = sg4::create_star_zone(node.name);
  out.zone->set_parent(parent);

  const double intra_bw = net.intra_node_gbps * kGbitToBytes;
  const double intra_lat = net.intra_node == IntraNode::kPcie ? kPcieLatencyS : kNvlinkLatencyS;
  if (node.gpus > 0) {
    const double speed = gpu_spec(node.gpu).fp32_tflops * 1e12;
    out.handles.gpus.reserve(static_cast<std::size_t>(node.gpus));
    for (int i = 0; i < node.gpus; ++i) {
      const std::string name = node.name + "-gpu" + std::to_string(i);
      sg4::Host* gpu = out.zone->create_host(name, speed)->seal();
      sg4::Link* link = out.zone->create_split_duplex_link(name, intra_bw)->set_latency(intra_lat)->seal();
      out.zone->add_route(gpu->get_netpoint(), nullptr, nullptr, nullptr, {sg4::LinkInRoute(link, Dir::UP)});
      out.handles.gpus.push_back(gpu);
    }
  }

  const int cores = std::max(1, static_cast<int>(std::lround(node.cpu_milli / 1000.0)));
  out.handles.cpu = out.zone->create_host(node.name + "-cpu", kCpuCoreFlops)->set_core_count(cores)->seal();
  sg4::Link* cpu_link = out.zone->create_split_duplex_link(node.name + "-cpu", kHostLinkGbps * kGbitToBytes)
                            ->set_latency(kPcieLatencyS)
                            ->seal();
  out.zone->add_route(out.handles.cpu->get_netpoint(), nullptr, nullptr, nullptr,
                      {sg4::LinkInRoute(cpu_link, Dir::UP)});

  // The NIC router's route to the centre is listed DOWN so that centre -> NIC (outbound) is UP.
  auto* nic_router = out.zone->create_router(node.name + "-nic");
  auto* nic = out.zone->create_split_duplex_link(node.name + "-nic", net.nic_gbps * kGbitToBytes);
  nic->set_latency(nic_latency)->seal();
  std::vector<sg4::LinkInRoute> nic_route{sg4::LinkInRoute(nic, Dir::DOWN)};
  if (net.intra_node == IntraNode::kPcie && node.gpus > 0) {
    sg4::Link* pcie_up =
        out.zone->create_split_duplex_link(node.name + "-pcie-uplink", intra_bw)->set_latency(0)->seal();
    nic_route.insert(nic_route.begin(), sg4::LinkInRoute(pcie_up, Dir::DOWN));
  }
  out.zone->add_route(nic_router, nullptr, nullptr, nullptr, nic_route);
  out.handles.nic = nic->get_link_up();
  out.zone->seal();
  out.gateway = nic_router;
  return out;
}

Platform build_leaf_spine(const ClusterSpec& spec) {
  const NetworkSpec& net = spec.network;
  Platform p;
  p.root = sg4::create_star_zone("fabric");
  p.nodes.resize(spec.nodes.size());
  const double uplink_bw = net.nodes_per_leaf * net.nic_gbps * kGbitToBytes / net.oversubscription;

  const int leaves = spec.leaves();
  std::size_t next = 0;
  for (int leaf = 0; leaf < leaves; ++leaf) {
    const std::string name = "leaf-" + std::to_string(leaf);
    sg4::NetZone* zone = sg4::create_star_zone(name);
    zone->set_parent(p.root);
    // The leaf router lives in a zone of its own, a sibling of the node zones (see the trap above).
    sg4::NetZone* sw = sg4::create_star_zone(name + "-switch");
    sw->set_parent(zone);
    auto* router = sw->create_router(name + "-router");
    sw->seal();
    zone->add_route(sw->get_netpoint(), nullptr, router, nullptr, {});
    for (; next < spec.nodes.size() && spec.nodes[next].leaf == leaf; ++next) {
      BuiltNode n = build_node(spec, spec.nodes[next], zone, net.link_latency_s);
      zone->add_route(n.zone->get_netpoint(), nullptr, n.gateway, nullptr, {});
      p.nodes[next] = std::move(n.handles);
    }
    zone->seal();
    auto* uplink = p.root->create_split_duplex_link(name + "-uplink", uplink_bw);
    uplink->set_latency(net.link_latency_s)->seal();
    p.root->add_route(zone->get_netpoint(), nullptr, router, nullptr, {sg4::LinkInRoute(uplink, Dir::UP)});
    p.leaf_uplinks.push_back(uplink->get_link_up());
  }
  if (next != spec.nodes.size())
    throw InputError("", 0, "cluster.nodes", "node leaf indices are not in order (expected index / nodes_per_leaf)");
  p.root->seal();
  return p;
}

Platform build_fat_tree(const ClusterSpec& spec) {
  const NetworkSpec& net = spec.network;
  Platform p;
  p.nodes.resize(spec.nodes.size());
  const auto per_leaf = static_cast<unsigned>(net.nodes_per_leaf);
  const auto leaves = static_cast<unsigned>(std::max(1, spec.leaves()));
  const auto spines =
      static_cast<unsigned>(std::max(1L, std::lround(net.nodes_per_leaf / net.oversubscription)));

  auto set_netpoint = [&](sg4::NetZone* zone, const std::vector<unsigned long>& /*coord*/, unsigned long id)
      -> std::pair<simgrid::kernel::routing::NetPoint*, simgrid::kernel::routing::NetPoint*> {
    if (id >= spec.nodes.size()) return {zone->create_router("fabric-empty-" + std::to_string(id)), nullptr};
    BuiltNode n = build_node(spec, spec.nodes[id], zone, 0.0);
    p.nodes[id] = std::move(n.handles);
    return {n.zone->get_netpoint(), n.gateway};
  };
  p.root = sg4::create_fatTree_zone("fabric", nullptr, sg4::FatTreeParams(2, {per_leaf, leaves}, {1, spines}, {1, 1}),
                                    sg4::ClusterCallbacks(set_netpoint), net.nic_gbps * kGbitToBytes,
                                    net.link_latency_s, sg4::Link::SharingPolicy::SPLITDUPLEX);
  p.root->seal();
  return p;
}

}  // namespace

Platform build_platform(const ClusterSpec& spec) {
  if (spec.nodes.empty()) throw InputError("", 0, "cluster", "cannot build a platform without nodes");
  return spec.network.topology == Topology::kFatTree ? build_fat_tree(spec) : build_leaf_spine(spec);
}

}  // namespace fleetsim
