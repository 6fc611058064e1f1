// The autoscaler's power windows (when each replica is switched on, serves and is switched off), and
// how `reclaim` serves on the windows the cluster granted (sim/serving/gpu_reclaim.hpp): outages
// outside them, merged with failover outages; the GPU time held and the peak. Hand-derived with
// LinearStep: step = 10 ms + 0.1 ms per prefill token + 1 ms per decode.
#include <doctest/doctest.h>

#include <cmath>

#include "sim/serving/gpu_reclaim.hpp"
#include "tests/linear_step.hpp"

using namespace fleetsim;
using fleetsim::test::config;
using fleetsim::test::LinearStep;
using fleetsim::test::req;

TEST_CASE("power windows: a replica switched on when a request waits and off when idle") {
  const LinearStep m;
  ServingEngineConfig c = config(2);
  c.max_num_seqs = 1;
  c.min_replicas = 1;
  c.scale_interval_s = 1;
  c.scale_up_queue = 0;
  c.model_load_s = 2;
  // A (0 s) and B (1 ms), 100 in / 100 out, both on replica 0 (the only one ready): A runs 0..1.109 s
  // (prefill 20 ms, 99 decodes of 11 ms), B waits. At 1 s B waits: replica 1 is switched on (ready at
  // 3 s). B runs 1.109..2.218 s on replica 0. At 2 s nothing waits but only one replica is ready; at
  // 3 s replica 1 is ready and idle: switched off. C (5 s) keeps the run going.
  const auto r = simulate_serving({req(0, 100, 100), req(0.001, 100, 100), req(5, 10, 1)}, m, c);
  REQUIRE(r.windows.size() == 2);
  REQUIRE(r.windows[0].size() == 1);
  CHECK(r.windows[0][0].on_s == 0);
  CHECK(r.windows[0][0].ready_s == 0);
  CHECK(std::isinf(r.windows[0][0].off_s));
  REQUIRE(r.windows[1].size() == 1);
  CHECK(r.windows[1][0].on_s == doctest::Approx(1));
  CHECK(r.windows[1][0].ready_s == doctest::Approx(3));
  CHECK(r.windows[1][0].off_s == doctest::Approx(3));
  CHECK(r.requests[1].end_s == doctest::Approx(2.218));
  CHECK(r.replica_s == doctest::Approx(r.end_s + 2));
}

TEST_CASE("reclaim: granted windows become outages, merged with failover outages") {
  ServingEngineConfig e = config(2);
  e.min_replicas = 1;
  e.outages = {{0, 5, 8}, {1, 9, 12}};
  std::vector<long> events = {7, 4};
  const double inf = INFINITY;
  // Replica 0 on throughout. Replica 1: got GPUs at 1 s (serves from 3 s) until 10 s; never got them
  // in its second window; got them at 25 s (serves from 27 s) to the end. Out of service: [0, 3) and
  // [10, 27), the latter joined by its failover outage [9, 12) into [9, 27) (event 4).
  const std::vector<std::vector<PowerWindow>> granted = {{{0, 0, inf}},
                                                         {{1, 3, 10}, {inf, inf, 20}, {25, 27, inf}}};
  serve_granted(granted, e, events);
  REQUIRE(e.outages.size() == 3);
  REQUIRE(events.size() == 3);
  CHECK(e.outages[0].replica == 0);
  CHECK(e.outages[0].down_s == 5);
  CHECK(e.outages[0].up_s == 8);
  CHECK(events[0] == 7);
  CHECK(e.outages[1].replica == 1);
  CHECK(e.outages[1].down_s == 0);
  CHECK(e.outages[1].up_s == 3);
  CHECK(events[1] == -1);
  CHECK(e.outages[2].replica == 1);
  CHECK(e.outages[2].down_s == 9);
  CHECK(e.outages[2].up_s == 27);
  CHECK(events[2] == 4);
  CHECK(e.min_replicas == 0);  // the windows replace the autoscaler
}

TEST_CASE("reclaim: GPU time held and the peak count the granted windows up to the service's end") {
  ServiceSpec spec;
  spec.tensor_parallel = 2;
  const double inf = INFINITY;
  // Replica 0 holds from 0 to the end (50 s); replica 1 from 10 to 30 s and from 40 s on (10 s more);
  // replica 2 never got GPUs. Held: 50 + 20 + 10 = 80 replica-s x 2 GPUs; peak 2.
  const std::vector<std::vector<PowerWindow>> granted = {
      {{0, 0, inf}}, {{10, 12, 30}, {40, 42, inf}}, {{inf, inf, 35}}};
  const std::vector<ReclaimStats> stats = {{0, 0}, {2, 5}, {0, 15}};
  nlohmann::ordered_json j;
  reclaim_summary(spec, Reclaim::kWait, granted, stats, 50, j);
  CHECK(j["gpu_hours"].get<double>() == doctest::Approx(160.0 / 3600));
  CHECK(j["peak_replicas"] == 2);
  CHECK(j["reclaim"] == "wait");
  CHECK(j["reclaim_jobs_preempted"] == 2);
  CHECK(j["reclaim_wait_s"].get<double>() == doctest::Approx(20));
}
