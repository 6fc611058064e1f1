// Rail-optimized fabrics: NIC r of every node of a group goes to the rail-r leaf, rail leaves meet
// at the group's spine. Routes between same-rail GPUs stay on the leaf, cross-rail and cross-group
// routes climb to the spine, the narrowest link is the hand-computed one, transfers take
// bytes / bottleneck + latency, and the fabric inventory counts NICs and switches for energy.
// Each TEST_CASE that builds a platform runs in its own process with exactly one Engine.
#include <doctest/doctest.h>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "sim/app/scenario.hpp"
#include "sim/platform/cluster_spec.hpp"
#include "sim/platform/platform.hpp"
#include "tests/platform_util.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;
using namespace fleetsim::test;
namespace sg4 = simgrid::s4u;

namespace {

bool touches_spine(const Route& r) {
  return std::any_of(r.links.begin(), r.links.end(),
                     [](const std::string& l) { return l.find("uplink") != std::string::npos; });
}

/// nodes_per_leaf nodes per group, 8 rails of 200 Gbit/s, uplink per rail leaf =
/// nodes_per_leaf * 200 / oversubscription.
NetworkSpec rail_net(int nodes_per_leaf, double oversubscription, int nics = 8, int gpus_per_nic = 0) {
  NetworkSpec n;
  n.topology = Topology::kRailOptimized;
  n.nodes_per_leaf = nodes_per_leaf;
  n.oversubscription = oversubscription;
  n.nic_gbps = 200;
  n.nics_per_node = nics;
  n.gpus_per_nic = gpus_per_nic;
  n.intra_node = IntraNode::kNvswitch;
  n.intra_node_gbps = 4800;
  n.link_latency_s = 1e-6;
  return n;
}

}  // namespace

TEST_CASE("rail-optimized: same-rail routes stay on the leaf, cross-rail and cross-group use the spine") {
  EngineArgs args;
  sg4::Engine e(&args.argc, args.argv());
  // 4 nodes x 8 A100, 2 nodes per group (2 groups), 8 rails, oversubscription 2:
  // rail uplink = 2 * 200 / 2 = 200 Gbit/s.
  const ClusterSpec c = expand_pools({pool("a", 4, 8, "A100-80GB")}, rail_net(2, 2));
  const Platform p = build_platform(c);
  REQUIRE(p.nodes.size() == 4);
  CHECK(e.get_host_count() == 4 * 9);
  REQUIRE(p.leaf_uplinks.size() == 2 * 8);
  CHECK(p.leaf_uplinks[8 + 3]->get_name() == "leaf-1-rail3-uplink_UP");
  CHECK(p.leaf_uplinks[0]->get_bandwidth() == doctest::Approx(200 * kGbit));
  REQUIRE(p.nodes[1].nics.size() == 8);
  CHECK(p.nodes[1].nics[5]->get_name() == "a-1-nic5_UP");
  CHECK(p.nodes[1].nic == p.nodes[1].nics[0]);

  // Same node: GPU link up, NVSwitch crossbar, GPU link down; 600 GB/s; 2 x 0.25 us.
  Route r = route(p.nodes[0].gpus[0], p.nodes[0].gpus[1]);
  CHECK(r.links == std::set<std::string>{"a-0-gpu0_UP", "a-0-nvswitch", "a-0-gpu1_DOWN"});
  CHECK(r.bottleneck == doctest::Approx(4800 * kGbit));
  CHECK(r.latency == doctest::Approx(0.5e-6));

  // Same rail (3), other node of the group: PCIe, NIC 3, NIC 3, PCIe: leaf only, no spine.
  r = route(p.nodes[0].gpus[3], p.nodes[1].gpus[3]);
  CHECK(r.links ==
        std::set<std::string>{"a-0-gpu3-pcie_UP", "a-0-nic3_UP", "a-1-nic3_DOWN", "a-1-gpu3-pcie_DOWN"});
  CHECK_FALSE(touches_spine(r));
  CHECK(r.bottleneck == doctest::Approx(200 * kGbit));     // the NIC (PCIe is 256 Gbit/s)
  CHECK(r.latency == doctest::Approx(2 * 0.5e-6 + 2e-6));  // 2 PCIe hops + 2 fabric hops

  // Cross rail (0 -> 1) in the group: up rail 0's uplink to the spine, down rail 1's; not over
  // NVLink to the other rail's GPU.
  r = route(p.nodes[0].gpus[0], p.nodes[1].gpus[1]);
  CHECK(r.links == std::set<std::string>{"a-0-gpu0-pcie_UP", "a-0-nic0_UP", "leaf-0-rail0-uplink_UP",
                                         "leaf-0-rail1-uplink_DOWN", "a-1-nic1_DOWN", "a-1-gpu1-pcie_DOWN"});
  CHECK(r.bottleneck == doctest::Approx(200 * kGbit));
  CHECK(r.latency == doctest::Approx(2 * 0.5e-6 + 4e-6));

  // Same rail, other group: through both groups' rail-2 uplinks.
  r = route(p.nodes[1].gpus[2], p.nodes[3].gpus[2]);
  CHECK(r.links == std::set<std::string>{"a-1-gpu2-pcie_UP", "a-1-nic2_UP", "leaf-0-rail2-uplink_UP",
                                         "leaf-1-rail2-uplink_DOWN", "a-3-nic2_DOWN", "a-3-gpu2-pcie_DOWN"});

  // Every GPU pair of a node goes through the crossbar only, every same-rail pair in a group
  // through the leaf only.
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      if (i == j) continue;
      const Route in = route(p.nodes[2].gpus[i], p.nodes[2].gpus[j]);
      CHECK(in.links.size() == 3);
      CHECK(in.links.count("a-2-nvswitch") == 1);
    }
  for (int g = 0; g < 8; ++g) CHECK_FALSE(touches_spine(route(p.nodes[2].gpus[g], p.nodes[3].gpus[g])));

  // The CPU host reaches its GPUs over PCIe.
  r = route(p.nodes[0].cpu, p.nodes[0].gpus[4]);
  CHECK(r.links == std::set<std::string>{"a-0-cpu_UP", "a-0-gpu4-pcie_DOWN"});
}

TEST_CASE("rail-optimized: GPUs sharing a NIC share its rail") {
  EngineArgs args;
  sg4::Engine e(&args.argc, args.argv());
  // 4 NICs, 2 GPUs per NIC: GPUs 0,1 on rail 0, ..., 6,7 on rail 3.
  const ClusterSpec c = expand_pools({pool("a", 2, 8, "A100-80GB")}, rail_net(2, 1, 4, 2));
  CHECK(c.nic_of_gpu(1, 8) == 0);
  CHECK(c.nic_of_gpu(7, 8) == 3);
  const Platform p = build_platform(c);
  REQUIRE(p.leaf_uplinks.size() == 4);
  // GPU 1 of node 0 to GPU 0 of node 1: both on rail 0 -> leaf only.
  Route r = route(p.nodes[0].gpus[1], p.nodes[1].gpus[0]);
  CHECK(r.links ==
        std::set<std::string>{"a-0-gpu1-pcie_UP", "a-0-nic0_UP", "a-1-nic0_DOWN", "a-1-gpu0-pcie_DOWN"});
  // GPUs 0 and 1 of one node share NIC 0 but talk over NVSwitch, not through the leaf.
  r = route(p.nodes[0].gpus[0], p.nodes[0].gpus[1]);
  CHECK(r.links == std::set<std::string>{"a-0-gpu0_UP", "a-0-nvswitch", "a-0-gpu1_DOWN"});
  // GPU 2 (rail 1) to GPU 7 (rail 3) of another node: through the spine.
  CHECK(touches_spine(route(p.nodes[0].gpus[2], p.nodes[1].gpus[7])));
}

TEST_CASE("rail-optimized: a 1 GB transfer takes bytes / bottleneck + latency") {
  // CM02: no LV08 correction factors, so the time is the textbook one.
  EngineArgs args({"--cfg=network/model:CM02"});
  sg4::Engine e(&args.argc, args.argv());
  // Oversubscription 4: rail uplink = 2 * 200 / 4 = 100 Gbit/s = 12.5 GB/s < NIC (25 GB/s).
  const Platform p = build_platform(expand_pools({pool("a", 2, 8, "A100-80GB")}, rail_net(2, 4)));
  // Same rail: bottleneck the NIC, 25e9 B/s; latency 2 x 0.5 us PCIe + 2 x 1 us = 3 us.
  //   1e9 / 25e9 + 3e-6 = 0.040003 s.
  sg4::CommPtr same = sg4::Comm::sendto_async(p.nodes[0].gpus[5], p.nodes[1].gpus[5], 1e9);
  e.run();
  CHECK(same->get_state() == sg4::Activity::State::FINISHED);
  CHECK(e.get_clock() == doctest::Approx(0.040003).epsilon(1e-9));
  // Cross rail: bottleneck the rail uplink, 12.5e9 B/s; latency 1 us + 4 us = 5 us.
  //   0.040003 + 1e9 / 12.5e9 + 5e-6 = 0.040003 + 0.080005 = 0.120008 s.
  sg4::CommPtr cross = sg4::Comm::sendto_async(p.nodes[0].gpus[5], p.nodes[1].gpus[6], 1e9);
  e.run();
  CHECK(cross->get_state() == sg4::Activity::State::FINISHED);
  CHECK(e.get_clock() == doctest::Approx(0.120008).epsilon(1e-9));
}

TEST_CASE("rail-optimized: two cross-rail flows from one rail leaf share its uplink") {
  EngineArgs args({"--cfg=network/model:CM02"});
  sg4::Engine e(&args.argc, args.argv());
  const Platform p = build_platform(expand_pools({pool("a", 2, 8, "A100-80GB")}, rail_net(2, 4)));
  // Rail-0 GPUs of both nodes send 1 GB to rail-1 GPUs: both climb leaf-0-rail0-uplink (12.5 GB/s),
  // each gets 6.25 GB/s: 1e9 / 6.25e9 + 5e-6 = 0.160005 s. A same-rail flow meanwhile is unaffected.
  sg4::CommPtr a = sg4::Comm::sendto_async(p.nodes[0].gpus[0], p.nodes[1].gpus[1], 1e9);
  sg4::CommPtr b = sg4::Comm::sendto_async(p.nodes[1].gpus[0], p.nodes[0].gpus[1], 1e9);
  sg4::CommPtr c = sg4::Comm::sendto_async(p.nodes[0].gpus[4], p.nodes[1].gpus[4], 1e9);
  e.run();
  CHECK(e.get_clock() == doctest::Approx(0.160005).epsilon(1e-9));
  CHECK(a->get_finish_time() == doctest::Approx(0.160005).epsilon(1e-9));
  CHECK(b->get_finish_time() == doctest::Approx(0.160005).epsilon(1e-9));
  CHECK(c->get_finish_time() == doctest::Approx(0.040003).epsilon(1e-9));
}

TEST_CASE("rail-optimized: a 1,024-GPU H100 cluster builds fast with the expected shape") {
  EngineArgs args;
  sg4::Engine e(&args.argc, args.argv());
  NetworkSpec net = rail_net(32, 1);
  net.nic_gbps = 400;
  const auto t0 = std::chrono::steady_clock::now();
  const Platform p = build_platform(expand_pools({pool("n", 128, 8, "H100")}, net));
  const Route r = route(p.nodes.front().gpus.front(), p.nodes.back().gpus.back());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(e.get_host_count() == 128 * 9);
  CHECK(p.leaf_uplinks.size() == 4 * 8);
  CHECK(r.links.size() == 6);
  CHECK(r.bottleneck == doctest::Approx(400 * kGbit));
  CHECK(s < 5.0);
}

// ---------------------------------------------------------------- no engine

TEST_CASE("rail-optimized: fabric inventory counts NICs, rail leaves and spines") {
  // 20 nodes, one group, 8 rails, non-blocking, 40-port switches: 8 leaves, each 20 uplinks ->
  // ceil(160 / 40) = 4 spines; 160 NICs.
  NetworkSpec net = rail_net(20, 1);
  net.switch_ports = 40;
  FabricInventory inv = fabric_inventory(expand_pools({pool("a", 20, 8, "A100-80GB")}, net));
  CHECK(inv.nics == 160);
  CHECK(inv.leaf_switches == 8);
  CHECK(inv.spine_switches == 4);
  // Leaf-spine, 5 nodes, 2 per leaf (3 leaves), 1 NIC, oversubscription 2: 1 uplink port per leaf.
  NetworkSpec ls = rail_net(2, 2, 1);
  ls.topology = Topology::kLeafSpine;
  inv = fabric_inventory(expand_pools({pool("a", 5, 8, "A100-80GB")}, ls));
  CHECK(inv.nics == 5);
  CHECK(inv.leaf_switches == 3);
  CHECK(inv.spine_switches == 1);
  // One leaf: no spine.
  inv = fabric_inventory(expand_pools({pool("a", 2, 8, "A100-80GB")}, ls));
  CHECK(inv.leaf_switches == 1);
  CHECK(inv.spine_switches == 0);
}

TEST_CASE("rail-optimized: NIC keys are validated and named") {
  auto error_key = [](const NetworkSpec& net) -> std::string {
    try {
      expand_pools({pool("a", 2, 8, "A100-80GB")}, net, "c.toml");
    } catch (const InputError& e) {
      return e.field();
    }
    return "";
  };
  CHECK(error_key(rail_net(2, 1, 2, 2)) == "cluster.network.gpus_per_nic");  // 2 x 2 < 8 GPUs
  CHECK(error_key(rail_net(2, 1, 0)) == "cluster.network.nics_per_node");
  CHECK(error_key(rail_net(2, 1, 8, -1)) == "cluster.network.gpus_per_nic");
  NetworkSpec bad = rail_net(2, 1);
  bad.switch_ports = 1;
  CHECK(error_key(bad) == "cluster.network.switch_ports");
  CHECK(error_key(rail_net(2, 1, 3)) == "");  // auto: ceil(8 / 3) = 3 GPUs per NIC
  CHECK(to_string(Topology::kRailOptimized) == "rail-optimized");
}

TEST_CASE("rail-optimized: scenario keys parse and an unknown topology lists rail-optimized") {
  const std::string base =
      "[cluster]\n[[cluster.pool]]\nnodes = 4\n[workload]\nformat = \"synthetic\"\n"
      "[cluster.network]\n";
  const Scenario s = parse_scenario(
      base + "topology = \"rail-optimized\"\nnics_per_node = 4\ngpus_per_nic = 2\nswitch_ports = 40\n",
      "s.toml", ".");
  CHECK(s.cluster.network.topology == Topology::kRailOptimized);
  CHECK(s.cluster.network.nics_per_node == 4);
  CHECK(s.cluster.network.gpus_per_nic == 2);
  CHECK(s.cluster.network.switch_ports == 40);
  try {
    parse_scenario(base + "topology = \"rails\"\n", "s.toml", ".");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.field() == "cluster.network.topology");
    CHECK(std::string(e.what()).find("rail-optimized") != std::string::npos);
  }
}
