#include "sim/cluster/cluster_state.hpp"

#include <algorithm>
#include <cmath>

#include "models/hardware/gpu_catalog.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {

namespace {
constexpr double kEps = 1e-9;
}

ClusterState::ClusterState(const ClusterSpec& spec) : spec_(spec) {
  for (const auto& ns : spec.nodes) {
    if (ns.gpus > 0 && type_index(ns.gpu) < 0) type_names_.push_back(ns.gpu);
  }
  if (type_names_.size() > 64) throw InputError("", 0, "cluster", "more than 64 GPU types in one cluster");
  free_whole_by_type_.assign(type_names_.size(), 0);
  nodes_.reserve(spec.nodes.size());
  for (const auto& ns : spec.nodes) {
    Node n;
    n.gpu_free.assign(static_cast<std::size_t>(ns.gpus), 1000);
    n.cpu_free = ns.cpu_milli;
    n.mem_free = ns.memory_mib;
    n.type = ns.gpus > 0 ? type_index(ns.gpu) : -1;
    n.leaf = ns.leaf;
    refresh_node_max(n);
    if (n.type >= 0) free_whole_by_type_[n.type] += ns.gpus;
    const Shape shape{n.type, ns.gpus, ns.cpu_milli, ns.memory_mib};
    if (std::find(shapes_.begin(), shapes_.end(), shape) == shapes_.end()) shapes_.push_back(shape);
    total_gpus_ += ns.gpus;
    largest_.gpu_milli = std::max(largest_.gpu_milli, 1000.0 * ns.gpus);
    largest_.cpu_milli = std::max(largest_.cpu_milli, ns.cpu_milli);
    largest_.memory_mib = std::max(largest_.memory_mib, ns.memory_mib);
    nodes_.push_back(std::move(n));
  }
  total_by_type_.assign(free_whole_by_type_.begin(), free_whole_by_type_.end());
  while (leaves_size_ < static_cast<int>(nodes_.size())) leaves_size_ *= 2;
  tree_.assign(static_cast<std::size_t>(2 * leaves_size_), Agg{});
  by_free_.resize(type_names_.size() + 1);
  for (int i = 0; i < node_count(); ++i) update_node(i);
}

int ClusterState::type_index(const std::string& canonical) const {
  for (std::size_t i = 0; i < type_names_.size(); ++i)
    if (type_names_[i] == canonical) return static_cast<int>(i);
  return -1;
}

void ClusterState::refresh_node_max(Node& node) {
  int whole = 0, mx = 0;
  for (int f : node.gpu_free) {
    if (f >= 1000) ++whole;
    mx = std::max(mx, f);
  }
  node.free_whole = whole;
  node.max_gpu_free = mx;
}

void ClusterState::update_node(int n) {
  Node& node = nodes_[n];
  int free = 0;
  for (int f : node.gpu_free) free += f;
  if (free != node.free_milli) {
    auto& index = by_free_[node.type >= 0 ? static_cast<std::size_t>(node.type) : type_names_.size()];
    if (node.free_milli >= 0) index.erase({node.free_milli, n});
    index.insert({free, n});
    node.free_milli = free;
  }
  int i = n + leaves_size_;
  Agg& a = tree_[i];
  a.max_whole = node.free_whole;
  a.max_share = node.max_gpu_free;
  a.max_cpu = node.cpu_free;
  a.max_mem = node.mem_free;
  a.types = node.type >= 0 ? (TypeMask{1} << node.type) : 0;
  for (i /= 2; i >= 1; i /= 2) {
    const Agg& l = tree_[2 * i];
    const Agg& r = tree_[2 * i + 1];
    Agg& p = tree_[i];
    p.max_whole = std::max(l.max_whole, r.max_whole);
    p.max_share = std::max(l.max_share, r.max_share);
    p.max_cpu = std::max(l.max_cpu, r.max_cpu);
    p.max_mem = std::max(l.max_mem, r.max_mem);
    p.types = l.types | r.types;
  }
}

int ClusterState::free_whole_of(TypeMask types) const {
  int sum = 0;
  for (std::size_t t = 0; t < free_whole_by_type_.size(); ++t)
    if (types & (TypeMask{1} << t)) sum += free_whole_by_type_[t];
  return sum;
}

bool ClusterState::agg_may_fit(const Agg& a, const Request& r) const {
  if (a.max_cpu + kEps < r.cpu_milli || a.max_mem + kEps < r.memory_mib) return false;
  if (r.gpus == 0) return true;
  if ((a.types & r.types) == 0) return false;
  return r.whole() ? a.max_whole >= r.gpus : a.max_share >= r.milli;
}

bool ClusterState::fits_part(int n, const Request& r, int gpus) const {
  const Node& node = nodes_[n];
  const double frac = r.gpus > 0 ? static_cast<double>(gpus) / r.gpus : 1.0;
  if (node.cpu_free + kEps < r.cpu_milli * frac || node.mem_free + kEps < r.memory_mib * frac) return false;
  if (gpus == 0) return true;
  if (node.type < 0 || (r.types & (TypeMask{1} << node.type)) == 0) return false;
  if (r.whole()) return node.free_whole >= gpus;
  if (node.max_gpu_free < r.milli) return false;
  int ok = 0;
  for (int f : node.gpu_free)
    if (f >= r.milli && ++ok >= gpus) return true;
  return false;
}

bool ClusterState::fits_node(int n, const Request& r) const {
  return fits_part(n, r, r.gpus);
}

int ClusterState::descend(int idx, int lo, int hi, const Request& r, int from) const {
  if (hi <= from || lo >= node_count()) return -1;
  if (!agg_may_fit(tree_[idx], r)) return -1;
  if (hi - lo == 1) return fits_node(lo, r) ? lo : -1;
  const int mid = (lo + hi) / 2;
  const int left = descend(2 * idx, lo, mid, r, from);
  if (left >= 0) return left;
  return descend(2 * idx + 1, mid, hi, r, from);
}

int ClusterState::first_fit_node(const Request& r, int from) const {
  if (nodes_.empty()) return -1;
  return descend(1, 0, leaves_size_, r, from);
}

int ClusterState::best_fit_node(const Request& r) const {
  const int need = r.gpus > 0 ? r.gpus * r.milli : 0;
  std::pair<int, int> best{-1, -1};  // (free milli, node)
  for (std::size_t t = 0; t < by_free_.size(); ++t) {
    const bool gpu_less = t == type_names_.size();
    if (r.gpus > 0 && (gpu_less || (r.types & (TypeMask{1} << t)) == 0)) continue;
    const auto& index = by_free_[t];
    for (auto it = index.lower_bound({need, -1}); it != index.end(); ++it) {
      if (best.second >= 0 && *it > best) break;  // another type already fits tighter
      if (!fits_node(it->second, r)) continue;
      best = *it;
      break;
    }
  }
  return best.second;
}

bool ClusterState::ever_fits(const Request& r, std::string& why) const {
  long long total = 0;
  int max_node = 0;
  bool type_ok = r.gpus == 0;
  double max_cpu = 0, max_mem = 0;
  for (const auto& sh : shapes_) {
    max_cpu = std::max(max_cpu, sh.cpu);
    max_mem = std::max(max_mem, sh.mem);
    if (sh.type < 0 || (r.types & (TypeMask{1} << sh.type)) == 0) continue;
    type_ok = true;
    max_node = std::max(max_node, sh.gpus);
  }
  for (std::size_t t = 0; t < total_by_type_.size(); ++t)
    if (r.types & (TypeMask{1} << t)) total += total_by_type_[t];
  if (!type_ok) {
    why = "no GPU of an allowed type in the cluster";
    return false;
  }
  if (r.single_node || r.gpus == 0) {
    if (r.gpus > max_node) {
      why = "needs " + std::to_string(r.gpus) +
            " GPUs in one node; the largest node of an allowed type has " + std::to_string(max_node);
      return false;
    }
    if (r.cpu_milli > max_cpu + kEps) {
      why = "CPU request exceeds every node";
      return false;
    }
    if (r.memory_mib > max_mem + kEps) {
      why = "memory request exceeds every node";
      return false;
    }
    for (const auto& sh : shapes_) {  // exact check on an empty node of each shape
      const bool t_ok = r.gpus == 0 || (sh.type >= 0 && (r.types & (TypeMask{1} << sh.type)) != 0);
      if (t_ok && sh.gpus >= r.gpus && sh.cpu + kEps >= r.cpu_milli && sh.mem + kEps >= r.memory_mib)
        return true;
    }
    why = "no single node has enough GPUs, CPU and memory together";
    return false;
  }
  if (total < r.gpus) {
    why = "needs " + std::to_string(r.gpus) + " GPUs; the cluster has " + std::to_string(total) +
          " of allowed types";
    return false;
  }
  // A spread job's CPU and memory are split over its nodes in proportion to GPUs (as usable_whole
  // counts them), so a node hosts only as many of its GPUs as its CPU and memory allow.
  if (r.cpu_milli > 0 || r.memory_mib > 0) {
    const double cpu_per = r.cpu_milli / r.gpus, mem_per = r.memory_mib / r.gpus;
    auto hostable = [&](int gpus, double cpu, double mem) {
      double g = gpus;
      if (cpu_per > 0) g = std::min(g, std::floor((cpu + kEps) / cpu_per));
      if (mem_per > 0) g = std::min(g, std::floor((mem + kEps) / mem_per));
      return static_cast<long long>(std::max(g, 0.0));
    };
    bool limited = false;  // only then is the O(nodes) count needed
    for (const auto& sh : shapes_)
      if (sh.type >= 0 && (r.types & (TypeMask{1} << sh.type)) != 0 &&
          hostable(sh.gpus, sh.cpu, sh.mem) < sh.gpus)
        limited = true;
    if (limited) {
      long long can = 0;
      for (std::size_t i = 0; i < nodes_.size() && can < r.gpus; ++i) {
        const int t = nodes_[i].type;
        if (t < 0 || (r.types & (TypeMask{1} << t)) == 0) continue;
        const NodeSpec& ns = spec_.nodes[i];
        can += hostable(ns.gpus, ns.cpu_milli, ns.memory_mib);
      }
      if (can < r.gpus) {
        why = "needs " + std::to_string(r.gpus) +
              " GPUs with their share of CPU and memory; the empty cluster can host " + std::to_string(can) +
              " (CPU or memory per GPU is short)";
        return false;
      }
    }
  }
  return true;
}

void ClusterState::pick_on_node(int n, const Request& r, int gpus, Allocation& out) const {
  const Node& node = nodes_[n];
  if (gpus == 0) {
    out.slots.push_back({n, -1, 0});
    return;
  }
  if (r.whole()) {
    int taken = 0;
    for (int g = 0; g < static_cast<int>(node.gpu_free.size()) && taken < gpus; ++g) {
      if (node.gpu_free[g] >= 1000) {
        out.slots.push_back({n, g, 1000});
        ++taken;
      }
    }
    return;
  }
  // Fractional: best fit (least free share that still fits), lowest index on ties.
  std::vector<int> candidates;
  for (int g = 0; g < static_cast<int>(node.gpu_free.size()); ++g)
    if (node.gpu_free[g] >= r.milli) candidates.push_back(g);
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](int a, int b) { return node.gpu_free[a] < node.gpu_free[b]; });
  for (int i = 0; i < gpus && i < static_cast<int>(candidates.size()); ++i)
    out.slots.push_back({n, candidates[static_cast<std::size_t>(i)], r.milli});
}

void ClusterState::finalize(const Request& r, Allocation& a) const {
  // Distinct nodes and leaves without allocating: a slot counts if no earlier slot shares it
  // (allocations hold at most a few dozen slots).
  a.nodes = 0;
  a.leaves = 0;
  a.cpu_milli = r.cpu_milli;
  a.memory_mib = r.memory_mib;
  if (a.slots.size() > 64) {  // large jobs (thousands of GPUs): sort instead of the quadratic scan
    std::vector<int> nodes, leaves;
    nodes.reserve(a.slots.size());
    for (const auto& s : a.slots) nodes.push_back(s.node);
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    for (int n : nodes) leaves.push_back(nodes_[n].leaf);
    std::sort(leaves.begin(), leaves.end());
    leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
    a.nodes = static_cast<int>(nodes.size());
    a.leaves = static_cast<int>(leaves.size());
    return;
  }
  for (std::size_t i = 0; i < a.slots.size(); ++i) {
    const int n = a.slots[i].node;
    bool new_node = true, new_leaf = true;
    for (std::size_t j = 0; j < i && (new_node || new_leaf); ++j) {
      new_node = new_node && a.slots[j].node != n;
      new_leaf = new_leaf && nodes_[a.slots[j].node].leaf != nodes_[n].leaf;
    }
    a.nodes += new_node ? 1 : 0;
    a.leaves += new_leaf ? 1 : 0;
  }
  a.cpu_milli = r.cpu_milli;
  a.memory_mib = r.memory_mib;
}

void ClusterState::allocate(const Allocation& a) {
  apply(a, -1);
}
void ClusterState::release(const Allocation& a) {
  apply(a, +1);
}

void ClusterState::apply(const Allocation& a, int sign) {
  const auto gpus = std::count_if(a.slots.begin(), a.slots.end(), [](const Slot& s) { return s.gpu >= 0; });
  for (const auto& s : a.slots) {
    Node& node = nodes_[s.node];
    // CPU and memory are split over the job's GPUs (all of it on a CPU-only slot).
    const double frac = gpus > 0 ? (s.gpu >= 0 ? 1.0 / static_cast<double>(gpus) : 0.0) : 1.0;
    node.cpu_free += sign * a.cpu_milli * frac;
    node.mem_free += sign * a.memory_mib * frac;
    if (s.gpu < 0) continue;
    const bool was_whole = node.gpu_free[s.gpu] >= 1000;
    node.gpu_free[s.gpu] += sign * s.milli;
    used_milli_ -= sign * s.milli;
    const bool is_whole = node.gpu_free[s.gpu] >= 1000;
    if (node.type >= 0) free_whole_by_type_[node.type] += (is_whole ? 1 : 0) - (was_whole ? 1 : 0);
  }
  // Refresh each touched node once per run of its slots (placers group a node's slots).
  for (std::size_t i = 0; i < a.slots.size(); ++i) {
    const int n = a.slots[i].node;
    if (i + 1 < a.slots.size() && a.slots[i + 1].node == n) continue;
    refresh_node_max(nodes_[n]);
    update_node(n);
  }
}

void ClusterState::set_down(int n) {
  Node& node = nodes_[n];
  if (node.down) return;
  node.down = true;
  ++down_nodes_;
  node.withheld = node.gpu_free;
  node.withheld_cpu = node.cpu_free;
  node.withheld_mem = node.mem_free;
  for (int& f : node.gpu_free) {
    down_milli_ += f;
    f = 0;
  }
  if (node.type >= 0) free_whole_by_type_[node.type] -= node.free_whole;
  node.cpu_free = 0;
  node.mem_free = 0;
  refresh_node_max(node);
  update_node(n);
}

void ClusterState::set_up(int n) {
  Node& node = nodes_[n];
  if (!node.down) return;
  node.down = false;
  --down_nodes_;
  for (std::size_t g = 0; g < node.gpu_free.size(); ++g) {
    node.gpu_free[g] += node.withheld[g];
    down_milli_ -= node.withheld[g];
  }
  node.cpu_free += node.withheld_cpu;
  node.mem_free += node.withheld_mem;
  node.withheld.clear();
  refresh_node_max(node);
  if (node.type >= 0) free_whole_by_type_[node.type] += node.free_whole;
  update_node(n);
}

Request make_request(const JobSpec& job, const ClusterState& state, const std::string& trace_file) {
  Request r;
  r.gpus = job.gpus;
  r.milli = job.gpus > 0 ? job.gpu_milli : 0;
  if (r.gpus > 0 && (r.milli <= 0 || r.milli > 1000))
    throw InputError(trace_file, job.source_line, "gpu_milli",
                     "must be in 1..1000, got " + std::to_string(r.milli));
  r.cpu_milli = job.cpu_milli;
  r.memory_mib = job.memory_mib;
  r.single_node = job.single_node || !r.whole();
  if (!job.gpu_types.empty()) {
    r.types = 0;
    for (const auto& name : job.gpu_types) {
      const GpuSpec* g = find_gpu(name);
      if (g == nullptr) {
        std::vector<std::string> names = gpu_names();
        std::string msg = "unknown GPU model '" + name + "'";
        if (auto best = closest(name, names); !best.empty()) msg += " (did you mean '" + best + "'?)";
        throw InputError(trace_file, job.source_line, "gpu_type", msg);
      }
      const int t = state.type_index(g->name);
      if (t >= 0) r.types |= TypeMask{1} << t;
    }
  }
  return r;
}

}  // namespace fleetsim
