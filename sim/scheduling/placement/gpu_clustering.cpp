// gpu-clustering placement: the GpuClustering baseline of FGD (Weng et al., "Beware of
// Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX
// ATC'23, evaluation baselines), as the authors' simulator scores it
// (hkust-adsl/kubernetes-scheduler-simulator, GpuClusteringScorePlugin.Score): pack jobs of the
// same kind together. A job's kind ("GPU affinity") is "share" for every fractional one-GPU job,
// whatever its share, and "N whole GPUs" otherwise. Among nodes that fit the job, in order of
// preference (the four tiers of the score):
//   1. nodes running only jobs of the same kind;
//   2. nodes running jobs of this kind and of others;
//   3. idle nodes (no GPU job);
//   4. nodes running only jobs of other kinds;
// inside a tier the score is the integer 25 * (8000 - free GPU milli) / 8000, so nodes whose
// free capacity falls in the same 320-milli bucket tie and the lowest index wins (the
// framework's smallest node name). Inside the node the GPUs are the simulator's default choice
// (ClusterState::pick_on_node: best-fit share, whole GPUs lowest index first). CPU-only jobs: the
// lowest-index node that fits (the policy scores them all alike).
// A multi-GPU job that may span nodes and fits no single node takes whole GPUs from the nodes
// with the most usable GPUs first (fewest nodes), lowest index on ties.
//
// What runs where: ClusterState has free capacity, not jobs, so the placer remembers which
// kinds it placed on each GPU, and forgets a GPU's kinds when it sees that GPU fully free
// again. A job that leaves a GPU others still share leaves its kind remembered until the GPU
// empties (exact without departures, as in the paper's experiments). No knobs.
#include <algorithm>
#include <cstdint>

#include "sim/cluster/placer.hpp"

namespace fleetsim {
namespace {

using Kind = std::uint32_t;  ///< whole GPUs requested; 0: a fractional share of one GPU

constexpr long long kMaxSpecMilli = 8000;  ///< the score's normalisation (8 GPUs)
constexpr int kTierWidth = 25;             ///< framework.MaxNodeScore / 4

class GpuClustering final : public Placer {
 public:
  std::optional<Allocation> place(const Request& r, const ClusterState& s) override {
    if (r.gpus > 0 && r.whole() && s.free_whole_of(r.types) < r.gpus) return std::nullopt;
    kinds_.resize(static_cast<std::size_t>(s.node_count()));
    for (int n = 0; n < s.node_count(); ++n)
      kinds_[static_cast<std::size_t>(n)].resize(static_cast<std::size_t>(s.node_gpus(n)));
    const Kind kind = r.whole() ? static_cast<Kind>(r.gpus) : 0;
    const int best = r.gpus == 0 ? s.first_fit_node(r)  // all alike: first fit
                                 : best_node(r, s, [&](int n) { return -score(s, n, kind); }).first;
    if (best >= 0) {
      auto a = on_node(r, s, best);
      remember(s, a, kind);
      return a;
    }
    auto a = spread_most_free_first(r, s);
    if (a) remember(s, *a, kind);
    return a;
  }

 private:
  std::vector<Kind>& gpu_kinds(int n, int g) {
    return kinds_[static_cast<std::size_t>(n)][static_cast<std::size_t>(g)];
  }

  /// The plugin's score in [0, 100], higher is better. Forgets the kinds of fully free GPUs.
  int score(const ClusterState& s, int n, Kind kind) {
    bool same = false, other = false;
    long long free = 0;
    for (int g = 0; g < s.node_gpus(n); ++g) {
      const int f = s.gpu_free_milli(n, g);
      free += f;
      auto& kinds = gpu_kinds(n, g);
      if (f >= 1000) kinds.clear();
      for (Kind k : kinds) (k == kind ? same : other) = true;
    }
    const int tier = same ? (other ? 2 : 3) : (other ? 0 : 1);  // tiers 1..4 above, as offsets
    return static_cast<int>(kTierWidth * (kMaxSpecMilli - free) / kMaxSpecMilli) + tier * kTierWidth;
  }

  void remember(const ClusterState& s, const Allocation& a, Kind kind) {
    for (const auto& slot : a.slots) {
      if (slot.gpu < 0) continue;
      auto& kinds = gpu_kinds(slot.node, slot.gpu);
      if (s.gpu_free_milli(slot.node, slot.gpu) >= 1000) kinds.clear();  // was idle: forget
      if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
    }
  }

  std::vector<std::vector<std::vector<Kind>>> kinds_;  ///< [node][gpu]: kinds placed there
};

const PlacerRegistrar kRegistrar{
    "gpu-clustering",
    "pack jobs of the same kind (share / N GPUs) on the same nodes (FGD paper's GpuClustering)",
    [](const PlacerParams&) { return std::make_unique<GpuClustering>(); }};

}  // namespace
}  // namespace fleetsim
