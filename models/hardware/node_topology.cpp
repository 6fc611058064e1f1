// Node topologies and NVLink ring counting (see node_topology.hpp).
#include "models/hardware/node_topology.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>

#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {

const std::vector<NodeTopology>& node_topologies() {
  static const std::vector<NodeTopology> kAll = {
      {"nvswitch",
       "NVSwitch (DGX-A100, DGX-H100, HGX): every GPU pair at full NVLink bandwidth",
       8,
       true,
       {}},
      {"pcie", "PCIe only: one ring through the PCIe switches whatever the subset", 8, true, {}},
      // DGX-1 with V100 (and P100): hybrid cube-mesh, 6 NVLinks per GPU; `nvidia-smi topo -m` of a
      // DGX-1V (NV1/NV2 = one or two links). Two quads (0-3, 4-7) joined by 0-4, 1-5, 2-6, 3-7.
      {"dgx1",
       "DGX-1 hybrid cube-mesh (V100/P100): 6 NVLinks per GPU, two fully linked quads plus cross links",
       8,
       false,
       {{0, 1, 1},
        {0, 2, 1},
        {0, 3, 2},
        {0, 4, 2},
        {1, 2, 2},
        {1, 3, 1},
        {1, 5, 2},
        {2, 3, 2},
        {2, 6, 1},
        {3, 7, 1},
        {4, 5, 1},
        {4, 6, 1},
        {4, 7, 2},
        {5, 6, 2},
        {5, 7, 1},
        {6, 7, 2}}},
  };
  return kAll;
}

const NodeTopology* find_node_topology(std::string_view name) {
  const std::string l = lower(name);
  for (const auto& t : node_topologies())
    if (t.name == l) return &t;
  return nullptr;
}

const NodeTopology& node_topology(std::string_view name, const std::string& file, long line,
                                  const std::string& key) {
  if (const NodeTopology* t = find_node_topology(name)) return *t;
  std::string valid;
  for (const auto& t : node_topologies()) valid += (valid.empty() ? "" : ", ") + t.name;
  throw InputError(file, line, key, "unknown node topology '" + std::string(name) + "'; valid: " + valid);
}

namespace {

int count_rings(const NodeTopology& t, int n) {
  if (n < 2 || n > t.gpus) return 0;
  if (t.switched) return 1;
  // Links left between GPUs a and b (both directions alike), for GPUs 0..n-1.
  std::vector<int> links(static_cast<std::size_t>(n * n), 0);
  const auto cap = [&](int a, int b) -> int& { return links[static_cast<std::size_t>(a * n + b)]; };
  for (const auto& [a, b, count] : t.links) {
    if (a >= n || b >= n) continue;
    cap(a, b) += count;
    cap(b, a) += count;
  }
  if (n == 2) return cap(0, 1);
  // Every Hamiltonian cycle through GPUs 0..n-1 (n <= 8: at most 2,520), each once: it starts at
  // GPU 0 and its second GPU is below its last.
  std::vector<std::vector<int>> cycles;
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  do {
    if (order[1] > order.back()) continue;
    bool linked = true;
    for (int j = 0; j < n && linked; ++j)
      linked = cap(order[static_cast<std::size_t>(j)], order[static_cast<std::size_t>((j + 1) % n)]) > 0;
    if (linked) cycles.push_back(order);
  } while (std::next_permutation(order.begin() + 1, order.end()));
  // The most cycles the link counts carry together (a cycle may repeat): depth-first packing.
  const auto take = [&](const std::vector<int>& c, int delta) {
    bool fits = true;
    for (int j = 0; j < n; ++j) {
      int& l = cap(c[static_cast<std::size_t>(j)], c[static_cast<std::size_t>((j + 1) % n)]);
      int& r = cap(c[static_cast<std::size_t>((j + 1) % n)], c[static_cast<std::size_t>(j)]);
      l -= delta;
      r -= delta;
      fits = fits && l >= 0;
    }
    return fits;
  };
  int best = 0;
  std::function<void(std::size_t, int)> pack = [&](std::size_t from, int used) {
    best = std::max(best, used);
    for (std::size_t i = from; i < cycles.size(); ++i) {
      if (take(cycles[i], 1)) pack(i, used + 1);
      take(cycles[i], -1);
    }
  };
  pack(0, 0);
  return 2 * best;
}

bool has_path(const NodeTopology& t, int n) {
  if (n < 2 || n > t.gpus || t.switched) return false;
  std::vector<int> links(static_cast<std::size_t>(n * n), 0);
  for (const auto& [a, b, count] : t.links)
    if (a < n && b < n)
      links[static_cast<std::size_t>(a * n + b)] = links[static_cast<std::size_t>(b * n + a)] = count;
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  do {
    bool linked = true;
    for (std::size_t j = 0; j + 1 < order.size() && linked; ++j)
      linked = links[static_cast<std::size_t>(order[j] * n + order[j + 1])] > 0;
    if (linked) return true;
  } while (std::next_permutation(order.begin(), order.end()));
  return false;
}

}  // namespace

bool nvlink_chain_only(const NodeTopology& t, int n) {
  return ring_capacity(t, n) == 0 && has_path(t, n);
}

int ring_capacity(const NodeTopology& t, int n) {
  // The known topologies' counts are computed once (predictions ask for them on every call).
  static const std::vector<std::vector<int>> kKnown = [] {
    std::vector<std::vector<int>> out;
    for (const auto& k : node_topologies()) {
      out.emplace_back();
      for (int i = 0; i <= k.gpus; ++i) out.back().push_back(count_rings(k, i));
    }
    return out;
  }();
  const auto& all = node_topologies();
  if (&t >= all.data() && &t < all.data() + all.size()) {
    const auto& row = kKnown[static_cast<std::size_t>(&t - all.data())];
    return n >= 0 && n < static_cast<int>(row.size()) ? row[static_cast<std::size_t>(n)] : 0;
  }
  return count_rings(t, n);
}

}  // namespace fleetsim
