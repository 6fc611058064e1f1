// Cluster specs (pools, openb node lists) and the SimGrid platform built from them: routes, link
// bandwidths and latencies inside a node, across a leaf and across the spine, for leaf-spine and
// fat-tree fabrics. Each TEST_CASE runs in its own process (SimGrid's engine is one per process), and
// each one that builds a platform creates exactly one Engine.
#include <doctest/doctest.h>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "models/hardware/gpu_catalog.hpp"
#include "sim/platform/cluster_spec.hpp"
#include "sim/platform/platform.hpp"
#include "tests/platform_util.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;
using namespace fleetsim::test;
namespace sg4 = simgrid::s4u;

namespace {

double bandwidth(const std::string& link) {
  return sg4::Link::by_name(link)->get_bandwidth();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

NetworkSpec small_net(Topology t) {
  NetworkSpec n;
  n.topology = t;
  n.nodes_per_leaf = 2;
  n.oversubscription = 2;
  n.nic_gbps = 200;
  n.intra_node = IntraNode::kNvswitch;
  n.intra_node_gbps = 2400;
  n.link_latency_s = 1e-6;
  return n;
}

InputError expand_error(std::vector<PoolSpec> pools, const NetworkSpec& net) {
  try {
    expand_pools(std::move(pools), net, "cluster.toml");
  } catch (const InputError& e) {
    return e;
  }
  FAIL("expand_pools did not throw");
  return InputError("", 0, "", "");
}

InputError openb_error(const std::string& path) {
  try {
    read_openb_nodes(path, NetworkSpec{});
  } catch (const InputError& e) {
    return e;
  }
  FAIL("read_openb_nodes did not throw for " << path);
  return InputError("", 0, "", "");
}

std::string fixture(const std::string& name) {
  return std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/platform/" + name;
}

}  // namespace

// ---------------------------------------------------------------- cluster specs (no engine)

TEST_CASE("cluster spec: pools expand into zero-padded nodes with leaves in order") {
  NetworkSpec net;
  net.nodes_per_leaf = 4;
  const ClusterSpec c = expand_pools({pool("a100", 10, 8, "a100-80gb"), pool("t4", 3, 4, "T4")}, net);
  REQUIRE(c.nodes.size() == 13);
  CHECK(c.pools[0].gpu == "A100-80GB");  // canonicalised
  CHECK(c.nodes[0].name == "a100-0");
  CHECK(c.nodes[9].name == "a100-9");
  CHECK(c.nodes[10].name == "t4-0");
  CHECK(c.nodes[10].pool == 1);
  CHECK(c.nodes[10].gpu == "T4");
  CHECK(c.nodes[10].gpus == 4);
  CHECK(c.nodes[0].cpu_milli == 64000);
  CHECK(c.nodes[0].memory_mib == 512 * 1024);
  CHECK(c.nodes[3].leaf == 0);
  CHECK(c.nodes[4].leaf == 1);
  CHECK(c.nodes[12].leaf == 3);
  CHECK(c.leaves() == 4);
  CHECK(c.total_gpus() == 92);

  const ClusterSpec big = expand_pools({pool("n", 1250, 8, "H100")}, net);
  CHECK(big.nodes.front().name == "n-0000");
  CHECK(big.nodes.back().name == "n-1249");
  CHECK(big.total_gpus() == 10000);
}

TEST_CASE("cluster spec: bad pools and networks raise InputError naming the key") {
  const NetworkSpec net;
  auto e = expand_error({pool("a", 2, 8, "A100-80G")}, net);
  CHECK(e.field() == "cluster.pool.0.gpu");
  CHECK(e.file() == "cluster.toml");
  CHECK(contains(e.what(), "unknown GPU model 'A100-80G' (did you mean 'A100-80GB'?)"));

  e = expand_error({pool("a", 1, 8, "T4"), pool("b", 0, 8, "T4")}, net);
  CHECK(e.field() == "cluster.pool.1.nodes");
  CHECK(contains(e.what(), "must be >= 1"));

  CHECK(expand_error({}, net).field() == "cluster.pool");
  CHECK(expand_error({pool("a", 1, 65, "T4")}, net).field() == "cluster.pool.0.gpus_per_node");
  CHECK(expand_error({pool("a", 1, -1, "T4")}, net).field() == "cluster.pool.0.gpus_per_node");
  CHECK(expand_error({pool("a", 1, 8, "T4"), pool("A", 1, 8, "T4")}, net).field() == "cluster.pool.1.name");
  CHECK(expand_error({pool("", 1, 8, "T4")}, net).field() == "cluster.pool.0.name");
  CHECK(expand_error({pool("leaf", 1, 8, "T4")}, net).field() == "cluster.pool.0.name");
  auto p = pool("a", 1, 8, "T4");
  p.cpus_per_node = 0;
  CHECK(expand_error({p}, net).field() == "cluster.pool.0.cpus_per_node");
  p = pool("a", 1, 8, "T4");
  p.memory_gib = 0;
  CHECK(expand_error({p}, net).field() == "cluster.pool.0.memory_gib");

  NetworkSpec bad = net;
  bad.oversubscription = 0.5;
  e = expand_error({pool("a", 1, 8, "T4")}, bad);
  CHECK(e.field() == "cluster.network.oversubscription");
  CHECK(contains(e.what(), "must be >= 1"));
  bad = net;
  bad.nodes_per_leaf = 0;
  CHECK(expand_error({pool("a", 1, 8, "T4")}, bad).field() == "cluster.network.nodes_per_leaf");
  bad = net;
  bad.nic_gbps = 0;
  CHECK(expand_error({pool("a", 1, 8, "T4")}, bad).field() == "cluster.network.nic_gbps");
  bad = net;
  bad.intra_node_gbps = -1;
  CHECK(expand_error({pool("a", 1, 8, "T4")}, bad).field() == "cluster.network.intra_node_gbps");
}

TEST_CASE("cluster spec: a CPU-only pool needs no GPU model, a cluster without GPUs is refused") {
  const ClusterSpec c = expand_pools({pool("gpu", 1, 8, "T4"), pool("cpu", 2, 0, "")}, NetworkSpec{});
  CHECK(c.total_gpus() == 8);
  CHECK(c.nodes[1].gpu.empty());
  CHECK(expand_error({pool("cpu", 2, 0, "")}, NetworkSpec{}).field() == "cluster.pool.0.gpus_per_node");
}

TEST_CASE("cluster spec: enum names") {
  CHECK(to_string(Topology::kLeafSpine) == "leaf-spine");
  CHECK(to_string(Topology::kFatTree) == "fat-tree");
  CHECK(to_string(IntraNode::kNvlink) == "nvlink");
  CHECK(to_string(IntraNode::kNvswitch) == "nvswitch");
  CHECK(to_string(IntraNode::kPcie) == "pcie");
}

TEST_CASE("openb nodes: fixture gives one pool per canonical GPU model") {
  const ClusterSpec c = read_openb_nodes(fixture("openb_nodes_small.csv"), NetworkSpec{});
  REQUIRE(c.nodes.size() == 7);
  CHECK(c.total_gpus() == 32);
  std::vector<std::string> pools;
  for (const auto& p : c.pools) pools.push_back(p.name);
  CHECK(pools == std::vector<std::string>{"P100", "G2", "V100-16GB", "V100", "T4", "cpu"});
  CHECK(c.pools[1].nodes == 2);
  CHECK(c.pools[1].gpus_per_node == 8);
  CHECK(c.pools[1].cpus_per_node == 96);
  CHECK(c.nodes[0].name == "n-00");
  CHECK(c.nodes[2].gpu == "V100-16GB");
  CHECK(c.nodes[5].gpus == 0);
  CHECK(c.nodes[5].gpu.empty());
  CHECK(c.nodes[5].pool == 5);
  CHECK(c.nodes[6].pool == 1);
  CHECK(c.nodes[3].memory_mib == 786432);
  CHECK(c.nodes[4].cpu_milli == 104000);
}

TEST_CASE("openb nodes: bad rows name file, line and field") {
  auto e = openb_error(fixture("openb_nodes_unknown_model.csv"));
  CHECK(e.line() == 3);
  CHECK(e.field() == "model");
  CHECK(contains(e.file(), "openb_nodes_unknown_model.csv"));
  CHECK(contains(e.what(), "unknown GPU model 'V100M61' (did you mean"));

  e = openb_error(fixture("openb_nodes_bad_gpu.csv"));
  CHECK(e.line() == 3);
  CHECK(e.field() == "gpu");

  e = openb_error(fixture("openb_nodes_missing_column.csv"));
  CHECK(e.line() == 1);
  CHECK(e.field() == "model");

  e = openb_error(fixture("openb_nodes_duplicate.csv"));
  CHECK(e.line() == 3);
  CHECK(e.field() == "sn");

  e = openb_error(fixture("no_such_file.csv"));
  CHECK(contains(e.what(), "cannot open"));
}

TEST_CASE("openb nodes: the real openb GPU node list builds a platform") {
  const std::string path =
      fleetsim::test::shared_dir() + "/traces/alibaba-gpu-2023/openb_node_list_gpu_node.csv";
  fleetsim::test::require_shared("traces/alibaba-gpu-2023/openb_node_list_gpu_node.csv");
  const ClusterSpec c = read_openb_nodes(path, NetworkSpec{});
  CHECK(c.nodes.size() == 1213);
  CHECK(c.total_gpus() == 6212);
  std::set<std::string> models;
  for (const auto& p : c.pools) models.insert(p.name);
  CHECK(models == std::set<std::string>{"A10", "G2", "G3", "P100", "T4", "V100", "V100-16GB"});

  EngineArgs args;
  sg4::Engine e(&args.argc, args.argv());
  const Platform p = build_platform(c);
  CHECK(e.get_host_count() == 6212 + 1213);
  REQUIRE(p.nodes.size() == 1213);
  CHECK(p.nodes[0].gpus.size() == 2);
  CHECK(p.nodes[0].gpus[0]->get_speed() == doctest::Approx(gpu_spec("P100").fp32_tflops * 1e12));
}

// ---------------------------------------------------------------- platforms (one engine per case)

TEST_CASE("platform: leaf-spine routes inside a node, across a leaf and across the spine") {
  EngineArgs args;
  sg4::Engine e(&args.argc, args.argv());
  // 2 nodes per leaf, oversubscription 2, 200 Gbit/s NICs, 2400 Gbit/s NVSwitch links.
  const ClusterSpec c = expand_pools({pool("a", 5, 8, "A100-80GB")}, small_net(Topology::kLeafSpine));
  const Platform p = build_platform(c);
  REQUIRE(p.nodes.size() == 5);
  REQUIRE(p.leaf_uplinks.size() == 3);
  CHECK(e.get_host_count() == 5 * 9);
  CHECK(p.nodes[0].gpus.size() == 8);
  CHECK(p.nodes[0].cpu->get_name() == "a-0-cpu");
  CHECK(p.nodes[0].gpus[3]->get_name() == "a-0-gpu3");
  CHECK(p.nodes[0].gpus[0]->get_speed() == doctest::Approx(19.5e12));
  CHECK(p.nodes[0].nic->get_name() == "a-0-nic_UP");

  // Uplink of a leaf: nodes_per_leaf * nic / oversubscription = 2 * 200 / 2 = 200 Gbit/s = 25 GB/s.
  CHECK(p.leaf_uplinks[0]->get_name() == "leaf-0-uplink_UP");
  CHECK(p.leaf_uplinks[0]->get_bandwidth() == doctest::Approx(2 * 200 * kGbit / 2));
  CHECK(bandwidth("leaf-2-uplink_DOWN") == doctest::Approx(25e9));

  // Same node: GPU link up, GPU link down (NVSwitch crossbar), 2 x 0.25 us.
  Route r = route(p.nodes[0].gpus[0], p.nodes[0].gpus[1]);
  CHECK(r.links == std::set<std::string>{"a-0-gpu0_UP", "a-0-gpu1_DOWN"});
  CHECK(r.bottleneck == doctest::Approx(2400 * kGbit));
  CHECK(r.latency == doctest::Approx(0.5e-6));

  // Same leaf (nodes 0 and 1): through both NICs, not the uplink.
  r = route(p.nodes[0].gpus[0], p.nodes[1].gpus[5]);
  CHECK(r.links == std::set<std::string>{"a-0-gpu0_UP", "a-0-nic_UP", "a-1-nic_DOWN", "a-1-gpu5_DOWN"});
  CHECK(r.bottleneck == doctest::Approx(200 * kGbit));
  CHECK(r.latency == doctest::Approx(0.5e-6 + 2e-6));

  // Across the spine (leaf 0 -> leaf 2): both leaves' uplinks.
  r = route(p.nodes[1].gpus[7], p.nodes[4].gpus[2]);
  CHECK(r.links == std::set<std::string>{"a-1-gpu7_UP", "a-1-nic_UP", "leaf-0-uplink_UP",
                                         "leaf-2-uplink_DOWN", "a-4-nic_DOWN", "a-4-gpu2_DOWN"});
  CHECK(r.latency == doctest::Approx(0.5e-6 + 4e-6));

  // The CPU host reaches the fabric through its PCIe link and the NIC.
  r = route(p.nodes[2].cpu, p.nodes[0].gpus[0]);
  CHECK(r.links.count("a-2-cpu_UP") == 1);
  CHECK(r.links.count("leaf-1-uplink_UP") == 1);
}

TEST_CASE("platform: leaf-spine oversubscription limits the uplink below the NICs") {
  EngineArgs args;
  sg4::Engine e(&args.argc, args.argv());
  NetworkSpec net = small_net(Topology::kLeafSpine);
  net.nodes_per_leaf = 4;
  net.oversubscription = 8;  // uplink = 4 * 200 / 8 = 100 Gbit/s < one NIC
  const Platform p = build_platform(expand_pools({pool("a", 8, 4, "H100")}, net));
  REQUIRE(p.leaf_uplinks.size() == 2);
  CHECK(p.leaf_uplinks[1]->get_bandwidth() == doctest::Approx(100 * kGbit));
  const Route r = route(p.nodes[0].gpus[0], p.nodes[7].gpus[0]);
  CHECK(r.bottleneck == doctest::Approx(100 * kGbit));
}

TEST_CASE("platform: fat-tree routes inside a node, across a leaf and across the spine") {
  EngineArgs args;
  sg4::Engine e(&args.argc, args.argv());
  NetworkSpec net = small_net(Topology::kFatTree);
  net.nodes_per_leaf = 4;
  net.oversubscription = 2;  // 2 spines per leaf
  const ClusterSpec c = expand_pools({pool("h", 10, 8, "H100")}, net);
  const Platform p = build_platform(c);
  REQUIRE(p.nodes.size() == 10);
  CHECK(p.leaf_uplinks.empty());
  CHECK(e.get_host_count() == 10 * 9);
  // SimGrid fat-tree links: 3 leaves x 2 spines, each split-duplex (UP + DOWN).
  int fabric_links = 0;
  for (const auto* l : e.get_all_links())
    if (l->get_name().starts_with("link_from_")) {
      ++fabric_links;
      CHECK(l->get_bandwidth() == doctest::Approx(200 * kGbit));
    }
  CHECK(fabric_links == 3 * 2 * 2);

  Route r = route(p.nodes[0].gpus[0], p.nodes[0].gpus[7]);
  CHECK(r.links == std::set<std::string>{"h-0-gpu0_UP", "h-0-gpu7_DOWN"});
  CHECK(r.latency == doctest::Approx(0.5e-6));

  r = route(p.nodes[0].gpus[0], p.nodes[3].gpus[1]);  // nodes 0..3 share leaf 0
  CHECK(r.links == std::set<std::string>{"h-0-gpu0_UP", "h-0-nic_UP", "h-3-nic_DOWN", "h-3-gpu1_DOWN"});
  CHECK(r.latency == doctest::Approx(2.5e-6));

  r = route(p.nodes[1].gpus[2], p.nodes[9].gpus[3]);  // leaf 0 -> leaf 2 through one spine
  CHECK(r.links.size() == 6);
  CHECK(r.links.count("h-1-nic_UP") == 1);
  CHECK(r.links.count("h-9-nic_DOWN") == 1);
  int spine_hops = 0;
  for (const auto& name : r.links)
    if (name.starts_with("link_from_")) {
      ++spine_hops;
      CHECK(bandwidth(name) == doctest::Approx(200 * kGbit));
    }
  CHECK(spine_hops == 2);
  CHECK(r.bottleneck == doctest::Approx(200 * kGbit));
  CHECK(r.latency == doctest::Approx(4.5e-6));
}

TEST_CASE("platform: two GPU pools in one cluster get per-pool host speeds") {
  EngineArgs args;
  sg4::Engine e(&args.argc, args.argv());
  NetworkSpec net;
  net.nodes_per_leaf = 2;
  const ClusterSpec c = expand_pools({pool("big", 2, 8, "A100-80GB"), pool("small", 3, 4, "T4")}, net);
  const Platform p = build_platform(c);
  REQUIRE(p.nodes.size() == 5);
  CHECK(p.nodes[0].gpus.size() == 8);
  CHECK(p.nodes[2].gpus.size() == 4);
  CHECK(p.nodes[1].gpus[7]->get_speed() == doctest::Approx(19.5e12));
  CHECK(p.nodes[2].gpus[0]->get_speed() == doctest::Approx(8.1e12));
  CHECK(p.nodes[2].gpus[0]->get_name() == "small-0-gpu0");
  CHECK(e.get_host_count() == 2 * 9 + 3 * 5);
  // The pools are wired to one fabric: a big GPU reaches a small one across the spine.
  const Route r = route(p.nodes[0].gpus[0], p.nodes[4].gpus[3]);
  CHECK(r.links.count("leaf-0-uplink_UP") == 1);
  CHECK(r.links.count("leaf-2-uplink_DOWN") == 1);
}

TEST_CASE("platform: PCIe nodes share the PCIe switch uplink for network traffic") {
  EngineArgs args;
  sg4::Engine e(&args.argc, args.argv());
  NetworkSpec net = small_net(Topology::kLeafSpine);
  net.intra_node = IntraNode::kPcie;
  net.intra_node_gbps = 256;  // PCIe 4.0 x16
  const Platform p = build_platform(expand_pools({pool("t", 2, 4, "T4")}, net));
  Route r = route(p.nodes[0].gpus[0], p.nodes[0].gpus[3]);
  CHECK(r.links == std::set<std::string>{"t-0-gpu0_UP", "t-0-gpu3_DOWN"});
  CHECK(r.latency == doctest::Approx(1e-6));
  r = route(p.nodes[0].gpus[1], p.nodes[1].gpus[2]);
  CHECK(r.links == std::set<std::string>{"t-0-gpu1_UP", "t-0-pcie-uplink_UP", "t-0-nic_UP", "t-1-nic_DOWN",
                                         "t-1-pcie-uplink_DOWN", "t-1-gpu2_DOWN"});
  CHECK(bandwidth("t-0-pcie-uplink_UP") == doctest::Approx(256 * kGbit));
}

TEST_CASE("platform: a 1 GB transfer across the spine takes bytes / bottleneck + latency") {
  // CM02 applies no latency/bandwidth correction factors (LV08, SimGrid's default, would use
  // 13.01 x latency and 0.97 x bandwidth), so the time is the textbook one.
  EngineArgs args({"--cfg=network/model:CM02"});
  sg4::Engine e(&args.argc, args.argv());
  const Platform p =
      build_platform(expand_pools({pool("a", 4, 8, "A100-80GB")}, small_net(Topology::kLeafSpine)));
  // Route a-0-gpu0 -> a-3-gpu0: gpu (300 GB/s), nic (25 GB/s), uplink (2 * 25 / 2 = 25 GB/s), uplink,
  // nic, gpu. Bottleneck 25e9 B/s; latency 2 x 0.25 us + 4 x 1 us = 4.5 us.
  // Expected: 1e9 / 25e9 + 4.5e-6 = 0.04 + 0.0000045 = 0.0400045 s.
  sg4::CommPtr comm = sg4::Comm::sendto_async(p.nodes[0].gpus[0], p.nodes[3].gpus[0], 1e9);
  e.run();
  CHECK(comm->get_state() == sg4::Activity::State::FINISHED);
  CHECK(e.get_clock() == doctest::Approx(0.0400045).epsilon(1e-9));
}

TEST_CASE("platform: a 10,000-GPU leaf-spine cluster builds with the expected shape") {
  EngineArgs args;
  sg4::Engine e(&args.argc, args.argv());
  NetworkSpec net;  // leaf-spine, 16 nodes per leaf
  const ClusterSpec c = expand_pools({pool("n", 1250, 8, "H100")}, net);
  const Platform p = build_platform(c);
  CHECK(e.get_host_count() == 1250 * 9);
  CHECK(p.leaf_uplinks.size() == 79);
  const Route r = route(p.nodes.front().gpus.front(), p.nodes.back().gpus.back());
  CHECK(r.links.size() == 6);
}

TEST_CASE("platform: a 10,000-GPU fat-tree builds with the expected shape") {
  EngineArgs args;
  sg4::Engine e(&args.argc, args.argv());
  NetworkSpec net;
  net.topology = Topology::kFatTree;
  const ClusterSpec c = expand_pools({pool("n", 1250, 8, "H100")}, net);
  const Platform p = build_platform(c);
  CHECK(e.get_host_count() == 1250 * 9);
  const Route r = route(p.nodes.front().gpus.front(), p.nodes.back().gpus.back());
  CHECK(r.links.size() == 6);
}

TEST_CASE("platform: build_platform rejects reserved node names and out-of-order leaves") {
  EngineArgs args;
  sg4::Engine e(&args.argc, args.argv());
  ClusterSpec c = expand_pools({pool("a", 3, 1, "T4")}, NetworkSpec{});
  c.nodes[1].name = "leaf-0";
  CHECK_THROWS_AS(build_platform(c), InputError);
  c = expand_pools({pool("a", 3, 1, "T4")}, NetworkSpec{});
  c.nodes[2].leaf = 5;
  CHECK_THROWS_AS(build_platform(c), InputError);
}
