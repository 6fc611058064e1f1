// gpu-packing placement: the GpuPacking baseline of FGD (Weng et al., "Beware of Fragmentation:
// Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC'23, evaluation
// baselines), which fills GPUs already in use before touching idle ones. Among nodes that fit the job,
// in order of preference (the tiers of the authors' simulator):
//   1. the job's GPUs can all be partially used ones (a GPU share that fits a GPU already shared):
//      least free share on the GPUs it takes first;
//   2. a node already in use (some GPU not fully free) on which the job needs fully free GPUs:
//      fewest free whole GPUs first;
//   3. a completely idle node: fewest free whole GPUs (i.e. the smallest node) first.
// Ties go to the lowest node index. GPUs inside the node: a GPU share on the GPU with the least
// free share that fits (a used GPU before an idle one), whole GPUs lowest index first. CPU-only
// jobs: the lowest-index node that fits (the paper's policy scores them all alike).
// A multi-GPU job that may span nodes and fits no single node takes whole GPUs from the nodes
// with the most usable GPUs first (fewest nodes), lowest index on ties. No knobs.
#include <algorithm>
#include <numeric>
#include <tuple>

#include "sim/cluster/placer.hpp"

namespace fleetsim {
namespace {

class GpuPacking final : public Placer {
 public:
  std::optional<Allocation> place(const Request& r, const ClusterState& s) override {
    if (r.gpus > 0 && r.whole() && s.free_whole_of(r.types) < r.gpus) return std::nullopt;
    const int best = r.gpus == 0 ? s.first_fit_node(r)  // all alike: first fit
                                 : best_node(r, s, [&](int n) { return score(r, s, n); }).first;
    if (best >= 0) return on_node(r, s, best);
    return spread_most_free_first(r, s);
  }

 private:
  /// (tier, secondary): smaller is better.
  static std::tuple<int, long long> score(const Request& r, const ClusterState& s, int n) {
    if (r.gpus == 0) return {0, 0};
    if (!r.whole()) {
      // The GPUs pick_on_node would take: least free share first.
      std::vector<int> fits;
      for (int g = 0; g < s.node_gpus(n); ++g)
        if (s.gpu_free_milli(n, g) >= r.milli) fits.push_back(s.gpu_free_milli(n, g));
      std::sort(fits.begin(), fits.end());
      bool all_shared = true;
      long long free_on_taken = 0;
      for (int i = 0; i < r.gpus; ++i) {
        const int f = fits[static_cast<std::size_t>(i)];
        all_shared = all_shared && f < 1000;
        free_on_taken += f;
      }
      if (all_shared) return {1, free_on_taken};
    }
    const bool idle = s.free_whole(n) == s.node_gpus(n);
    return {idle ? 3 : 2, s.free_whole(n)};
  }
};

const PlacerRegistrar kRegistrar{
    "gpu-packing", "shared GPUs first, then used nodes, then idle nodes (FGD paper's GpuPacking)",
    [](const PlacerParams&) { return std::make_unique<GpuPacking>(); }};

}  // namespace
}  // namespace fleetsim
