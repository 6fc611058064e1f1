#include "sim/platform/ring.hpp"

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace fleetsim {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string base_name(const std::string& name) {
  for (const char* side : {"_UP", "_DOWN"})
    if (ends_with(name, side)) return name.substr(0, name.size() - std::string(side).size());
  return name;
}

}  // namespace

const RouteCache::Route& RouteCache::get(simgrid::s4u::Host* from, simgrid::s4u::Host* to) {
  if (routes_.size() >= max_) routes_.clear();
  auto [it, inserted] = routes_.try_emplace({from, to});
  if (inserted) from->route_to(to, it->second.links, &it->second.latency);
  return it->second;
}

RingRoutes ring_routes(const std::vector<simgrid::s4u::Host*>& ring, RouteCache* cache) {
  RingRoutes r;
  const std::size_t n = ring.size();
  if (n < 2) return r;
  std::unordered_map<simgrid::s4u::Link*, std::size_t> at;
  RouteCache::Route own;
  for (std::size_t i = 0; i < n; ++i) {
    const RouteCache::Route* route = &own;
    if (cache != nullptr) {
      route = &cache->get(ring[i], ring[(i + 1) % n]);
    } else {
      own.links.clear();
      own.latency = 0;
      ring[i]->route_to(ring[(i + 1) % n], own.links, &own.latency);
    }
    r.latency = std::max(r.latency, route->latency);
    // A route is a set of links (SimGrid 3.32 may list them out of order, never twice).
    for (auto* l : route->links) {
      auto [it, inserted] = at.try_emplace(l, r.links.size());
      if (inserted) r.links.emplace_back(l, 0);
      r.links[it->second].second += 1;
    }
  }
  for (const auto& [l, count] : r.links) {
    const bool fatpipe = l->get_sharing_policy() == simgrid::s4u::Link::SharingPolicy::FATPIPE;
    r.s_per_byte = std::max(r.s_per_byte, (fatpipe ? 1.0 : count) / l->get_bandwidth());
  }
  return r;
}

double ring_bytes_for(const RingRoutes& routes, double seconds) {
  if (!(seconds > routes.latency) || !(routes.s_per_byte > 0)) return 0;
  return (seconds - routes.latency) / routes.s_per_byte;
}

simgrid::s4u::ExecPtr start_ring_ptask(const std::vector<simgrid::s4u::Host*>& ring, double bytes) {
  const std::size_t n = ring.size();
  std::vector<double> matrix(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) matrix[i * n + (i + 1) % n] = bytes;
  simgrid::s4u::ExecPtr exec = simgrid::s4u::Exec::init()
                                   ->set_hosts(ring)
                                   ->set_flops_amounts(std::vector<double>(n, 0.0))
                                   ->set_bytes_amounts(matrix);
  exec->start();
  return exec;
}

std::string link_tier(const std::string& link_name) {
  const std::string n = base_name(link_name);
  if (n.find("-nic") != std::string::npos) return "nic";
  if (ends_with(n, "-pcie-uplink") || ends_with(n, "-nvswitch") || ends_with(n, "-pcie-switch") ||
      ends_with(n, "-pcie"))
    return "intra";
  if (ends_with(n, "-uplink")) return "leaf-uplink";
  if (n.rfind("pod-", 0) == 0 && ends_with(n, "-core")) return "core";
  if (ends_with(n, "-cpu")) return "cpu";
  if (n.find("-gpu") != std::string::npos) return "gpu";
  return "spine";
}

std::vector<std::pair<int, int>> ring_order(const std::vector<std::pair<int, int>>& gpus) {
  std::vector<int> nodes;
  std::map<int, std::vector<int>> local;
  for (const auto& [node, gpu] : gpus) {
    if (local.count(node) == 0) nodes.push_back(node);
    local[node].push_back(gpu);
  }
  std::vector<std::pair<int, int>> ring;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    auto& g = local[nodes[k]];
    std::sort(g.begin(), g.end());
    if (k % 2 == 1) std::reverse(g.begin(), g.end());
    for (int x : g) ring.push_back({nodes[k], x});
  }
  return ring;
}

}  // namespace fleetsim
