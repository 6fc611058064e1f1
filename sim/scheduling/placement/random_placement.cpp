// random placement: a uniformly random node among those that can host the whole job (the
// Random-fit baseline of FGD, Weng et al., USENIX ATC'23). A GPU share goes to a uniformly random
// GPU of that node with enough free share; whole GPUs are the node's lowest-index free ones (all
// free whole GPUs of a node are alike). A multi-GPU job that may span nodes and fits no single
// node takes whole GPUs from the nodes with usable GPUs in a uniformly random order.
//
// Deterministic across platforms: std::mt19937_64 seeded with PlacerParams::seed (the scenario
// seed) and our own unbiased draw (rejection sampling), since std::uniform_int_distribution's
// algorithm differs between standard libraries. No knobs.
#include <limits>
#include <random>

#include "sim/cluster/placer.hpp"

namespace fleetsim {
namespace {

/// Uniform integer in [0, n), n >= 1: rejection sampling on the generator's full 64-bit range.
std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n) {
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() -
                              std::numeric_limits<std::uint64_t>::max() % n;  // multiple of n
  std::uint64_t x = rng();
  while (x >= limit) x = rng();
  return x % n;
}

class RandomPlacement final : public Placer {
 public:
  explicit RandomPlacement(std::uint64_t seed) : rng_(seed) {}

  std::optional<Allocation> place(const Request& r, const ClusterState& s) override {
    if (r.gpus > 0 && r.whole() && s.free_whole_of(r.types) < r.gpus) return std::nullopt;
    feasible_.clear();
    for (int n = s.first_fit_node(r); n >= 0 && n < s.node_count(); ++n)
      if (s.fits_node(n, r)) feasible_.push_back(n);
    if (!feasible_.empty()) {
      const int n = feasible_[uniform_below(rng_, feasible_.size())];
      Allocation a;
      if (r.gpus == 1 && !r.whole()) {
        std::vector<int> gpus;
        for (int g = 0; g < s.node_gpus(n); ++g)
          if (s.gpu_free_milli(n, g) >= r.milli) gpus.push_back(g);
        a.slots.push_back({n, gpus[uniform_below(rng_, gpus.size())], r.milli});
      } else {
        s.pick_on_node(n, r, r.gpus, a);
      }
      s.finalize(r, a);
      return a;
    }
    if (r.single_node || !r.whole() || r.gpus <= 1) return std::nullopt;
    std::vector<int> order;
    for (int n = 0; n < s.node_count(); ++n)
      if (s.usable_whole(n, r) > 0) order.push_back(n);
    for (std::size_t i = order.size(); i > 1; --i)  // Fisher-Yates
      std::swap(order[i - 1], order[uniform_below(rng_, i)]);
    return spread_in_order(r, s, order);
  }

 private:
  std::mt19937_64 rng_;
  std::vector<int> feasible_;
};

const PlacerRegistrar kRegistrar{
    "random", "uniformly random feasible node (seeded; FGD paper's Random-fit)",
    [](const PlacerParams& p) { return std::make_unique<RandomPlacement>(p.seed); }};

}  // namespace
}  // namespace fleetsim
