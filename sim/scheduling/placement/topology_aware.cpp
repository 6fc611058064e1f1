// topology placement: fewest leaf switches, then fewest nodes, then least leftover capacity.
//
// In a leaf-spine (or fat-tree) fabric, traffic between two nodes under the same leaf switch
// crosses only that switch (node -> leaf -> node); between nodes under different leaves it takes
// the "spine hops" leaf -> spine -> leaf, over the leaves' uplinks, which are shared and usually
// oversubscribed. A distributed job's collective traffic therefore stays off the spine only if it
// sits in one leaf, and every further leaf adds spine traffic. So (topology-aware placement as in
// e.g. Tiresias / HiveD's affinity tiers):
//   1. a job that fits one node goes to the fitting node with the least free GPU capacity left
//      after placement (best fit; lowest index on ties): 1 node, 1 leaf, no network hops;
//   2. otherwise (a whole-GPU job that may span nodes), the leaf able to host it alone with the
//      fewest nodes, then the least usable GPUs left in that leaf (so empty leaves stay free for
//      big jobs), then the lowest leaf index; inside it, nodes with the most usable GPUs first and
//      the last node the smallest one that completes the job;
//   3. otherwise the fewest leaves: leaves with the most usable GPUs first, taken whole, and as
//      the last leaf the one that completes the job with the fewest nodes (then least left in
//      it, then lowest index); nodes inside it as in 2.
// In a 3-tier fabric (network.leaves_per_pod > 0), step 3 first looks for one pod that can host the
// job (ClusterState::node_pod), so that its traffic does not cross the core; otherwise the fewest pods.
// Leaves come from ClusterState::node_leaf (the node's leaf switch). No knobs.
#include <algorithm>
#include <functional>
#include <map>

#include "sim/cluster/placer.hpp"

namespace fleetsim {
namespace {

/// Indices into `caps` (sorted by capacity, largest first) covering `need` with the fewest items:
/// the largest ones, the last replaced by the smallest item that still completes the sum.
/// Empty if the items cannot cover `need`.
std::vector<std::size_t> fewest_cover(const std::vector<int>& caps, int need) {
  std::vector<std::size_t> pick;
  int got = 0;
  for (std::size_t i = 0; i < caps.size() && got < need; ++i) {
    pick.push_back(i);
    got += caps[i];
  }
  if (got < need) return {};
  const int before_last = got - caps[pick.back()];
  std::size_t last = pick.back();
  for (std::size_t i = last + 1; i < caps.size(); ++i)
    if (before_last + caps[i] >= need && caps[i] < caps[last]) last = i;  // smallest, lowest index
  pick.back() = last;
  return pick;
}

class Topology final : public Placer {
 public:
  std::optional<Allocation> place(const Request& r, const ClusterState& s) override {
    if (r.gpus > 0 && r.whole() && s.free_whole_of(r.types) < r.gpus) return std::nullopt;
    if (const int n = s.best_fit_node(r); n >= 0) return on_node(r, s, n);
    if (r.single_node || !r.whole() || r.gpus <= 1) return std::nullopt;
    return multi_node(r, s);
  }

 private:
  struct Leaf {
    int pod = 0;  ///< ClusterState::node_pod of its nodes
    int total = 0;
    std::vector<std::pair<int, int>> nodes;  // (usable GPUs, node), most usable first
  };

  /// Nodes of a leaf chosen to cover `need` GPUs with the fewest nodes (appended to `order`).
  static void leaf_nodes(const Leaf& leaf, int need, std::vector<int>& order) {
    std::vector<int> caps;
    for (const auto& [u, n] : leaf.nodes) caps.push_back(u);
    for (std::size_t i : fewest_cover(caps, need)) order.push_back(leaf.nodes[i].second);
  }

  std::optional<Allocation> multi_node(const Request& r, const ClusterState& s) {
    leaves_.clear();
    for (int n = 0; n < s.node_count(); ++n) {
      const int u = s.usable_whole(n, r);
      if (u <= 0) continue;
      Leaf& l = leaves_[s.node_leaf(n)];
      l.pod = s.node_pod(n);
      l.total += u;
      l.nodes.push_back({u, n});
    }
    for (auto& [id, l] : leaves_)
      std::stable_sort(l.nodes.begin(), l.nodes.end(),
                       [](const auto& a, const auto& b) { return a.first > b.first; });
    // 2. one leaf: fewest nodes, then least left in the leaf, then lowest leaf index.
    const Leaf* best = nullptr;
    std::size_t best_nodes = 0;
    int best_left = 0;
    for (const auto& [id, l] : leaves_) {
      if (l.total < r.gpus) continue;
      std::vector<int> caps;
      for (const auto& [u, n] : l.nodes) caps.push_back(u);
      const std::size_t used = fewest_cover(caps, r.gpus).size();
      const int left = l.total - r.gpus;
      if (best == nullptr || used < best_nodes || (used == best_nodes && left < best_left)) {
        best = &l;
        best_nodes = used;
        best_left = left;
      }
    }
    if (best != nullptr) {
      std::vector<int> order;
      leaf_nodes(*best, r.gpus, order);
      return spread_in_order(r, s, order);
    }
    // 3. several leaves. In a 3-tier fabric, inside one pod when a pod can host the job alone, so
    //    its traffic stays under the pod's spines, off the (usually oversubscribed) core: the pod
    //    needing the fewest leaves, then the least left in it, then the lowest pod index. Otherwise
    //    the fewest pods (largest first, the last the smallest that completes the job), and the
    //    fewest leaves among theirs.
    std::vector<const Leaf*> all;
    for (const auto& [id, l] : leaves_) all.push_back(&l);
    if (s.spec().network.leaves_per_pod <= 0) return across_leaves(r, s, all);
    std::map<int, std::vector<const Leaf*>> pods;
    for (const Leaf* l : all) pods[l->pod].push_back(l);
    const std::vector<const Leaf*>* best_pod = nullptr;
    std::size_t best_leaves = 0;
    int best_pod_left = 0;
    std::vector<std::pair<int, int>> pod_totals;  // (usable GPUs, pod)
    for (const auto& [p, ls] : pods) {
      const std::vector<int> caps = sorted_totals(ls);
      int total = 0;
      for (const int c : caps) total += c;
      pod_totals.push_back({total, p});
      if (total < r.gpus) continue;
      const std::size_t used = fewest_cover(caps, r.gpus).size();
      if (best_pod == nullptr || used < best_leaves ||
          (used == best_leaves && total - r.gpus < best_pod_left)) {
        best_pod = &ls;
        best_leaves = used;
        best_pod_left = total - r.gpus;
      }
    }
    if (best_pod != nullptr) return across_leaves(r, s, *best_pod);
    std::stable_sort(pod_totals.begin(), pod_totals.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<int> pod_caps;
    for (const auto& [total, p] : pod_totals) pod_caps.push_back(total);
    std::vector<const Leaf*> chosen;
    for (const std::size_t k : fewest_cover(pod_caps, r.gpus)) {
      const auto& ls = pods[pod_totals[k].second];
      chosen.insert(chosen.end(), ls.begin(), ls.end());
    }
    if (chosen.empty()) return std::nullopt;
    return across_leaves(r, s, chosen);
  }

  /// Leaf totals, largest first.
  static std::vector<int> sorted_totals(const std::vector<const Leaf*>& leaves) {
    std::vector<int> caps;
    for (const Leaf* l : leaves) caps.push_back(l->total);
    std::stable_sort(caps.begin(), caps.end(), std::greater<>());
    return caps;
  }

  /// Fewest leaves among `candidates`: the largest leaves whole, the last leaf the one that
  /// completes the job with the fewest nodes, then the least left in it, then the lowest leaf index.
  static std::optional<Allocation> across_leaves(const Request& r, const ClusterState& s,
                                                 std::vector<const Leaf*> by_size) {
    std::vector<int> order;
    std::vector<int> caps;
    std::stable_sort(by_size.begin(), by_size.end(),
                     [](const Leaf* a, const Leaf* b) { return a->total > b->total; });
    for (const Leaf* l : by_size) caps.push_back(l->total);
    const std::vector<std::size_t> pick = fewest_cover(caps, r.gpus);
    if (pick.empty()) return std::nullopt;
    int need = r.gpus;
    for (std::size_t k = 0; k + 1 < pick.size(); ++k) {
      leaf_nodes(*by_size[pick[k]], by_size[pick[k]]->total, order);
      need -= by_size[pick[k]]->total;
    }
    const Leaf* last = nullptr;
    std::size_t last_nodes = 0;
    int last_left = 0;
    for (std::size_t i = pick.size() - 1; i < by_size.size(); ++i) {
      const Leaf& l = *by_size[i];
      if (l.total < need) continue;
      std::vector<int> node_caps;
      for (const auto& [u, n] : l.nodes) node_caps.push_back(u);
      const std::size_t used = fewest_cover(node_caps, need).size();
      if (last == nullptr || used < last_nodes || (used == last_nodes && l.total - need < last_left)) {
        last = &l;
        last_nodes = used;
        last_left = l.total - need;
      }
    }
    leaf_nodes(*last, need, order);
    return spread_in_order(r, s, order);
  }

  std::map<int, Leaf> leaves_;
};

const PlacerRegistrar kRegistrar{"topology",
                                 "fewest leaf switches (spine hops), then fewest nodes, then least leftover",
                                 [](const PlacerParams&) { return std::make_unique<Topology>(); }};

}  // namespace
}  // namespace fleetsim
