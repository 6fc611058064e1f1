// most-free placement: the node with the most free GPUs first (ties: lowest index), taking as many
// of its GPUs as the job still needs, then the next most free, and so on: the greedy choice of the
// Tiresias and Optimus policies in Pollux's simulator (petuum/adaptdl, osdi21-artifact,
// simulator/tiresias.py, `free_gpus.most_common(1)`). So a job goes whole to the most free node (worst
// fit) when it fits there, and spreads over the most free nodes when it fits no node. Jobs that ask
// for a single node, and fractional-GPU jobs, go to the fitting node with the most free GPUs.
#include "sim/cluster/placer.hpp"

namespace fleetsim {
namespace {

class MostFree final : public Placer {
 public:
  std::optional<Allocation> place(const Request& r, const ClusterState& s) override {
    if (r.gpus > 0 && r.whole() && s.free_whole_of(r.types) < r.gpus) return std::nullopt;
    if (r.gpus > 1 && r.whole() && !r.single_node) return spread_most_free_first(r, s);
    const auto [n, score] = best_node(r, s, [&](int node) { return -s.usable_whole(node, r); });
    (void)score;
    if (n < 0) return std::nullopt;
    return on_node(r, s, n);
  }
};

const PlacerRegistrar kRegistrar{"most-free",
                                 "most free node first (worst fit); greedy spread over the most free nodes "
                                 "when none fits (Pollux's simulator)",
                                 [](const PlacerParams&) { return std::make_unique<MostFree>(); }};

}  // namespace
}  // namespace fleetsim
