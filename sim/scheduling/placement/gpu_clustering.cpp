// gpu-clustering placement: the GpuClustering baseline of FGD (Weng et al., "Beware of
// Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX
// ATC'23, evaluation baselines): pack jobs with the same GPU request (GPUs x share per GPU) together, so
// identical fractional requests fill the same GPUs and nodes. Among nodes that fit the job, in
// order of preference (the tiers of the authors' simulator):
//   1. nodes running only jobs of the same GPU request;
//   2. nodes running jobs of this request and of others;
//   3. idle nodes (no GPU job);
//   4. nodes running only jobs of other requests;
// inside a tier the node with the least free GPU capacity first, then the lowest index. Inside
// the node a GPU share goes to a GPU holding only this request (least free first), else to the
// GPU with the least free share that fits; whole GPUs lowest index first. CPU-only jobs: the
// lowest-index node that fits (the paper's policy scores them all alike).
// A multi-GPU job that may span nodes and fits no single node takes whole GPUs from the nodes
// with the most usable GPUs first (fewest nodes), lowest index on ties.
//
// What runs where: ClusterState has free capacity, not jobs, so the placer remembers which
// request it placed on each GPU, and forgets a GPU's requests when it sees that GPU fully free
// again. A job that leaves a GPU others still share leaves its request remembered until the GPU
// empties (exact without departures, as in the paper's experiments). No knobs.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <tuple>

#include "sim/cluster/placer.hpp"

namespace fleetsim {
namespace {

using Tag = std::uint32_t;  ///< GPU request: GPUs << 11 | share

class GpuClustering final : public Placer {
 public:
  std::optional<Allocation> place(const Request& r, const ClusterState& s) override {
    if (r.gpus > 0 && r.whole() && s.free_whole_of(r.types) < r.gpus) return std::nullopt;
    tags_.resize(static_cast<std::size_t>(s.node_count()));
    for (int n = 0; n < s.node_count(); ++n)
      tags_[static_cast<std::size_t>(n)].resize(static_cast<std::size_t>(s.node_gpus(n)));
    const Tag tag = static_cast<Tag>(r.gpus) << 11 | static_cast<Tag>(std::min(r.milli, 1000));
    const int best = r.gpus == 0 ? s.first_fit_node(r)  // all alike: first fit
                                 : best_node(r, s, [&](int n) { return score(s, n, tag); }).first;
    if (best >= 0) {
      Allocation a;
      const int g = r.gpus == 1 && !r.whole() ? same_tag_gpu(s, best, r.milli, tag) : -1;
      if (g >= 0)
        a.slots.push_back({best, g, r.milli});
      else
        s.pick_on_node(best, r, r.gpus, a);
      s.finalize(r, a);
      remember(s, a, tag);
      return a;
    }
    auto a = spread_most_free_first(r, s);
    if (a) remember(s, *a, tag);
    return a;
  }

 private:
  std::vector<Tag>& gpu_tags(int n, int g) {
    return tags_[static_cast<std::size_t>(n)][static_cast<std::size_t>(g)];
  }

  /// (tier, free GPU capacity): smaller is better. Forgets the requests of fully free GPUs.
  std::tuple<int, long long> score(const ClusterState& s, int n, Tag tag) {
    bool same = false, other = false;
    long long free = 0;
    for (int g = 0; g < s.node_gpus(n); ++g) {
      const int f = s.gpu_free_milli(n, g);
      free += f;
      auto& tags = gpu_tags(n, g);
      if (f >= 1000) tags.clear();
      for (Tag t : tags) (t == tag ? same : other) = true;
    }
    const int tier = same ? (other ? 2 : 1) : (other ? 4 : 3);
    return {tier, free};
  }

  /// A GPU of node n holding only `tag` with room for `milli` (least free first), or -1.
  int same_tag_gpu(const ClusterState& s, int n, int milli, Tag tag) {
    int best = -1;
    for (int g = 0; g < s.node_gpus(n); ++g) {
      const int f = s.gpu_free_milli(n, g);
      const auto& tags = gpu_tags(n, g);
      if (f < milli || tags.empty() ||
          !std::all_of(tags.begin(), tags.end(), [&](Tag t) { return t == tag; }))
        continue;
      if (best < 0 || f < s.gpu_free_milli(n, best)) best = g;
    }
    return best;
  }

  void remember(const ClusterState& s, const Allocation& a, Tag tag) {
    for (const auto& slot : a.slots) {
      if (slot.gpu < 0) continue;
      auto& tags = gpu_tags(slot.node, slot.gpu);
      if (s.gpu_free_milli(slot.node, slot.gpu) >= 1000) tags.clear();  // was idle: forget
      if (std::find(tags.begin(), tags.end(), tag) == tags.end()) tags.push_back(tag);
    }
  }

  std::vector<std::vector<std::vector<Tag>>> tags_;  ///< [node][gpu]: requests placed there
};

const PlacerRegistrar kRegistrar{"gpu-clustering",
                                 "pack identical GPU requests on the same nodes (FGD paper's GpuClustering)",
                                 [](const PlacerParams&) { return std::make_unique<GpuClustering>(); }};

}  // namespace
}  // namespace fleetsim
