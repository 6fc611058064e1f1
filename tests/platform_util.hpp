#pragma once
// Helpers for tests that build a SimGrid platform: engine arguments, route inspection, pools.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "sim/platform/cluster_spec.hpp"

namespace fleetsim::test {

inline constexpr double kGbit = 1e9 / 8;  // bytes/s per Gbit/s

/// argc/argv for the one Engine of a test case (quiet logs).
struct EngineArgs {
  explicit EngineArgs(std::vector<std::string> extra = {}) : words(std::move(extra)) {
    words.insert(words.begin(), {"fleetsim_test", "--log=root.thres:critical"});
    for (auto& w : words) ptrs.push_back(w.data());
    ptrs.push_back(nullptr);
    argc = static_cast<int>(words.size());
  }
  std::vector<std::string> words;
  std::vector<char*> ptrs;
  int argc = 0;
  char** argv() { return ptrs.data(); }
};

struct Route {
  std::set<std::string> links;  // link names (SimGrid 3.32 may list them out of path order)
  double latency = 0;
  double bottleneck = 0;  // smallest bandwidth on the route, bytes/s
};

/// The route from a to b; checks that no link appears twice.
inline Route route(const simgrid::s4u::Host* a, const simgrid::s4u::Host* b) {
  std::vector<simgrid::s4u::Link*> links;
  Route r;
  a->route_to(b, links, &r.latency);
  r.bottleneck = links.empty() ? 0 : links.front()->get_bandwidth();
  for (const auto* l : links) {
    r.links.insert(l->get_name());
    r.bottleneck = std::min(r.bottleneck, l->get_bandwidth());
  }
  CHECK(r.links.size() == links.size());
  return r;
}

inline PoolSpec pool(const std::string& name, int nodes, int gpus, const std::string& gpu) {
  PoolSpec p;
  p.name = name;
  p.nodes = nodes;
  p.gpus_per_node = gpus;
  p.gpu = gpu;
  return p;
}

}  // namespace fleetsim::test
