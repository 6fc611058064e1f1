#include "sim/cluster/fragmentation.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace fleetsim {

namespace {
constexpr double kEps = 1e-9;  // as ClusterState's CPU/memory comparisons

long long free_total(const NodeFree& node) {
  long long sum = 0;
  for (int f : node.gpu_free) sum += f;
  return sum;
}
}  // namespace

WorkloadDistribution WorkloadDistribution::from_requests(const std::vector<Request>& requests) {
  struct Sum {
    double cpu = 0, mem = 0;
    long long count = 0;
  };
  std::map<std::tuple<int, int, TypeMask>, Sum> groups;
  for (const auto& r : requests) {
    if (r.gpus <= 0) continue;
    Sum& s = groups[{r.gpus, std::min(r.milli, 1000), r.types}];
    s.cpu += r.cpu_milli;
    s.mem += r.memory_mib;
    ++s.count;
  }
  WorkloadDistribution d;
  for (const auto& [key, s] : groups) {
    TaskClass m;
    std::tie(m.gpus, m.milli, m.types) = key;
    m.cpu_milli = s.cpu / static_cast<double>(s.count);
    m.memory_mib = s.mem / static_cast<double>(s.count);
    m.count = s.count;
    d.total += s.count;
    d.classes.push_back(m);
  }
  // Map order (gpus, milli, types) is the tie order; stable sort keeps it.
  std::stable_sort(d.classes.begin(), d.classes.end(),
                   [](const TaskClass& a, const TaskClass& b) { return a.count > b.count; });
  return d;
}

NodeFree node_free(const ClusterState& state, int n) {
  NodeFree f;
  f.type = state.node_type(n);
  f.gpu_free.resize(static_cast<std::size_t>(state.node_gpus(n)));
  for (int g = 0; g < state.node_gpus(n); ++g)
    f.gpu_free[static_cast<std::size_t>(g)] = state.gpu_free_milli(n, g);
  f.cpu_free = state.cpu_free(n);
  f.mem_free = state.mem_free(n);
  return f;
}

long long task_fragmentation(const NodeFree& node, const TaskClass& m) {
  const long long all = free_total(node);
  if (m.gpus <= 0) return all;
  const bool type_ok = node.type >= 0 && (m.types & (TypeMask{1} << node.type)) != 0;
  if (!type_ok || node.cpu_free + kEps < m.cpu_milli || node.mem_free + kEps < m.memory_mib) return all;
  const int need = std::min(m.milli, 1000);
  int usable = 0;
  long long frag = 0;
  for (int f : node.gpu_free) {
    if (f >= need)
      ++usable;
    else
      frag += f;
  }
  return usable >= m.gpus ? frag : all;
}

long long weighted_node_fragmentation(const NodeFree& node, const WorkloadDistribution& dist) {
  long long sum = 0;
  if (node.gpu_free.empty()) return 0;
  for (const auto& m : dist.classes) sum += m.count * task_fragmentation(node, m);
  return sum;
}

double node_fragmentation(const NodeFree& node, const WorkloadDistribution& dist) {
  if (dist.empty()) return 0;
  return static_cast<double>(weighted_node_fragmentation(node, dist)) / static_cast<double>(dist.total);
}

ClusterFragmentation cluster_fragmentation(const ClusterState& state, const WorkloadDistribution& dist) {
  ClusterFragmentation c;
  long long weighted = 0;
  for (int n = 0; n < state.node_count(); ++n) {
    const NodeFree f = node_free(state, n);
    c.free_milli += free_total(f);
    weighted += weighted_node_fragmentation(f, dist);
  }
  c.milli = dist.empty() ? 0.0 : static_cast<double>(weighted) / static_cast<double>(dist.total);
  return c;
}

}  // namespace fleetsim
