// The topology placer's notion of distance (same node / same leaf / across the spine, from
// ClusterState::node_leaf) matches the real routes of the SimGrid platform: for every pair of nodes
// of leaf-spine, fat-tree and rail-optimized fabrics, the route between their GPU 0s climbs to a
// leaf uplink or spine link exactly when the nodes sit under different leaves (one process per
// TEST_CASE: SimGrid's engine is one per process).
#include <doctest/doctest.h>

#include <simgrid/s4u.hpp>

#include <memory>
#include <string>

#include "sim/cluster/cluster_state.hpp"
#include "sim/network/network_fidelity.hpp"
#include "sim/platform/platform.hpp"
#include "tests/platform_util.hpp"

using namespace fleetsim;
using fleetsim::test::EngineArgs;
using fleetsim::test::pool;

namespace {

void check_routes_match_leaves(Topology topology, int rails) {
  EngineArgs args;
  auto engine = std::make_unique<simgrid::s4u::Engine>(&args.argc, args.argv());
  NetworkSpec net;
  net.topology = topology;
  net.nodes_per_leaf = 2;
  net.oversubscription = 2;
  if (rails > 0) {
    net.nics_per_node = rails;
    net.gpus_per_nic = 4 / rails;
  }
  const ClusterSpec spec = expand_pools({pool("p", 6, 4, "A100")}, net);
  const Platform platform = build_platform(spec);
  const ClusterState state(spec);
  int crossing = 0;
  for (int a = 0; a < 6; ++a)
    for (int b = 0; b < 6; ++b) {
      if (a == b) continue;
      std::vector<simgrid::s4u::Link*> route;
      double latency = 0;
      platform.nodes[static_cast<std::size_t>(a)].gpus[0]->route_to(
          platform.nodes[static_cast<std::size_t>(b)].gpus[0], route, &latency);
      bool spine = false;
      for (const auto* l : route) {
        const std::string tier = link_tier(l->get_name());
        spine = spine || tier == "leaf-uplink" || tier == "spine";
      }
      CAPTURE(a);
      CAPTURE(b);
      CHECK(spine == (state.node_leaf(a) != state.node_leaf(b)));
      crossing += spine ? 1 : 0;
    }
  CHECK(crossing == 6 * 5 - 3 * 2);  // 3 leaves of 2 nodes: only same-leaf pairs stay below
}

}  // namespace

TEST_CASE("placement routes: leaf-spine leaves are the routes' leaves") {
  check_routes_match_leaves(Topology::kLeafSpine, 0);
}

TEST_CASE("placement routes: fat-tree leaves are the routes' leaves") {
  check_routes_match_leaves(Topology::kFatTree, 0);
}

TEST_CASE("placement routes: rail-optimized groups are the routes' leaves for same-rail GPUs") {
  check_routes_match_leaves(Topology::kRailOptimized, 4);
}
