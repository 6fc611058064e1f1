// A routing policy added in a test: this file defines and registers `first-replica` and runs a tiny
// service through it; nothing else in the tree names it. Times are derived by hand with LinearStep:
// step = 10 ms + 0.1 ms per prefill token + 1 ms per decode.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>

#include "sim/serving/router.hpp"
#include "sim/serving/serving_engine.hpp"
#include "tests/linear_step.hpp"

using namespace fleetsim;
using fleetsim::test::LinearStep;
using fleetsim::test::req;

namespace {

/// Every request to the lowest-numbered replica that can take it.
class FirstReplica final : public Router {
 public:
  std::size_t pick(const ServingRequest& /*request*/,
                   std::span<const RouteCandidate> /*candidates*/) override {
    return 0;
  }
};

const RouterRegistrar kRegistrar{"first-replica", "the lowest-numbered replica that can take the request",
                                 [](const RouterParams&) { return std::make_unique<FirstReplica>(); }};

}  // namespace

TEST_CASE("serving routing: a router registered in a test routes a service by its name") {
  const LinearStep m;
  ServingEngineConfig c;
  c.kv_blocks = 1000;
  c.replicas = 3;
  c.routing = "first-replica";
  c.outages.push_back({0, 0.005, INFINITY});
  // A (100 tokens) prefills on replica 0 from 0; replica 0 fails at 5 ms: A goes to replica 1, the
  // first that can take it, and prefills there from 5 ms: 10 + 10 ms -> its token at 25 ms. B (10
  // tokens, at 10 ms) goes to replica 1 too and waits for that step: 10 + 1 ms -> 36 ms. C (at 40 ms)
  // finds replica 1 idle: 51 ms. Replica 2 never gets a request.
  const auto r = simulate_serving({req(0, 100, 1), req(0.010, 10, 1), req(0.040, 10, 1)}, m, c);
  CHECK(r.requests[0].replica == 1);
  CHECK(r.requests[0].first_token_s == doctest::Approx(0.025));
  CHECK(r.requests[1].replica == 1);
  CHECK(r.requests[1].first_token_s == doctest::Approx(0.036));
  CHECK(r.requests[2].replica == 1);
  CHECK(r.requests[2].end_s == doctest::Approx(0.051));
  CHECK(r.rerouted[0] == 1);
}
