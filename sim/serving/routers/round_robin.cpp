// round-robin: each request goes to the next replica after the one chosen last, in replica order,
// skipping replicas that cannot take it now (in an outage, or switched off by the autoscaler).
#include "sim/serving/router.hpp"

namespace fleetsim {
namespace {

class RoundRobin final : public Router {
 public:
  std::size_t pick(const ServingRequest& /*request*/, std::span<const RouteCandidate> candidates) override {
    std::size_t i = 0;
    while (i < candidates.size() && candidates[i].replica <= last_) ++i;
    if (i == candidates.size()) i = 0;  // wrap around
    last_ = candidates[i].replica;
    return i;
  }

 private:
  int last_ = -1;  ///< the replica chosen last
};

const RouterRegistrar kRegistrar{"round-robin",
                                 "the next replica after the one chosen last, in replica order (the default)",
                                 [](const RouterParams&) { return std::make_unique<RoundRobin>(); }};

}  // namespace
}  // namespace fleetsim
