// consolidate placement: fewest nodes, then fewest leaf switches (Tiresias/Gandiva-style
// consolidation). A job that fits one node goes to the fitting node with the fewest free GPUs
// (best fit, lowest index on ties). Otherwise it prefers a single leaf, taking that leaf's
// emptiest nodes first, and picks the leaf needing the fewest nodes (then fewest leftover GPUs);
// if no leaf suffices it takes whole leaves, largest free capacity first.
#include <algorithm>
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
    // Group usable capacity by leaf (a plain scan: most nodes of a busy cluster have a free GPU, so
    // walking the segment tree node by node was 2.4x slower on 100,000 GPUs).
    for (const int leaf : touched_) by_leaf_[static_cast<std::size_t>(leaf)].clear();
    touched_.clear();
    for (int n = 0; n < s.node_count(); ++n) {
      const int u = s.usable_whole(n, r);
      if (u <= 0) continue;
      const auto leaf = static_cast<std::size_t>(s.node_leaf(n));
      if (leaf >= by_leaf_.size()) by_leaf_.resize(leaf + 1);
      if (by_leaf_[leaf].empty()) touched_.push_back(s.node_leaf(n));
      by_leaf_[leaf].push_back({u, n});
    }
    std::sort(touched_.begin(), touched_.end());
    int best_leaf = -1, best_nodes = 0, best_left = 0;
    for (const int leaf : touched_) {
      auto& nodes = by_leaf_[static_cast<std::size_t>(leaf)];
      std::stable_sort(nodes.begin(), nodes.end(),
                       [](const auto& a, const auto& b) { return a.first > b.first; });
      int need = r.gpus, used = 0, total = 0;
      for (const auto& [u, n] : nodes) {
        total += u;
        if (need > 0) {
          need -= std::min(need, u);
          ++used;
        }
      }
      if (need > 0) continue;
      const int left = total - r.gpus;
      if (best_leaf < 0 || used < best_nodes || (used == best_nodes && left < best_left)) {
        best_leaf = leaf;
        best_nodes = used;
        best_left = left;
      }
    }
    order_.clear();
    if (best_leaf >= 0) {
      for (const auto& [u, n] : by_leaf_[static_cast<std::size_t>(best_leaf)]) order_.push_back(n);
      return spread_in_order(r, s, order_);
    }
    // Several leaves: biggest leaves first, emptiest nodes first inside each.
    std::vector<std::pair<int, int>> leaves;  // (free, leaf)
    for (const int leaf : touched_) {
      int total = 0;
      for (const auto& [u, n] : by_leaf_[static_cast<std::size_t>(leaf)]) total += u;
      leaves.push_back({total, leaf});
    }
    std::stable_sort(leaves.begin(), leaves.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [total, leaf] : leaves)
      for (const auto& [u, n] : by_leaf_[static_cast<std::size_t>(leaf)]) order_.push_back(n);
    return spread_in_order(r, s, order_);
  }

  std::vector<std::vector<std::pair<int, int>>> by_leaf_;  ///< (usable GPUs, node), reused between calls
  std::vector<int> touched_;                               ///< leaves with a usable node, ascending
  std::vector<int> order_;
};

const PlacerRegistrar kRegistrar{"consolidate",
                                 "fewest nodes, then fewest leaves; best-fit node for single-node jobs",
                                 [](const PlacerParams&) { return std::make_unique<Consolidate>(); }};

}  // namespace
}  // namespace fleetsim
