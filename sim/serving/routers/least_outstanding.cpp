// least-outstanding: the replica with the fewest requests running and waiting, the lowest-numbered on
// ties.
#include "sim/serving/router.hpp"

namespace fleetsim {
namespace {

class LeastOutstanding final : public Router {
 public:
  std::size_t pick(const ServingRequest& /*request*/, std::span<const RouteCandidate> candidates) override {
    std::size_t best = 0;
    for (std::size_t i = 1; i < candidates.size(); ++i)
      if (candidates[i].outstanding() < candidates[best].outstanding()) best = i;
    return best;
  }
};

const RouterRegistrar kRegistrar{
    "least-outstanding", "the replica with the fewest requests running and waiting (lowest index on ties)",
    [](const RouterParams&) { return std::make_unique<LeastOutstanding>(); }};

}  // namespace
}  // namespace fleetsim
