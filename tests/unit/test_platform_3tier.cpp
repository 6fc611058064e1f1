// 3-tier fabrics (network.leaves_per_pod > 0): leaf groups in pods whose spines reach the other pods
// through one core uplink each. Routes, core bandwidths and a transfer time, hand-derived on tiny
// leaf-spine and rail-optimized clusters; the spec's checks and the switch count for energy.
#include <doctest/doctest.h>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include <set>
#include <string>

#include "sim/platform/cluster_spec.hpp"
#include "sim/platform/platform.hpp"
#include "sim/platform/ring.hpp"
#include "tests/platform_util.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;
using namespace fleetsim::test;
namespace sg4 = simgrid::s4u;

namespace {

// 1 node per leaf, 2 leaves per pod: 4 nodes make 2 pods. 200 Gbit/s NICs, leaf 1:1, core 4:1.
NetworkSpec three_tier(Topology t) {
  NetworkSpec n;
  n.topology = t;
  n.nodes_per_leaf = 1;
  n.oversubscription = 1;
  n.leaves_per_pod = 2;
  n.core_oversubscription = 4;
  n.nic_gbps = 200;
  n.intra_node = IntraNode::kNvswitch;
  n.intra_node_gbps = 2400;
  n.link_latency_s = 1e-6;
  return n;
}

std::string cluster_error(NetworkSpec net) {
  try {
    expand_pools({pool("a", 4, 8, "H100")}, net, "c.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("3-tier leaf-spine: a route leaves its pod only through the two pods' core uplinks") {
  EngineArgs args;
  sg4::Engine e(&args.argc, args.argv());
  const Platform p =
      build_platform(expand_pools({pool("a", 4, 8, "H100")}, three_tier(Topology::kLeafSpine)));
  REQUIRE(p.nodes.size() == 4);
  // A pod's core uplink: 2 leaves x (1 node x 200 Gbit/s / 1) / 4 = 100 Gbit/s, both directions.
  CHECK(sg4::Link::by_name("pod-0-core_UP")->get_bandwidth() == doctest::Approx(100 * kGbit));
  CHECK(sg4::Link::by_name("pod-1-core_DOWN")->get_bandwidth() == doctest::Approx(100 * kGbit));
  CHECK(link_tier("pod-1-core_DOWN") == "core");

  // Same pod (leaves 0 and 1): both leaf uplinks, no core link; 4 fabric hops.
  Route r = route(p.nodes[0].gpus[0], p.nodes[1].gpus[0]);
  CHECK(r.links == std::set<std::string>{"a-0-gpu0_UP", "a-0-nic_UP", "leaf-0-uplink_UP",
                                         "leaf-1-uplink_DOWN", "a-1-nic_DOWN", "a-1-gpu0_DOWN"});
  CHECK(r.bottleneck == doctest::Approx(200 * kGbit));

  // Across pods (leaf 1 in pod 0 -> leaf 2 in pod 1): the core links are the bottleneck, 6 hops.
  r = route(p.nodes[1].gpus[3], p.nodes[2].gpus[3]);
  CHECK(r.links == std::set<std::string>{"a-1-gpu3_UP", "a-1-nic_UP", "leaf-1-uplink_UP", "pod-0-core_UP",
                                         "pod-1-core_DOWN", "leaf-2-uplink_DOWN", "a-2-nic_DOWN",
                                         "a-2-gpu3_DOWN"});
  CHECK(r.bottleneck == doctest::Approx(100 * kGbit));
  CHECK(r.latency == doctest::Approx(0.5e-6 + 6e-6));
}

TEST_CASE("3-tier leaf-spine: a 1 GB transfer across pods takes bytes over the core bandwidth") {
  EngineArgs args({"--cfg=network/model:CM02"});
  sg4::Engine e(&args.argc, args.argv());
  const Platform p =
      build_platform(expand_pools({pool("a", 4, 8, "H100")}, three_tier(Topology::kLeafSpine)));
  // 1e9 B over 100 Gbit/s = 12.5 GB/s: 0.08 s, plus 2 x 0.25 us (GPU links) + 6 x 1 us (fabric).
  sg4::CommPtr comm = sg4::Comm::sendto_async(p.nodes[0].gpus[0], p.nodes[3].gpus[0], 1e9);
  e.run();
  CHECK(comm->get_state() == sg4::Activity::State::FINISHED);
  CHECK(e.get_clock() == doctest::Approx(0.08 + 6.5e-6).epsilon(1e-9));
}

TEST_CASE("3-tier rail-optimized: rails meet at the pod spine, pods through the core") {
  EngineArgs args;
  sg4::Engine e(&args.argc, args.argv());
  NetworkSpec net = three_tier(Topology::kRailOptimized);
  net.nics_per_node = 8;
  net.nic_gbps = 400;
  const Platform p = build_platform(expand_pools({pool("a", 4, 8, "H100")}, net));
  // A group's uplink capacity is 8 rails x 1 node x 400 Gbit/s; a pod of 2 groups / 4 = 1,600 Gbit/s.
  CHECK(sg4::Link::by_name("pod-0-core_UP")->get_bandwidth() == doctest::Approx(1600 * kGbit));
  // Same rail, other pod: the rail leaf's uplink, then the core, and never another rail's NIC.
  const Route r = route(p.nodes[0].gpus[5], p.nodes[3].gpus[5]);
  CHECK(r.links.count("pod-0-core_UP") == 1);
  CHECK(r.links.count("pod-1-core_DOWN") == 1);
  CHECK(r.links.count("a-0-nic5_UP") == 1);
  CHECK(r.links.count("a-3-nic5_DOWN") == 1);
  CHECK(r.bottleneck == doctest::Approx(400 * kGbit));  // one NIC, below the core's 1,600
  // Inside pod 0 no core link is crossed.
  CHECK(route(p.nodes[0].gpus[5], p.nodes[1].gpus[5]).links.count("pod-0-core_UP") == 0);
}

TEST_CASE("3-tier: bad pod keys name the key, and the core switches count for energy") {
  NetworkSpec net = three_tier(Topology::kLeafSpine);
  net.leaves_per_pod = -1;
  CHECK(cluster_error(net).find("cluster.network.leaves_per_pod") != std::string::npos);
  net = three_tier(Topology::kLeafSpine);
  net.core_oversubscription = 0.5;
  CHECK(cluster_error(net).find("cluster.network.core_oversubscription") != std::string::npos);
  net = three_tier(Topology::kFatTree);
  CHECK(cluster_error(net).find("not fat-tree") != std::string::npos);

  // 4 leaf switches with 1 up port each (1 node x 1 NIC / 1); 64-port switches: 1 spine switch;
  // core ports = 4 / 4 = 1, so 1 core switch. A 2-tier fabric has none.
  net = three_tier(Topology::kLeafSpine);
  const FabricInventory inv = fabric_inventory(expand_pools({pool("a", 4, 8, "H100")}, net));
  CHECK(inv.leaf_switches == 4);
  CHECK(inv.spine_switches == 1);
  CHECK(inv.core_switches == 1);
  net.leaves_per_pod = 0;
  CHECK(fabric_inventory(expand_pools({pool("a", 4, 8, "H100")}, net)).core_switches == 0);
}
