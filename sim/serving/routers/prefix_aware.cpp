// prefix-aware: the replica whose prefix cache holds the longest run of the request's leading block
// hashes; ties (no hit anywhere, say) go to the least outstanding, then the lowest-numbered.
#include "sim/serving/router.hpp"

namespace fleetsim {
namespace {

class PrefixAware final : public Router {
 public:
  std::size_t pick(const ServingRequest& request, std::span<const RouteCandidate> candidates) override {
    std::size_t best = 0;
    std::size_t best_hit = candidates[0].cache->peek(request.block_hashes);
    for (std::size_t i = 1; i < candidates.size(); ++i) {
      const std::size_t hit = candidates[i].cache->peek(request.block_hashes);
      if (hit > best_hit ||
          (hit == best_hit && candidates[i].outstanding() < candidates[best].outstanding())) {
        best = i;
        best_hit = hit;
      }
    }
    return best;
  }
};

const RouterRegistrar kRegistrar{
    "prefix-aware",
    "the replica whose prefix cache holds the longest run of the request's block hashes (ties: least "
    "outstanding)",
    [](const RouterParams&) { return std::make_unique<PrefixAware>(); }};

}  // namespace
}  // namespace fleetsim
