// fgd placement: Fragmentation Gradient Descent (Weng et al., "Beware of Fragmentation:
// Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC'23).
//
// Each node n has an expected fragmentation F_n(M) = sum_m p_m F_n(m) against the target workload
// M (see fragmentation.hpp: F_n(m) is the free GPU capacity of n that a task of class m cannot
// use; p_m the popularity of class m among the workload's GPU requests, as given by
// observe_workload). FGD places a job where its placement increases fragmentation the least:
// among the nodes that fit it, and for a GPU share among the GPUs of the node with enough free
// share, the choice minimising F_n(M) after - F_n(M) before (the steepest descent of the cluster's
// fragmentation). CPU and memory taken by the job count too (they may leave GPUs unusable).
// Ties: lowest node index, then lowest GPU index. Whole GPUs: the node's lowest-index free ones
// (all alike). A job of several GPU shares: least free share first (as the authors' simulator).
// A multi-GPU job that may span nodes and fits no single node takes whole GPUs from the nodes
// with the most usable GPUs first (fewest nodes), lowest index on ties.
// Without observe_workload (no workload known) the distribution is the job alone (myopic FGD).
//
// Cost: a node's F_n(M) and a request's best choice on it are remembered until that node's free
// resources change (checked on every call), so a placement costs O(nodes x GPUs) comparisons plus
// O(classes x GPUs^2) work per changed node. No knobs.
#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "sim/cluster/fragmentation.hpp"
#include "sim/cluster/placer.hpp"

namespace fleetsim {
namespace {

struct Choice {
  std::uint64_t version = 0;  ///< node version it was computed for (0 = never)
  long long delta = 0;        ///< change of count-weighted F_n(M)
  int gpu = -1;               ///< GPU for a single share; -1 = pick_on_node's choice
  bool operator<(const Choice& o) const { return delta < o.delta; }  ///< smaller increase is better
};

struct RequestKey {
  int gpus, milli;
  TypeMask types;
  double cpu, mem;
  bool operator==(const RequestKey&) const = default;
};

struct RequestKeyHash {
  std::size_t operator()(const RequestKey& k) const {
    std::size_t h = std::hash<long long>()(k.gpus * 1000003LL + k.milli);
    auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    mix(std::hash<TypeMask>()(k.types));
    mix(std::hash<double>()(k.cpu));
    mix(std::hash<double>()(k.mem));
    return h;
  }
};

/// Best placement of r on a node with free resources `before` (count-weighted F_n(M) = frag).
Choice evaluate(const NodeFree& before, long long frag, const Request& r, const WorkloadDistribution& d) {
  NodeFree after = before;
  after.cpu_free -= r.cpu_milli;
  after.mem_free -= r.memory_mib;
  Choice best;
  if (r.gpus == 1 && !r.whole()) {
    for (std::size_t g = 0; g < before.gpu_free.size(); ++g) {
      const int f = before.gpu_free[g];
      if (f < r.milli) continue;
      bool seen = false;  // GPUs with the same free share give the same result
      for (std::size_t h = 0; h < g && !seen; ++h) seen = before.gpu_free[h] == f;
      if (seen) continue;
      after.gpu_free[g] = f - r.milli;
      const long long delta = weighted_node_fragmentation(after, d) - frag;
      after.gpu_free[g] = f;
      if (best.gpu < 0 || delta < best.delta) {
        best.delta = delta;
        best.gpu = static_cast<int>(g);
      }
    }
    return best;
  }
  if (r.gpus > 0) {
    std::vector<std::size_t> order(before.gpu_free.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    if (!r.whole())
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return before.gpu_free[a] < before.gpu_free[b]; });
    const int need = r.whole() ? 1000 : r.milli;
    int taken = 0;
    for (std::size_t g : order) {
      if (taken == r.gpus) break;
      if (before.gpu_free[g] < need) continue;
      after.gpu_free[g] -= r.milli;
      ++taken;
    }
  }
  best.delta = weighted_node_fragmentation(after, d) - frag;
  return best;
}

class Fgd final : public Placer {
 public:
  bool wants_workload() const override { return true; }
  void observe_workload(const std::vector<Request>& requests) override {
    dist_ = WorkloadDistribution::from_requests(requests);
    nodes_.clear();
    memo_.clear();
  }

  std::optional<Allocation> place(const Request& r, const ClusterState& s) override {
    if (r.gpus > 0 && r.whole() && s.free_whole_of(r.types) < r.gpus) return std::nullopt;
    const bool cached = !dist_.empty();
    const WorkloadDistribution local =
        cached ? WorkloadDistribution{} : WorkloadDistribution::from_requests({r});
    const WorkloadDistribution& d = cached ? dist_ : local;
    std::vector<Choice>* memo = nullptr;
    if (cached) {
      refresh(s);
      if (memo_.size() > 4096) memo_.clear();
      memo = &memo_[RequestKey{r.gpus, r.milli, r.types, r.cpu_milli, r.memory_mib}];
      memo->resize(static_cast<std::size_t>(s.node_count()));
    }
    const auto [best, choice] = best_node(r, s, [&](int n) {
      if (memo == nullptr) {
        const NodeFree f = node_free(s, n);
        return evaluate(f, weighted_node_fragmentation(f, d), r, d);
      }
      const Node& node = nodes_[static_cast<std::size_t>(n)];
      Choice& m = (*memo)[static_cast<std::size_t>(n)];
      if (m.version != node.version) {
        m = evaluate(node.free, node.frag, r, d);
        m.version = node.version;
      }
      return m;
    });
    if (best >= 0) return choice.gpu >= 0 ? on_gpu(r, s, best, choice.gpu) : on_node(r, s, best);
    return spread_most_free_first(r, s);
  }

 private:
  struct Node {
    NodeFree free;
    long long frag = 0;  ///< count-weighted F_n(M)
    std::uint64_t version = 0;
  };

  /// Bring the per-node copies up to date; a node whose free resources changed gets a new version.
  void refresh(const ClusterState& s) {
    const auto count = static_cast<std::size_t>(s.node_count());
    if (nodes_.size() != count) {
      nodes_.assign(count, Node{});
      memo_.clear();
    }
    for (int n = 0; n < s.node_count(); ++n) {
      Node& node = nodes_[static_cast<std::size_t>(n)];
      bool same = node.version != 0 && node.free.cpu_free == s.cpu_free(n) &&
                  node.free.mem_free == s.mem_free(n) && node.free.type == s.node_type(n) &&
                  node.free.gpu_free.size() == static_cast<std::size_t>(s.node_gpus(n));
      for (int g = 0; same && g < s.node_gpus(n); ++g)
        same = node.free.gpu_free[static_cast<std::size_t>(g)] == s.gpu_free_milli(n, g);
      if (same) continue;
      node.free = node_free(s, n);
      node.frag = weighted_node_fragmentation(node.free, dist_);
      node.version = ++versions_;
    }
  }

  WorkloadDistribution dist_;
  std::vector<Node> nodes_;
  std::unordered_map<RequestKey, std::vector<Choice>, RequestKeyHash> memo_;
  std::uint64_t versions_ = 0;
};

const PlacerRegistrar kRegistrar{
    "fgd", "fragmentation gradient descent: least increase of expected GPU fragmentation",
    [](const PlacerParams&) { return std::make_unique<Fgd>(); }};

}  // namespace
}  // namespace fleetsim
