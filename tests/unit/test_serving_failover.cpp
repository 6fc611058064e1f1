// Serving failover (issue 15): a replica outage loses the replica's step in flight and its KV; its
// requests go to the surviving replicas (or wait for one) and prefill again. Times are derived by
// hand with LinearStep: step = 10 ms + 0.1 ms per prefill token + 1 ms per decode.
#include <doctest/doctest.h>

#include "sim/serving/serving_engine.hpp"
#include "tests/linear_step.hpp"

using namespace fleetsim;
using fleetsim::test::config;
using fleetsim::test::LinearStep;
using fleetsim::test::req;

TEST_CASE("serving failover: a request in prefill on a failed replica is re-routed and prefills again") {
  const LinearStep m;
  ServingEngineConfig c = config(2);  // round-robin: A -> replica 0, B -> replica 1
  c.outages.push_back({0, 0.015, INFINITY});
  // A (100 tokens) prefills on replica 0 from 0 to 20 ms; replica 0 fails at 15 ms: A goes to
  // replica 1. There B (10 tokens at 1 ms) prefilled 1..12 ms (11 ms) and decodes 12..23 ms (11 ms);
  // at 23 ms replica 1 runs B's decode with A's whole prefill: 10 + 1 + 10 = 21 ms -> A's first token
  // at 44 ms. Then A decodes twice beside B: 12 ms each -> A ends at 68 ms.
  const auto r = simulate_serving({req(0, 100, 3), req(0.001, 10, 50)}, m, c);
  const auto& a = r.requests[0];
  CHECK(a.first_token_s == doctest::Approx(0.044));
  CHECK(a.end_s == doctest::Approx(0.068));
  CHECK(a.replica == 1);
  CHECK(a.preemptions == 0);
  CHECK(r.requests[1].first_token_s == doctest::Approx(0.012));
  REQUIRE(r.rerouted.size() == 1);
  CHECK(r.rerouted[0] == 1);
}

TEST_CASE("serving failover: with no replica up, requests wait for the repaired one") {
  const LinearStep m;
  ServingEngineConfig c = config(1);
  c.outages.push_back({0, 0.005, 1.0});
  // A (100 tokens at 0) loses its prefill at 5 ms; B arrives at 0.5 s while the replica is down.
  // At 1 s both are admitted in one step: 10 + 10 + 1 = 21 ms -> both first tokens (and ends) at 1.021.
  const auto r = simulate_serving({req(0, 100, 1), req(0.5, 10, 1)}, m, c);
  CHECK(r.requests[0].first_token_s == doctest::Approx(1.021));
  CHECK(r.requests[1].first_token_s == doctest::Approx(1.021));
  CHECK(r.requests[1].end_s == doctest::Approx(1.021));
  CHECK(r.rerouted[0] == 1);  // only A was on the replica; B never was
  CHECK(r.replica_s == doctest::Approx(0.005 + 0.021));
}

TEST_CASE("serving failover: a decoding request keeps its first token and recomputes its KV") {
  const LinearStep m;
  ServingEngineConfig c = config(2);
  c.outages.push_back({0, 0.030, INFINITY});
  // A (100 tokens, 5 out) on replica 0: prefill 0..20 ms (first token), decode 20..31 ms. At 30 ms the
  // replica fails (A has 1 token, the second step is lost); replica 1 is idle: A recomputes its
  // prompt and token (101 tokens: 10 + 10.1 = 20.1 ms) and samples its 2nd token at 50.1 ms, then
  // three decodes of 11 ms: ends at 83.1 ms.
  const auto r = simulate_serving({req(0, 100, 5)}, m, c);
  CHECK(r.requests[0].first_token_s == doctest::Approx(0.020));
  CHECK(r.requests[0].end_s == doctest::Approx(0.0501 + 3 * 0.011));
  CHECK(r.requests[0].replica == 1);
}

TEST_CASE("serving failover: an outage after the last request changes nothing") {
  const LinearStep m;
  const std::vector<ServingRequest> reqs = {req(0, 100, 3), req(0.001, 10, 5), req(0.002, 30, 4)};
  const auto base = simulate_serving(reqs, m, config(2));
  ServingEngineConfig c = config(2);
  c.outages.push_back({1, 10.0, 20.0});
  const auto late = simulate_serving(reqs, m, c);
  REQUIRE(base.requests.size() == late.requests.size());
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    CHECK(late.requests[i].first_token_s == base.requests[i].first_token_s);
    CHECK(late.requests[i].end_s == base.requests[i].end_s);
  }
  CHECK(late.steps == base.steps);
  CHECK(late.rerouted[0] == 0);
}

namespace {

/// Two replicas, the autoscaler keeping at least one on (replica 1 starts off): it evaluates every
/// 10 ms and switches one on as soon as a request waits; a model load takes 100 ms.
ServingEngineConfig autoscaled() {
  ServingEngineConfig c = config(2);
  c.min_replicas = 1;
  c.scale_interval_s = 0.01;
  c.scale_up_queue = 0;
  c.model_load_s = 0.1;
  return c;
}

std::vector<ServingRequest> burst() {
  std::vector<ServingRequest> reqs;
  for (int i = 0; i < 50; ++i) reqs.push_back(req(0, 1000, 1));
  return reqs;
}

}  // namespace

TEST_CASE("serving failover with the autoscaler: a failed replica is never switched on") {
  const LinearStep m;
  const auto base = simulate_serving(burst(), m, autoscaled());
  CHECK(base.peak_replicas == 2);  // the queue switches replica 1 on
  ServingEngineConfig c = autoscaled();
  c.outages.push_back({1, 0, INFINITY});
  const auto r = simulate_serving(burst(), m, c);
  CHECK(r.peak_replicas == 1);
  for (const auto& o : r.requests) CHECK(o.replica == 0);
}

TEST_CASE("serving failover with the autoscaler: a replica switched off before its outage stays off after") {
  const LinearStep m;
  ServingEngineConfig c = autoscaled();
  c.outages.push_back({1, 0, 0.05});
  // A request of 1000 tokens every 10 ms: replica 0 (110 ms a prefill) falls behind at once. Replica
  // 1 is off, and failed until 50 ms: the autoscaler leaves it off; back from its outage it is still
  // off (not ready at 50 ms), so the evaluation at 50 ms switches it on and it takes arrivals only
  // from 150 ms on.
  std::vector<ServingRequest> reqs;
  for (int i = 0; i < 50; ++i) reqs.push_back(req(0.01 * i, 1000, 1));
  const auto r = simulate_serving(reqs, m, c);
  CHECK(r.peak_replicas == 2);
  int on_1 = 0;
  for (const auto& o : r.requests)
    if (o.replica == 1) {
      ++on_1;
      CHECK(o.arrival_s > 0.15 - 1e-6);
    }
  CHECK(on_1 > 0);
}

TEST_CASE("serving failover with the autoscaler: requests stranded by an outage switch a replica on") {
  const LinearStep m;
  ServingEngineConfig c = autoscaled();
  c.outages.push_back({0, 0.005, INFINITY});
  // A (100 tokens) loses its prefill on replica 0 at 5 ms; replica 1 is off: A waits. The evaluation
  // at 10 ms switches replica 1 on (ready at 110 ms); A prefills there in 20 ms: first token at 130 ms.
  const auto r = simulate_serving({req(0, 100, 1)}, m, c);
  CHECK(r.requests[0].replica == 1);
  CHECK(r.requests[0].first_token_s == doctest::Approx(0.13));
  CHECK(r.rerouted[0] == 1);
}

namespace {

/// Disaggregated: replicas [0, prefill) prefill, the rest decode; 1000 bytes of KV per token over a
/// 1 MB/s link with 1 ms latency (100 tokens: 0.101 s).
ServingEngineConfig disaggregated(int prefill, int decode, long kv_blocks = 1000) {
  ServingEngineConfig c = config(prefill + decode);
  c.kv_blocks = kv_blocks;
  c.prefill_replicas = prefill;
  c.kv_bytes_per_token = 1000;
  c.kv_link = {1e6, 0.001};
  return c;
}

}  // namespace

TEST_CASE("disaggregated failover: KV in flight to a failed decode replica leaves again for another") {
  const LinearStep m;
  ServingEngineConfig c = disaggregated(1, 2);
  c.outages.push_back({1, 1.05, INFINITY});
  // A (100 tokens, 3 out) prefills 1.000..1.020 (first token); its KV leaves for replica 1 (the lowest
  // index of two idle ones), landing at 1.121. Replica 1 fails at 1.05: the prefill replica still holds
  // the KV and sends it at once to replica 2: 1.05 + 0.101 = 1.151, then two decodes of 11 ms.
  const auto r = simulate_serving({req(1.0, 100, 3)}, m, c);
  const auto& a = r.requests[0];
  CHECK(a.first_token_s == doctest::Approx(1.020));
  CHECK(a.decode_replica == 2);
  CHECK(a.kv_transfer_s == doctest::Approx(0.101));
  CHECK(a.end_s == doctest::Approx(1.151 + 2 * 0.011));
  CHECK(a.preemptions == 0);
  CHECK(r.steps == 3);        // no prefill again
  CHECK(r.rerouted[0] == 0);  // nothing ran or waited on replica 1
}

TEST_CASE("disaggregated failover: with no decode replica up, KV waits on the prefill replica, blocks held") {
  const LinearStep m;
  ServingEngineConfig c = disaggregated(1, 1, 7);  // 7 blocks of 16 tokens: one 100-token prompt
  c.outages.push_back({1, 1.05, 2.0});
  // A's KV (transfer 1.020..1.121) is cut at 1.05 with the only decode replica; it waits on the
  // prefill replica, which keeps its 7 blocks, until replica 1 is back at 2.0: it lands at 2.101 and
  // A decodes twice (2.123). B (1.5 s, 100 tokens, 2 out) waits for those blocks: it prefills
  // 2.101..2.121, its KV lands at 2.222, one decode: 2.233.
  const auto r = simulate_serving({req(1.0, 100, 3), req(1.5, 100, 2)}, m, c);
  CHECK(r.requests[0].first_token_s == doctest::Approx(1.020));
  CHECK(r.requests[0].decode_replica == 1);
  CHECK(r.requests[0].end_s == doctest::Approx(2.101 + 2 * 0.011));
  CHECK(r.requests[1].first_token_s == doctest::Approx(2.121));
  CHECK(r.requests[1].end_s == doctest::Approx(2.222 + 0.011));
  CHECK(r.steps == 5);
}

TEST_CASE("disaggregated failover: KV in flight from a failed prefill replica is lost, prefilled again") {
  const LinearStep m;
  ServingEngineConfig c = disaggregated(2, 1);
  c.outages.push_back({0, 1.05, INFINITY});
  // A prefills on replica 0 (round-robin) 1.000..1.020; its KV is on its way to replica 2 when
  // replica 0 fails at 1.05: the transfer fails with its source. A goes to replica 1 and prefills its
  // prompt and first token again (101 tokens: 20.1 ms, sampling its 2nd token at 1.0701); that KV
  // (101 tokens: 0.102 s) lands at 1.1721, one decode: 1.1831. Its TTFT is unchanged.
  const auto r = simulate_serving({req(1.0, 100, 3)}, m, c);
  const auto& a = r.requests[0];
  CHECK(a.first_token_s == doctest::Approx(1.020));
  CHECK(a.replica == 1);
  CHECK(a.decode_replica == 2);
  CHECK(a.kv_transfer_s == doctest::Approx(0.102));
  CHECK(a.end_s == doctest::Approx(1.1721 + 0.011));
  CHECK(r.rerouted[0] == 1);
}

TEST_CASE("disaggregated failover: a failed decode replica's requests are prefilled again, then decode") {
  const LinearStep m;
  ServingEngineConfig c = disaggregated(1, 2);
  c.outages.push_back({1, 1.13, INFINITY});
  // A's KV lands on replica 1 at 1.121; it decodes there (1.121..1.132, 2nd token). Replica 1 fails at
  // 1.13 (that step is lost, A holds 1 token): A goes back to the prefill replica and recomputes its
  // 101 tokens (1.13..1.1501, 2nd token), its KV goes to replica 2 (0.102 s: 1.2521), one decode: 1.2631.
  const auto r = simulate_serving({req(1.0, 100, 3)}, m, c);
  const auto& a = r.requests[0];
  CHECK(a.first_token_s == doctest::Approx(1.020));
  CHECK(a.decode_replica == 2);
  CHECK(a.end_s == doctest::Approx(1.2521 + 0.011));
  CHECK(r.rerouted[0] == 1);
}
