// The serving routers (sim/serving/routers/): each chooses among the replicas that can take a request
// now, with and without the autoscaler alike. Times are derived by hand with LinearStep: step = 10 ms +
// 0.1 ms per prefill token + 1 ms per decode.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "sim/serving/router.hpp"
#include "sim/serving/serving_engine.hpp"
#include "tests/linear_step.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;
using fleetsim::test::config;
using fleetsim::test::LinearStep;
using fleetsim::test::req;

TEST_CASE("serving routing: the four policies are registered, an unknown name lists them") {
  for (const char* name : {"round-robin", "least-outstanding", "prefix-aware", "vllm-dp"})
    CHECK(routers().contains(name));
  const LinearStep m;
  ServingEngineConfig c = config(2);
  c.routing = "least-outstandnig";
  std::string message;
  try {
    simulate_serving({req(0, 10, 1)}, m, c);
  } catch (const InputError& e) {
    message = e.what();
  }
  CHECK(message.find("did you mean 'least-outstanding'") != std::string::npos);
  CHECK(message.find("prefix-aware, round-robin, vllm-dp") != std::string::npos);
}

TEST_CASE("serving routing: round-robin skips a replica in an outage") {
  const LinearStep m;
  ServingEngineConfig c = config(3);
  c.outages.push_back({1, 0, INFINITY});
  std::vector<ServingRequest> reqs;
  for (int i = 0; i < 5; ++i) reqs.push_back(req(0.001 * i, 10, 1));
  const auto r = simulate_serving(reqs, m, c);
  for (int i = 0; i < 5; ++i) CHECK(r.requests[static_cast<std::size_t>(i)].replica == (i % 2 == 0 ? 0 : 2));
}

TEST_CASE("serving routing: round-robin under the autoscaler takes the next ready replica after the last") {
  const LinearStep m;
  ServingEngineConfig c = config(2);
  c.min_replicas = 1;  // replica 1 starts off
  c.scale_interval_s = 0.05;
  c.scale_up_queue = 0;
  c.model_load_s = 0.01;
  // A (1000 tokens) runs on replica 0 from 0 to 110 ms; B waits behind it. The decision at 50 ms
  // switches replica 1 on (B waits), ready at 60 ms. C (at 70 ms) goes to the next replica after
  // replica 0: replica 1, idle: 10 + 1 ms -> 81 ms. D (at 80 ms) wraps around to replica 0.
  const auto r =
      simulate_serving({req(0, 1000, 1), req(0.001, 1000, 1), req(0.070, 10, 1), req(0.080, 10, 1)}, m, c);
  CHECK(r.requests[0].replica == 0);
  CHECK(r.requests[1].replica == 0);
  CHECK(r.requests[2].replica == 1);
  CHECK(r.requests[2].end_s == doctest::Approx(0.081));
  CHECK(r.requests[3].replica == 0);
  CHECK(r.peak_replicas == 2);
}

TEST_CASE("serving routing: vllm-dp weighs waiting 4 to 1 under the autoscaler too") {
  // The case of test_serving_engine's vllm-dp test on replicas 0 and 1, with a third replica the
  // autoscaler keeps off (min_replicas 2, no queue is ever long enough): the same choices.
  const LinearStep m;
  std::vector<ServingRequest> reqs;
  for (int i = 0; i < 6; ++i) reqs.push_back(req(0, 10, i == 1 || i == 3 ? 1 : 500));
  reqs.push_back(req(1.0, 10, 5));
  reqs.push_back(req(1.0, 10, 5));
  ServingEngineConfig c = config(3);
  c.max_num_seqs = 8;
  c.min_replicas = 2;
  c.scale_up_queue = 1e9;
  for (const std::string routing : {"vllm-dp", "least-outstanding"}) {
    c.routing = routing;
    const auto r = simulate_serving(reqs, m, c);
    for (int i = 0; i < 6; ++i) CHECK(r.requests[static_cast<std::size_t>(i)].replica == i % 2);
    CHECK(r.requests[6].replica == 1);
    CHECK(r.requests[7].replica == (routing == "vllm-dp" ? 0 : 1));
    CHECK(r.peak_replicas == 2);
  }
}
