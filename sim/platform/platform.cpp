#include "sim/platform/platform.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "models/hardware/gpu_catalog.hpp"
#include "sim/platform/ring.hpp"
#include "workloads/base/input_error.hpp"

// Shape. SimGrid 3.32 checks name uniqueness on every host/link it creates by a search through all
// zones, and gathers hosts at every zone seal by a walk over all hosts: building costs
// O(resources x zones). One star zone per node (1,250 zones for 10,000 GPUs) took 2.7 s, so a
// zone here is a *leaf* (nodes_per_leaf nodes) and the node structure lives inside it.
// (Nesting node zones inside leaf zones fails outright in 3.32: a route from a GPU to a gateway
// that sits one zone level higher is resolved as if both were in that zone -> wrong links or an
// out_of_range abort. A gateway must be a direct member of the zone it serves, and every endpoint
// must be at the same depth below the common ancestor.)
// Link ownership: routes may use links of any zone, so every link is created in the root zone
// "fabric" (one big map) rather than in the leaf zones; that makes the per-link name check cheap
// (10,000 GPUs: ~0.9 s -> ~0.4 s of CPU on a loaded 2-core machine). Hosts must live in their leaf.
//
//   leaf zone "leaf-<k>" (Dijkstra routing, cached; every edge is one split-duplex link):
//     <node>-gpu<i> --[<node>-gpu<i>]-- <node>-switch --[<node>-nic]-- leaf-<k>-router (gateway)
//     <node>-cpu    --[<node>-cpu]------/
//   PCIe nodes put a PCIe switch between the GPUs and the node switch:
//     <node>-gpu<i> --[<node>-gpu<i>]-- <node>-pcie --[<node>-pcie-uplink]-- <node>-switch
//
// Intra-node links (intra_node_gbps each, per direction):
//  - NVSwitch: each GPU has its own split-duplex link to a non-blocking centre (the NVSwitch
//    crossbar, FATPIPE-like: any GPU pairs at full rate; a GPU's link carries only its own flows).
//  - NVLink without a switch (DGX-1 hybrid cube mesh, 2-GPU bridges): the same approximation with
//    intra_node_gbps = the GPU's aggregate NVLink bandwidth; the mesh's uneven pairs are not modelled.
//  - PCIe: each GPU has its own x16 link to the node's PCIe switch (peer traffic between GPUs uses
//    only the two GPUs' links); traffic between the GPUs and the NIC or CPU also crosses one shared
//    link of intra_node_gbps (the switch's uplink to the host bridge), shared by all GPUs of the node.
//  - The CPU host hangs off the node switch with a PCIe 4.0 x16 link (kHostLinkGbps).
//  - The NIC link (nic_gbps, link_latency_s) is the node<->leaf-switch cable. Traffic leaving the
//    node uses its UP side (NodeHandles::nic), arriving traffic the DOWN side.
//
// Leaf-spine: root star zone "fabric" (the spine layer). Each leaf zone joins it with one
// split-duplex link "leaf-<k>-uplink" of nodes_per_leaf * nic / oversubscription (the aggregate of
// the leaf's uplinks; ECMP over spines modelled as one fat link), latency link_latency_s.
//
// Fat-tree: SimGrid's fat-tree zone "fabric" whose positions are the leaf zones: one level of
// max(1, round(nodes_per_leaf / oversubscription)) spines, each wired to every leaf by one
// split-duplex link of nic_gbps and link_latency_s, routed by SimGrid's fat-tree (per-destination
// spine choice). With the leaf switch inside the leaf zone this is the 2-level fat-tree
// "nodes_per_leaf nodes per leaf switch, ceil(nodes / nodes_per_leaf) leaves, spines x leaves links".
// Platform::leaf_uplinks stays empty for fat-trees (each leaf has one link per spine).
//
// Hops: same node 2 intra-node links; same leaf gpu, nic, nic, gpu; across the spine gpu, nic,
// uplink (up), uplink (down), nic, gpu. Both topologies give the same latencies.
//
// NICs (leaf-spine, fat-tree): a node's nics_per_node NICs of nic_gbps all go to its leaf and are
// modelled as one bonded link "<node>-nic" of nics_per_node * nic_gbps (uplinks scale with it).
//
// Rail-optimized (build_rail_group; as in DGX SuperPODs): nodes are grouped nodes_per_leaf at a
// time (a "scalable unit", zone "leaf-<g>"); in each group NIC r of every node goes to the rail-r
// leaf router "leaf-<g>-rail<r>", and the rail leaves join the group's spine router
// "leaf-<g>-spine" by one split-duplex uplink "leaf-<g>-rail<r>-uplink" of
// nodes_per_leaf * nic / oversubscription (ECMP over the spines as one fat link). The spine router
// is the group's gateway; the root star zone "fabric" joins the groups' spine routers with no
// link of its own (the spine layer is non-blocking; contention is on the rail uplinks).
// GPU i uses NIC nic_of_gpu(i) (i / gpus_per_nic) over its own PCIe link "<node>-gpu<i>-pcie"
// (max(256, nic_gbps) Gbit/s: PCIe Gen4 x16, or Gen5 for faster NICs; never the bottleneck of one
// GPU). Inside a node every GPU pair has a direct edge: GPU link up, the node's crossbar
// "<node>-nvswitch" (or "<node>-pcie-switch"; FATPIPE: no sharing), GPU link down.
// Routing trap: Dijkstra counts links per edge and routes *through* hosts, so a cross-rail path
// could otherwise go over NVLink to a GPU of the other rail (NCCL's PXN) at the same cost as the
// spine path. Edge weights make the intended path strictly shortest: GPU pair 3 links, GPU-leaf 2
// (PCIe + NIC), leaf-spine 1 -> same rail 4 < alternatives, cross rail via spine 6 < via NVLink 7,
// same node 3 < via a shared NIC's leaf 4. The CPU host has one edge (CPU link + GPU PCIe) to each
// local GPU and reaches the fabric through a GPU's NIC.
// Hops: same node gpu, crossbar, gpu; same rail in a group gpu-pcie, nic, nic, gpu-pcie; other
// rail or other group: gpu-pcie, nic, rail uplink (up), rail uplink (down), nic, gpu-pcie.

namespace fleetsim {

namespace sg4 = simgrid::s4u;
using Dir = sg4::LinkInRoute::Direction;
using NetPoint = simgrid::kernel::routing::NetPoint;

namespace {

constexpr double kGbitToBytes = 1e9 / 8;    // Gbit/s -> B/s
constexpr double kNvlinkLatencyS = 250e-9;  // per NVLink/NVSwitch hop (GPU<->GPU = 2 hops = 0.5 us)
constexpr double kPcieLatencyS = 500e-9;    // per PCIe hop (GPU<->GPU through a switch = 1 us)
constexpr double kHostLinkGbps = 256;       // CPU <-> node switch: PCIe 4.0 x16, ~32 GB/s
constexpr double kCpuCoreFlops = 5e10;      // nominal 50 GFLOP/s per CPU core (host-side work)

sg4::SplitDuplexLink* duplex(sg4::NetZone* zone, const std::string& name, double bytes_per_s,
                             double latency) {
  auto* link = zone->create_split_duplex_link(name, bytes_per_s);
  link->set_latency(latency)->seal();
  return link;
}

// Connects a and b by one split-duplex link; a -> b uses the UP side.
void connect(sg4::NetZone* zone, NetPoint* a, NetPoint* b, sg4::Link* link) {
  zone->add_route(a, b, nullptr, nullptr, {sg4::LinkInRoute(link, Dir::UP)}, true);
}

struct BuiltLeaf {
  sg4::NetZone* zone = nullptr;
  NetPoint* router = nullptr;
};

// A leaf (or rail group) zone "leaf-<index>" under `parent`, with its router "<name><router_suffix>".
BuiltLeaf new_leaf_zone(int index, sg4::NetZone* parent, const std::string& router_suffix) {
  const std::string name = "leaf-" + std::to_string(index);
  BuiltLeaf b;
  b.zone = sg4::create_dijkstra_zone(name, true);
  b.zone->set_parent(parent);
  b.router = b.zone->create_router(name + router_suffix);
  return b;
}

// Calls build(leaf, first, last) for each leaf's node range [first, last) of spec.nodes.
template <typename F>
void for_each_leaf(const ClusterSpec& spec, F&& build) {
  const auto per_leaf = static_cast<std::size_t>(spec.network.nodes_per_leaf);
  for (int leaf = 0; leaf < spec.leaves(); ++leaf) {
    const std::size_t first = static_cast<std::size_t>(leaf) * per_leaf;
    build(leaf, first, std::min(first + per_leaf, spec.nodes.size()));
  }
}

// The node's CPU host (one core per 1000 cpu_milli, at least one).
sg4::Host* create_cpu(sg4::NetZone* zone, const NodeSpec& node) {
  const int cores = std::max(1, static_cast<int>(std::lround(node.cpu_milli / 1000.0)));
  return zone->create_host(node.name + "-cpu", kCpuCoreFlops)->set_core_count(cores)->seal();
}

// Builds leaf `leaf` (nodes [first, last) of spec.nodes) as a child of `parent`.
BuiltLeaf build_leaf(const ClusterSpec& spec, int leaf, std::size_t first, std::size_t last,
                     sg4::NetZone* parent, Platform& out) {
  sg4::NetZone* links = parent;  // the root zone: see "Link ownership" above
  const NetworkSpec& net = spec.network;
  BuiltLeaf b = new_leaf_zone(leaf, parent, "-router");

  const bool pcie = net.intra_node == IntraNode::kPcie;
  const double intra_bw = net.intra_node_gbps * kGbitToBytes;
  const double intra_lat = pcie ? kPcieLatencyS : kNvlinkLatencyS;
  for (std::size_t idx = first; idx < last; ++idx) {
    const NodeSpec& node = spec.nodes[idx];
    NodeHandles& h = out.nodes[idx];
    NetPoint* sw = b.zone->create_router(node.name + "-switch");

    if (node.gpus > 0) {
      NetPoint* attach = sw;
      if (pcie) {
        attach = b.zone->create_router(node.name + "-pcie");
        connect(b.zone, attach, sw, duplex(links, node.name + "-pcie-uplink", intra_bw, 0));
      }
      const double speed = gpu_spec(node.gpu).fp32_tflops * 1e12;
      h.gpus.reserve(static_cast<std::size_t>(node.gpus));
      for (int i = 0; i < node.gpus; ++i) {
        const std::string gpu_name = node.name + "-gpu" + std::to_string(i);
        sg4::Host* gpu = b.zone->create_host(gpu_name, speed)->seal();
        connect(b.zone, gpu->get_netpoint(), attach, duplex(links, gpu_name, intra_bw, intra_lat));
        h.gpus.push_back(gpu);
      }
    }

    h.cpu = create_cpu(b.zone, node);
    connect(b.zone, h.cpu->get_netpoint(), sw,
            duplex(links, node.name + "-cpu", kHostLinkGbps * kGbitToBytes, kPcieLatencyS));

    auto* nic = duplex(links, node.name + "-nic", net.nics_per_node * net.nic_gbps * kGbitToBytes,
                       net.link_latency_s);
    connect(b.zone, sw, b.router, nic);
    h.nic = nic->get_link_up();
    h.nics = {h.nic};
  }
  b.zone->seal();
  return b;
}

// 3-tier fabrics: leaf groups gathered into pods. A pod is a star zone "pod-<p>" under the root with
// its spine router "pod-<p>-spine-router" (in zone "pod-<p>-spine"); pods reach each other through one core
// uplink each, "pod-<p>-core", carrying the pod's leaf-group uplink capacity / core_oversubscription. 2-tier
// (leaves_per_pod = 0): no pods, every leaf group hangs from the root.
class Pods {
 public:
  Pods(const ClusterSpec& spec, sg4::NetZone* root, double group_uplink_bw) : root_(root) {
    const NetworkSpec& net = spec.network;
    per_pod_ = net.leaves_per_pod;
    if (per_pod_ <= 0) return;
    const int leaves = spec.leaves();
    for (int pod = 0; pod * per_pod_ < leaves; ++pod) {
      const std::string name = "pod-" + std::to_string(pod);
      sg4::NetZone* zone = sg4::create_star_zone(name);
      zone->set_parent(root);
      // SimGrid 3.32 routes to a gateway only through a child zone of the pod (a gateway directly in
      // the pod would need a local route from hosts two zones down), so the spine router gets a
      // zone of its own.
      sg4::NetZone* spine_zone = sg4::create_star_zone(name + "-spine");
      spine_zone->set_parent(zone);
      NetPoint* spine = spine_zone->create_router(name + "-spine-router");
      spine_zone->seal();
      zone->add_route(spine_zone->get_netpoint(), nullptr, spine, nullptr, {}, true);
      const int groups = std::min(per_pod_, leaves - pod * per_pod_);
      auto* core = duplex(root, name + "-core", groups * group_uplink_bw / net.core_oversubscription,
                          net.link_latency_s);
      root->add_route(zone->get_netpoint(), nullptr, spine, nullptr, {sg4::LinkInRoute(core, Dir::UP)});
      zones_.push_back(zone);
    }
  }
  /// The zone that holds leaf group `leaf`: its pod, or the root for a 2-tier fabric.
  sg4::NetZone* parent_of(int leaf) const {
    return per_pod_ > 0 ? zones_[static_cast<std::size_t>(leaf / per_pod_)] : root_;
  }
  void seal() const {
    for (auto* z : zones_) z->seal();
  }

 private:
  sg4::NetZone* root_;
  int per_pod_ = 0;
  std::vector<sg4::NetZone*> zones_;
};

Platform build_leaf_spine(const ClusterSpec& spec) {
  const NetworkSpec& net = spec.network;
  Platform p;
  p.root = sg4::create_star_zone("fabric");
  p.nodes.resize(spec.nodes.size());
  const double uplink_bw =
      net.nodes_per_leaf * net.nics_per_node * net.nic_gbps * kGbitToBytes / net.oversubscription;
  const Pods pods(spec, p.root, uplink_bw);

  for_each_leaf(spec, [&](int leaf, std::size_t first, std::size_t last) {
    sg4::NetZone* parent = pods.parent_of(leaf);
    BuiltLeaf b = build_leaf(spec, leaf, first, last, parent, p);
    auto* uplink = duplex(parent, b.zone->get_name() + "-uplink", uplink_bw, net.link_latency_s);
    parent->add_route(b.zone->get_netpoint(), nullptr, b.router, nullptr,
                      {sg4::LinkInRoute(uplink, Dir::UP)});
    p.leaf_uplinks.push_back(uplink->get_link_up());
  });
  pods.seal();
  p.root->seal();
  return p;
}

Platform build_fat_tree(const ClusterSpec& spec) {
  const NetworkSpec& net = spec.network;
  Platform p;
  p.nodes.resize(spec.nodes.size());
  const auto per_leaf = static_cast<std::size_t>(net.nodes_per_leaf);
  const auto leaves = static_cast<unsigned>(spec.leaves());
  const auto spines =
      static_cast<unsigned>(std::max(1L, std::lround(net.nodes_per_leaf / net.oversubscription)));

  auto set_netpoint = [&](sg4::NetZone* zone, const std::vector<unsigned long>& /*coord*/,
                          unsigned long id) -> std::pair<NetPoint*, NetPoint*> {
    const std::size_t first = id * per_leaf;
    const std::size_t last = std::min(first + per_leaf, spec.nodes.size());
    BuiltLeaf b = build_leaf(spec, static_cast<int>(id), first, last, zone, p);
    return {b.zone->get_netpoint(), b.router};
  };
  p.root = sg4::create_fatTree_zone("fabric", nullptr, sg4::FatTreeParams(1, {leaves}, {spines}, {1}),
                                    sg4::ClusterCallbacks(set_netpoint),
                                    net.nics_per_node * net.nic_gbps * kGbitToBytes, net.link_latency_s,
                                    sg4::Link::SharingPolicy::SPLITDUPLEX);
  p.root->seal();
  return p;
}

// Rail-optimized group `group` (nodes [first, last)) as a child of `parent`; see the header comment.
BuiltLeaf build_rail_group(const ClusterSpec& spec, int group, std::size_t first, std::size_t last,
                           sg4::NetZone* parent, Platform& out) {
  sg4::NetZone* links = parent;  // the root zone: see "Link ownership" above
  const NetworkSpec& net = spec.network;
  const std::string name = "leaf-" + std::to_string(group);
  BuiltLeaf b = new_leaf_zone(group, parent, "-spine");

  const int rails = net.nics_per_node;
  const double nic_bw = net.nic_gbps * kGbitToBytes;
  const double uplink_bw = net.nodes_per_leaf * nic_bw / net.oversubscription;
  std::vector<NetPoint*> rail_leaf(static_cast<std::size_t>(rails));
  for (int r = 0; r < rails; ++r) {
    const std::string leaf = name + "-rail" + std::to_string(r);
    rail_leaf[static_cast<std::size_t>(r)] = b.zone->create_router(leaf);
    auto* uplink = duplex(links, leaf + "-uplink", uplink_bw, net.link_latency_s);
    connect(b.zone, rail_leaf[static_cast<std::size_t>(r)], b.router, uplink);
    out.leaf_uplinks.push_back(uplink->get_link_up());
  }

  const bool pcie = net.intra_node == IntraNode::kPcie;
  const double intra_bw = net.intra_node_gbps * kGbitToBytes;
  const double intra_lat = pcie ? kPcieLatencyS : kNvlinkLatencyS;
  const double gpu_pcie_bw = std::max(kHostLinkGbps, net.nic_gbps) * kGbitToBytes;
  for (std::size_t idx = first; idx < last; ++idx) {
    const NodeSpec& node = spec.nodes[idx];
    NodeHandles& h = out.nodes[idx];
    std::vector<sg4::SplitDuplexLink*> nics;
    for (int r = 0; r < rails; ++r) {
      nics.push_back(duplex(links, node.name + "-nic" + std::to_string(r), nic_bw, net.link_latency_s));
      h.nics.push_back(nics.back()->get_link_up());
    }
    h.nic = h.nics.front();

    h.cpu = create_cpu(b.zone, node);
    auto* cpu_link = duplex(links, node.name + "-cpu", kHostLinkGbps * kGbitToBytes, kPcieLatencyS);
    if (node.gpus == 0) {  // a CPU-only node: its CPU sits on every rail through the NICs
      for (int r = 0; r < rails; ++r)
        b.zone->add_route(h.cpu->get_netpoint(), rail_leaf[static_cast<std::size_t>(r)], nullptr, nullptr,
                          {sg4::LinkInRoute(cpu_link, Dir::UP),
                           sg4::LinkInRoute(nics[static_cast<std::size_t>(r)], Dir::UP)},
                          true);
      continue;
    }

    sg4::Link* xbar = links->create_link(node.name + (pcie ? "-pcie-switch" : "-nvswitch"), intra_bw)
                          ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
                          ->seal();
    const double speed = gpu_spec(node.gpu).fp32_tflops * 1e12;
    std::vector<sg4::SplitDuplexLink*> gpu_links;
    for (int i = 0; i < node.gpus; ++i) {
      const std::string gpu_name = node.name + "-gpu" + std::to_string(i);
      sg4::Host* gpu = b.zone->create_host(gpu_name, speed)->seal();
      h.gpus.push_back(gpu);
      gpu_links.push_back(duplex(links, gpu_name, intra_bw, intra_lat));
      auto* gpu_pcie = duplex(links, gpu_name + "-pcie", gpu_pcie_bw, kPcieLatencyS);
      const auto r = static_cast<std::size_t>(spec.nic_of_gpu(i, node.gpus));
      b.zone->add_route(gpu->get_netpoint(), rail_leaf[r], nullptr, nullptr,
                        {sg4::LinkInRoute(gpu_pcie, Dir::UP), sg4::LinkInRoute(nics[r], Dir::UP)}, true);
      b.zone->add_route(h.cpu->get_netpoint(), gpu->get_netpoint(), nullptr, nullptr,
                        {sg4::LinkInRoute(cpu_link, Dir::UP), sg4::LinkInRoute(gpu_pcie, Dir::DOWN)}, true);
    }
    for (int i = 0; i < node.gpus; ++i)
      for (int j = i + 1; j < node.gpus; ++j)
        b.zone->add_route(
            h.gpus[static_cast<std::size_t>(i)]->get_netpoint(),
            h.gpus[static_cast<std::size_t>(j)]->get_netpoint(), nullptr, nullptr,
            {sg4::LinkInRoute(gpu_links[static_cast<std::size_t>(i)], Dir::UP), sg4::LinkInRoute(xbar),
             sg4::LinkInRoute(gpu_links[static_cast<std::size_t>(j)], Dir::DOWN)},
            true);
  }
  b.zone->seal();
  return b;
}

Platform build_rail_optimized(const ClusterSpec& spec) {
  const NetworkSpec& net = spec.network;
  Platform p;
  p.root = sg4::create_star_zone("fabric");
  p.nodes.resize(spec.nodes.size());
  // A group's uplink capacity: one uplink per rail leaf of nodes_per_leaf NICs / oversubscription.
  const Pods pods(
      spec, p.root,
      net.nics_per_node * net.nodes_per_leaf * net.nic_gbps * kGbitToBytes / net.oversubscription);
  for_each_leaf(spec, [&](int group, std::size_t first, std::size_t last) {
    sg4::NetZone* parent = pods.parent_of(group);
    BuiltLeaf b = build_rail_group(spec, group, first, last, parent, p);
    parent->add_route(b.zone->get_netpoint(), nullptr, b.router, nullptr, {});
  });
  pods.seal();
  p.root->seal();
  return p;
}

}  // namespace

namespace {
// The checks both builders share: a spec that expand_pools() accepted passes them.
void validate_spec(const ClusterSpec& spec) {
  if (spec.nodes.empty()) throw InputError("", 0, "cluster", "cannot build a platform without nodes");
  if (spec.network.nodes_per_leaf < 1 || spec.network.oversubscription < 1)
    throw InputError("", 0, "cluster.network", "invalid network: use expand_pools() to validate it");
  for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
    const NodeSpec& n = spec.nodes[i];
    if (n.leaf != static_cast<int>(i) / spec.network.nodes_per_leaf)
      throw InputError("", 0, "cluster.nodes",
                       "node '" + n.name + "' has leaf " + std::to_string(n.leaf) +
                           "; leaves are assigned in order (index / nodes_per_leaf)");
    // Names of our own SimGrid zones, routers and links must not clash with node names.
    if (n.name == "fabric" || n.name.starts_with("leaf-") || n.name.starts_with("pod-"))
      throw InputError("", 0, "cluster.nodes",
                       "node name '" + n.name + "' is reserved (fabric, leaf-*, pod-*)");
  }
}
}  // namespace

Platform build_platform(const ClusterSpec& spec) {
  validate_spec(spec);
  Platform p;
  switch (spec.network.topology) {
    case Topology::kFatTree:
      p = build_fat_tree(spec);
      break;
    case Topology::kRailOptimized:
      p = build_rail_optimized(spec);
      break;
    case Topology::kLeafSpine:
      p = build_leaf_spine(spec);
      break;
  }
  for (const NodeHandles& n : p.nodes) {
    p.control = n.cpu != nullptr ? n.cpu : (n.gpus.empty() ? nullptr : n.gpus.front());
    if (p.control != nullptr) break;
  }
  return p;
}

Platform build_control_platform(const ClusterSpec& spec) {
  validate_spec(spec);
  Platform p;
  p.root = sg4::create_empty_zone("control");
  p.control = p.root->create_host("control", kCpuCoreFlops)->seal();
  p.root->seal();
  return p;
}

void rerate_network(const NetworkSpec& built, const NetworkSpec& target) {
  const double nic = target.nic_gbps / built.nic_gbps;
  const double intra = target.intra_node_gbps / built.intra_node_gbps;
  if (nic == 1 && intra == 1) return;
  for (sg4::Link* l : sg4::Engine::get_instance()->get_all_links()) {
    const std::string name = l->get_name();
    const std::string tier = link_tier(name);
    if (name.find("loopback") != std::string::npos || tier == "cpu") continue;
    const bool gpu_pcie = name.find("-pcie_") != std::string::npos || name.ends_with("-pcie");
    if (tier == "intra" && gpu_pcie) {  // rail-optimized: a GPU's PCIe link to its NIC
      l->set_bandwidth(std::max(kHostLinkGbps, target.nic_gbps) * kGbitToBytes);
    } else if (tier == "nic" || tier == "leaf-uplink" || tier == "spine" || tier == "core") {
      l->set_bandwidth(l->get_bandwidth() * nic);
    } else {
      l->set_bandwidth(l->get_bandwidth() * intra);
    }
  }
}

}  // namespace fleetsim
