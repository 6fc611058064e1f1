// consolidate placement: fewest nodes, then fewest leaf switches (Tiresias/Gandiva-style
// consolidation). A job that fits one node goes to the fitting node with the fewest free GPUs
// (best fit, lowest index on ties). Otherwise it prefers a single leaf, taking that leaf's
// emptiest nodes first, and picks the leaf needing the fewest nodes (then fewest leftover GPUs);
// if no leaf suffices it takes whole leaves, largest free capacity first.
#include <algorithm>
#include <array>
#include <vector>

#include "sim/cluster/placer.hpp"

namespace fleetsim {
namespace {

class Consolidate final : public Placer {
 public:
  std::optional<Allocation> place(const Request& r, const ClusterState& s) override {
    if (r.gpus > 0 && r.whole() && s.free_whole_of(r.types) < r.gpus) return std::nullopt;
    if (const int n = s.best_fit_node(r); n >= 0) return on_node(r, s, n);
    if (r.single_node || !r.whole() || r.gpus <= 1) return std::nullopt;
    return multi_node(r, s);
  }

 private:
  std::optional<Allocation> multi_node(const Request& r, const ClusterState& s) {
    // Per leaf, how many nodes have u usable GPUs (u = 1..max): enough to find the leaf needing the
    // fewest nodes (greedy, emptiest first) without sorting every leaf's nodes. A plain scan: most
    // nodes of a busy cluster have a free GPU, so walking the segment tree node by node is slower.
    const int max_u = static_cast<int>(s.largest_node().gpu_milli / 1000);
    const auto width = static_cast<std::size_t>(max_u + 1);
    for (const int leaf : touched_)
      std::fill_n(hist_.begin() + static_cast<std::ptrdiff_t>(leaf * width), width, 0);
    touched_.clear();
    for (int n = 0; n < s.node_count(); ++n) {
      const int u = s.usable_whole(n, r);
      if (u <= 0) continue;
      const auto leaf = static_cast<std::size_t>(s.node_leaf(n));
      if ((leaf + 1) * width > hist_.size()) hist_.resize((leaf + 1) * width, 0);
      int* h = &hist_[leaf * width];
      if (h[0] == 0) touched_.push_back(s.node_leaf(n));
      h[0] += u;  // the leaf's usable GPUs
      ++h[u];
    }
    std::sort(touched_.begin(), touched_.end());
    int best_leaf = -1, best_nodes = 0, best_left = 0;
    for (const int leaf : touched_) {
      const int* h = &hist_[static_cast<std::size_t>(leaf) * width];
      if (h[0] < r.gpus) continue;
      int need = r.gpus, used = 0;
      for (int u = max_u; u >= 1 && need > 0; --u) {
        const int take = std::min(h[u], (need + u - 1) / u);
        used += take;
        need -= std::min(need, take * u);
      }
      const int left = h[0] - r.gpus;
      if (best_leaf < 0 || used < best_nodes || (used == best_nodes && left < best_left)) {
        best_leaf = leaf;
        best_nodes = used;
        best_left = left;
      }
    }
    // The chosen leaf's nodes, emptiest first (ties: lowest index); with no leaf sufficing, all
    // leaves, most usable GPUs first, emptiest nodes first inside each.
    std::vector<int> leaves;
    if (best_leaf >= 0) {
      leaves.push_back(best_leaf);
    } else {
      leaves = touched_;
      std::stable_sort(leaves.begin(), leaves.end(), [&](int a, int b) {
        return hist_[static_cast<std::size_t>(a) * width] > hist_[static_cast<std::size_t>(b) * width];
      });
    }
    rank_.assign(hist_.size() / width, -1);
    for (std::size_t k = 0; k < leaves.size(); ++k)
      rank_[static_cast<std::size_t>(leaves[k])] = static_cast<int>(k);
    nodes_.clear();  // (leaf rank, -usable, node)
    for (int n = 0; n < s.node_count(); ++n) {
      const auto leaf = static_cast<std::size_t>(s.node_leaf(n));
      if (leaf >= rank_.size() || rank_[leaf] < 0) continue;
      if (const int u = s.usable_whole(n, r); u > 0) nodes_.push_back({rank_[leaf], -u, n});
    }
    std::sort(nodes_.begin(), nodes_.end());
    order_.clear();
    for (const auto& e : nodes_) order_.push_back(e[2]);
    return spread_in_order(r, s, order_);
  }

  std::vector<int> hist_;     ///< per leaf: [0] usable GPUs, [u] nodes with u usable GPUs
  std::vector<int> touched_;  ///< leaves with a usable node, ascending
  std::vector<int> rank_;     ///< per leaf: its place in the spread order, -1 if not used
  std::vector<std::array<int, 3>> nodes_;
  std::vector<int> order_;
};

const PlacerRegistrar kRegistrar{"consolidate",
                                 "fewest nodes, then fewest leaves; best-fit node for single-node jobs",
                                 [](const PlacerParams&) { return std::make_unique<Consolidate>(); }};

}  // namespace
}  // namespace fleetsim
