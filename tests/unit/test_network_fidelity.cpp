// Network fidelity: all-reduce ptasks on tiny SimGrid platforms built by build_platform under
// host/model:ptask_L07, with the sharing worked out by hand (one process per TEST_CASE: SimGrid's
// engine is one per process).
#include <doctest/doctest.h>

#include <simgrid/s4u.hpp>

#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/network/network_fidelity.hpp"
#include "sim/platform/cluster_spec.hpp"
#include "sim/platform/platform.hpp"
#include "tests/platform_util.hpp"

using namespace fleetsim;
using fleetsim::test::EngineArgs;
using fleetsim::test::pool;

namespace {

EngineArgs ptask_args() {
#if defined(__SANITIZE_ADDRESS__)
  return EngineArgs({"--cfg=host/model:ptask_L07", "--cfg=contexts/factory:thread"});
#else
  return EngineArgs({"--cfg=host/model:ptask_L07"});
#endif
}

/// `nodes` nodes of `gpus` V100s, `per_leaf` nodes per leaf, NIC 100 Gbit/s (12.5 GB/s), leaf uplink
/// = per_leaf x NIC / oversubscription.
struct Tiny {
  EngineArgs args = ptask_args();
  std::unique_ptr<simgrid::s4u::Engine> engine;
  Platform platform;
  RingPtasks fabric;
  Tiny(double oversubscription, int nodes = 4, int gpus = 1, int per_leaf = 2, int rails = 0) {
    engine = std::make_unique<simgrid::s4u::Engine>(&args.argc, args.argv());
    NetworkSpec net;
    if (rails > 0) {
      net.topology = Topology::kRailOptimized;
      net.nics_per_node = rails;
      net.gpus_per_nic = gpus / rails;
      net.intra_node = IntraNode::kNvswitch;
    }
    net.nodes_per_leaf = per_leaf;
    net.oversubscription = oversubscription;
    net.nic_gbps = 100;
    platform = build_platform(expand_pools({pool("p", nodes, gpus, "V100")}, net));
  }
  simgrid::s4u::Host* gpu(int node, int g = 0) const {
    return platform.nodes[static_cast<std::size_t>(node)].gpus[static_cast<std::size_t>(g)];
  }
  /// Starts ptask (id, alone_s) at time 0 for each entry, runs the simulation, returns end times.
  std::map<long, double> run(const std::map<long, double>& alone) {
    std::map<long, double> end;
    simgrid::s4u::Actor::create("driver", gpu(0), [&] {
      for (const auto& [id, s] : alone) REQUIRE(fabric.start(id, s, 0.0));
      while (fabric.busy()) {
        const long id = fabric.wait(std::numeric_limits<double>::infinity());
        end[id] = simgrid::s4u::Engine::get_clock();
      }
    });
    engine->run();
    return end;
  }
};

}  // namespace

TEST_CASE("network: link tiers from platform link names") {
  CHECK(link_tier("p-0-nic_UP") == "nic");
  CHECK(link_tier("p-0-nic1_DOWN") == "nic");
  CHECK(link_tier("leaf-0-uplink_UP") == "leaf-uplink");
  CHECK(link_tier("leaf-1-rail3-uplink_DOWN") == "leaf-uplink");
  CHECK(link_tier("p-3-pcie-uplink_UP") == "intra");
  CHECK(link_tier("p-3-nvswitch") == "intra");
  CHECK(link_tier("p-3-gpu7_UP") == "gpu");
  CHECK(link_tier("p-3-cpu_UP") == "cpu");
  CHECK(link_tier("fabric_link_from_1_0_0") == "spine");
}

TEST_CASE("network: rings are rail-aligned - each node-to-node hop joins the same local GPU index") {
  using V = std::vector<std::pair<int, int>>;
  CHECK(ring_order(V{{5, 1}, {5, 0}, {2, 0}, {2, 1}, {7, 0}, {7, 1}}) ==
        V{{5, 0}, {5, 1}, {2, 1}, {2, 0}, {7, 0}, {7, 1}});
  CHECK(ring_order(V{{0, 3}, {0, 1}}) == V{{0, 1}, {0, 3}});
}

namespace {
/// Bytes on leaf uplinks (rail leaf -> spine) when a 2-node x 4-GPU job on a rail-optimized pod
/// (4 rails) runs a 1 s all-reduce with its GPUs in `order`.
double spine_bytes(const std::vector<std::pair<int, int>>& order) {
  Tiny t(1.0, 2, 4, 2, 4);
  std::vector<simgrid::s4u::Host*> ring;
  for (const auto& [node, gpu] : order) ring.push_back(t.gpu(node, gpu));
  t.fabric.add_job(1, ring);
  t.run({{1, 1.0}});
  double bytes = 0;
  for (const auto& l : t.fabric.report(1.0, 1).links)
    if (l.tier == "leaf-uplink") bytes += l.bytes;
  return bytes;
}
}  // namespace

TEST_CASE("network: on a rail-optimized pod a rail-aligned ring stays off the spine") {
  using V = std::vector<std::pair<int, int>>;
  V gpus;
  for (int n = 0; n < 2; ++n)
    for (int g = 0; g < 4; ++g) gpus.push_back({n, g});
  CHECK(spine_bytes(ring_order(gpus)) == 0);
}

TEST_CASE("network: on a rail-optimized pod a node-major ring crosses rails through the spine") {
  using V = std::vector<std::pair<int, int>>;
  V gpus;
  for (int n = 0; n < 2; ++n)
    for (int g = 0; g < 4; ++g) gpus.push_back({n, g});
  CHECK(spine_bytes(gpus) > 0);  // node 0 GPU 3 -> node 1 GPU 0 goes rail 3 -> spine -> rail 0
}

TEST_CASE("network: a ptask alone across leaves takes exactly the requested time") {
  Tiny t(2.0);
  t.fabric.add_job(1, {t.gpu(0), t.gpu(2)});
  const auto end = t.run({{1, 1.0}});
  CHECK(end.at(1) == doctest::Approx(1.0).epsilon(1e-9));
  // NIC-limited: 12.5 GB/s per ring flow for the 1 s it ran (less the route latency).
  CHECK(t.fabric.flow_bytes(1) == doctest::Approx(12.5e9).epsilon(1e-3));
}

TEST_CASE("network: a ptask alone inside an 8-GPU node takes exactly the requested time") {
  Tiny t(1.0, 1, 8, 1);
  std::vector<simgrid::s4u::Host*> ring;
  for (int g = 0; g < 8; ++g) ring.push_back(t.gpu(0, g));
  t.fabric.add_job(1, ring);
  CHECK_FALSE(t.fabric.shared(1));
  const auto end = t.run({{1, 0.01}});
  CHECK(end.at(1) == doctest::Approx(0.01).epsilon(1e-9));
  // Each GPU's NVLink (V100: 300 GB/s) carries one flow out and one in, split-duplex.
  CHECK(t.fabric.flow_bytes(1) / 0.01 == doctest::Approx(300e9).epsilon(1e-3));
}

TEST_CASE("network: two jobs across a 2 to 1 uplink get half of it each") {
  Tiny t(2.0);
  t.fabric.add_job(1, {t.gpu(0), t.gpu(2)});
  t.fabric.add_job(2, {t.gpu(1), t.gpu(3)});
  CHECK(t.fabric.sharers(1) == std::vector<long>{2});
  // Leaf uplink = 2 x 12.5 GB/s / 2 = 12.5 GB/s carrying one flow of each job: 6.25 GB/s each,
  // so 1 s of traffic alone takes 2 s together (less one route latency, a few microseconds).
  const auto end = t.run({{1, 1.0}, {2, 1.0}});
  CHECK(end.at(1) == doctest::Approx(2.0).epsilon(1e-5));
  CHECK(end.at(2) == doctest::Approx(2.0).epsilon(1e-5));
}

TEST_CASE("network: max-min over time - the shorter job frees the uplink for the longer one") {
  Tiny t(2.0);
  t.fabric.add_job(1, {t.gpu(0), t.gpu(2)});
  t.fabric.add_job(2, {t.gpu(1), t.gpu(3)});
  // Half rate each until job 2's 0.5 s of traffic is done at t = 1; job 1 then has 0.5 s left
  // at full rate: ends at 1.5.
  const auto end = t.run({{1, 1.0}, {2, 0.5}});
  CHECK(end.at(2) == doctest::Approx(1.0).epsilon(1e-5));
  CHECK(end.at(1) == doctest::Approx(1.5).epsilon(1e-5));
  // Link loads follow SimGrid's rates segment by segment: node 0's NIC carries job 1 at 6.25 GB/s
  // for 1 s, then at 12.5 GB/s for 0.5 s: mean 12.5 GB / (12.5 GB/s x 1.5 s) = 2/3, p99 = 1.
  // The shared uplink is full all the time; node 1's NIC carries job 2 at half rate for 1 s.
  std::map<std::string, LinkStat> by_name;
  for (const auto& l : t.fabric.report(1.5, 3).links) by_name[l.name] = l;
  CHECK(by_name.at("p-0-nic_UP").mean_util == doctest::Approx(2.0 / 3.0).epsilon(1e-3));
  CHECK(by_name.at("p-0-nic_UP").p99_util == doctest::Approx(1.0).epsilon(1e-3));
  CHECK(by_name.at("leaf-0-uplink_UP").mean_util == doctest::Approx(1.0).epsilon(1e-3));
  CHECK(by_name.at("p-1-nic_UP").mean_util == doctest::Approx(1.0 / 3.0).epsilon(1e-3));
  CHECK(by_name.at("p-1-nic_UP").p99_util == doctest::Approx(0.5).epsilon(1e-3));
}

TEST_CASE("network: SimGrid's ptask solver shares a link per ring, not per flow (fair bottleneck)") {
  // SimGrid 3.32's ptask model solves with host/solver = fairbottleneck (maxmin is refused): each
  // round a link offers every ptask crossing it an equal share of its remaining bandwidth, whatever
  // the number of the ptask's flows on it. Nodes 0, 1 on leaf 0 and 2, 3 on leaf 1 (2 GPUs each),
  // uplinks 2 x 12.5 / 2 = 12.5 GB/s. Ring 1 = GPU 0 of nodes 0, 2, 1, 3 crosses every uplink
  // direction twice (alone: 6.25 GB/s per flow); ring 2 = GPU 1 of nodes 0, 2 once (alone: 12.5,
  // also its NICs' rate). Fair bottleneck: 6.25 GB/s of each uplink per ring, so ring 1's flows
  // move at 3.125 and ring 2's at 6.25: both at half their alone rate, both end at 2 s. Per-flow
  // max-min (the fabric fidelity's floor) would give both flows 12.5 / 3 GB/s: ring 1 ends at 1.5 s.
  Tiny t(2.0, 4, 2, 2);
  t.fabric.add_job(1, {t.gpu(0), t.gpu(2), t.gpu(1), t.gpu(3)});
  t.fabric.add_job(2, {t.gpu(0, 1), t.gpu(2, 1)});
  const auto end = t.run({{1, 1.0}, {2, 1.0}});
  CHECK(end.at(1) == doctest::Approx(2.0).epsilon(1e-5));
  CHECK(end.at(2) == doctest::Approx(2.0).epsilon(1e-5));
}

TEST_CASE("network: jobs in disjoint leaves do not interact") {
  Tiny t(2.0);
  t.fabric.add_job(1, {t.gpu(0), t.gpu(1)});
  t.fabric.add_job(2, {t.gpu(2), t.gpu(3)});
  CHECK(t.fabric.sharers(1).empty());
  const auto end = t.run({{1, 1.0}, {2, 1.0}});
  CHECK(end.at(1) == doctest::Approx(1.0).epsilon(1e-9));
  CHECK(end.at(2) == doctest::Approx(1.0).epsilon(1e-9));
}

TEST_CASE("network: a non-blocking fabric removes the slowdown") {
  Tiny t(1.0);
  t.fabric.add_job(1, {t.gpu(0), t.gpu(2)});
  t.fabric.add_job(2, {t.gpu(1), t.gpu(3)});
  // Uplink 25 GB/s: both flows fit at the NICs' 12.5 GB/s.
  const auto end = t.run({{1, 1.0}, {2, 1.0}});
  CHECK(end.at(1) == doctest::Approx(1.0).epsilon(1e-9));
  CHECK(end.at(2) == doctest::Approx(1.0).epsilon(1e-9));
}

TEST_CASE("network: a cancelled ptask reports the share it completed and its links are reported") {
  Tiny t(2.0);
  t.fabric.add_job(1, {t.gpu(0), t.gpu(2)});
  double done = -1;
  simgrid::s4u::Actor::create("driver", t.gpu(0), [&] {
    REQUIRE(t.fabric.start(1, 1.0, 0.0));
    CHECK(t.fabric.wait(0.25) == -1);  // timeout
    done = t.fabric.cancel(1, simgrid::s4u::Engine::get_clock());
    CHECK_FALSE(t.fabric.busy());
  });
  t.engine->run();
  CHECK(done == doctest::Approx(0.25).epsilon(1e-3));
  const NetworkReport r = t.fabric.report(1.0, 4);
  REQUIRE_FALSE(r.links.empty());
  // Busiest first: the NICs and uplinks of nodes 0 and 2, both directions (12.5 GB/s of 12.5 for
  // 0.25 s of 1 s): mean 0.25, p99 1; then the GPUs' NVLinks, then idle fabric links at 0.
  REQUIRE(r.links.size() >= 9);
  for (std::size_t k = 0; k < 8; ++k) {
    CHECK((r.links[k].tier == "nic" || r.links[k].tier == "leaf-uplink"));
    CHECK(r.links[k].mean_util == doctest::Approx(0.25).epsilon(1e-3));
    CHECK(r.links[k].p99_util == doctest::Approx(1.0).epsilon(1e-3));
  }
  CHECK(r.links[8].tier == "gpu");
  CHECK(r.links.back().mean_util == 0);
  // Tier series: 4 buckets of 0.25 s; all the NIC traffic is in the first.
  double first = -1, second = -1;
  for (const auto& s : r.tiers)
    if (s.tier == "nic") (s.time_s == 0 ? first : second) = s.util;
  CHECK(first == doctest::Approx(4.0 / 8.0).epsilon(1e-3));  // 4 of 8 NIC directions busy
  CHECK(second == doctest::Approx(0.0));
}
