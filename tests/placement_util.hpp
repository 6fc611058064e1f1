#pragma once
// Helpers shared by the placement tests (test_placement*.cpp).
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/cluster/placer.hpp"
#include "sim/platform/cluster_spec.hpp"
#include "tests/cluster_state_util.hpp"

namespace fleetsim::test {

inline ClusterSpec spec_of(std::vector<PoolSpec> pools, int nodes_per_leaf) {
  NetworkSpec net;
  net.nodes_per_leaf = nodes_per_leaf;
  return expand_pools(std::move(pools), net);
}

inline std::unique_ptr<Placer> make(const std::string& name) {
  auto p = placers().create(name, PlacerParams{});
  REQUIRE(p != nullptr);
  return p;
}

/// GPUs of the allocation on each node.
inline std::map<int, int> per_node(const Allocation& a) {
  std::map<int, int> out;
  for (const auto& sl : a.slots) ++out[sl.node];
  return out;
}

}  // namespace fleetsim::test
