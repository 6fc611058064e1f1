// vllm-dp: vLLM's data-parallel load balancer (v1 DPLBAsyncMPClient): the rank with the lowest
// 4 x waiting + running, the lowest-numbered on ties, from fresh counts (vLLM's are up to 100 ms old).
// The default of a service with data_parallel > 1.
#include "sim/serving/router.hpp"

namespace fleetsim {
namespace {

class VllmDp final : public Router {
 public:
  std::size_t pick(const ServingRequest& /*request*/, std::span<const RouteCandidate> candidates) override {
    std::size_t best = 0;
    for (std::size_t i = 1; i < candidates.size(); ++i)
      if (score(candidates[i]) < score(candidates[best])) best = i;
    return best;
  }

 private:
  static long score(const RouteCandidate& c) { return 4L * c.waiting + c.running; }
};

const RouterRegistrar kRegistrar{"vllm-dp",
                                 "vLLM's data-parallel balancer: the lowest 4 x waiting + running (the "
                                 "default with data_parallel > 1)",
                                 [](const RouterParams&) { return std::make_unique<VllmDp>(); }};

}  // namespace
}  // namespace fleetsim
