// Prefill/decode disaggregation and per-replica speed shares in the serving engine
// (sim/serving/serving_engine.hpp), with a hand-made step model so every time is derived by hand:
// step = 10 ms + 0.1 ms per prefill token + 1 ms per decode.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "sim/serving/serving_engine.hpp"
#include "tests/linear_step.hpp"

using namespace fleetsim;
using fleetsim::test::LinearStep;
using fleetsim::test::req;

namespace {

/// One prefill and one decode replica; 1000 bytes of KV per token over a 1 MB/s link with 1 ms latency.
ServingEngineConfig disaggregated(long kv_blocks = 1000) {
  ServingEngineConfig c;
  c.kv_blocks = kv_blocks;
  c.replicas = 2;
  c.prefill_replicas = 1;
  c.kv_bytes_per_token = 1000;
  c.kv_link = {1e6, 0.001};
  return c;
}

double tpot(const ServingRequest& r, const RequestOutcome& o) {
  return (o.end_s - o.first_token_s) / (r.output_tokens - 1);
}

}  // namespace

TEST_CASE("disaggregation: TTFT is the prefill, decode starts after the KV transfer") {
  const LinearStep m;
  const auto r = simulate_serving({req(1.0, 100, 3)}, m, disaggregated());
  const auto& o = r.requests[0];
  CHECK(o.replica == 0);
  CHECK(o.decode_replica == 1);
  CHECK(o.first_token_s == doctest::Approx(1.0 + 0.010 + 0.0100));  // prefill of 100 tokens
  // KV: 100 tokens x 1000 B = 1e5 B over 1e6 B/s = 0.1 s, + 1 ms latency.
  CHECK(o.kv_transfer_s == doctest::Approx(0.101));
  // Then two decodes of 11 ms on the decode replica.
  CHECK(o.end_s == doctest::Approx(1.020 + 0.101 + 2 * 0.011));
  CHECK(r.steps == 3);
}

TEST_CASE("disaggregation: the prefill replica holds the KV blocks until the transfer ends") {
  const LinearStep m;
  // 7 blocks of 16 tokens: one 100-token prompt fills the prefill replica. B arrives at 1.05 s but
  // can only prefill once A's KV has left (1.020 + 0.101 = 1.121 s): first token at 1.141 s.
  const auto r = simulate_serving({req(1.0, 100, 3), req(1.05, 100, 2)}, m, disaggregated(7));
  CHECK(r.requests[1].first_token_s == doctest::Approx(1.121 + 0.020));
  CHECK(r.requests[1].end_s == doctest::Approx(1.141 + 0.101 + 0.011));
  // A single-token request ends with its prefill: nothing moves.
  const auto one = simulate_serving({req(0, 100, 1)}, m, disaggregated());
  CHECK(one.requests[0].end_s == doctest::Approx(0.020));
  CHECK(one.requests[0].decode_replica == -1);
  CHECK(one.steps == 1);
}

TEST_CASE("disaggregation: per-pair links and the least outstanding decode replica, ties the fastest link") {
  const LinearStep m;
  ServingEngineConfig c = disaggregated();
  c.replicas = 3;  // prefill 0, decode 1 and 2
  c.kv_links = {{1e6, 0}, {2e6, 0}};
  const auto r = simulate_serving({req(0, 100, 50), req(0.001, 100, 50)}, m, c);
  CHECK(r.requests[0].decode_replica == 2);  // both idle: the faster link (0.05 s)
  CHECK(r.requests[0].kv_transfer_s == doctest::Approx(0.05));
  CHECK(r.requests[1].decode_replica == 1);  // replica 2 has one outstanding
  CHECK(r.requests[1].kv_transfer_s == doctest::Approx(0.1));
}

TEST_CASE("disaggregation: the link delays decode but never the first token") {
  const LinearStep m;
  std::vector<ServingRequest> reqs;
  for (int i = 0; i < 30; ++i) reqs.push_back(req(0.05 * i, 200 + 37 * i % 300, 20));
  ServingEngineConfig fast = disaggregated(), slow = disaggregated();
  fast.kv_link = {INFINITY, 0};
  const auto f = simulate_serving(reqs, m, fast), s = simulate_serving(reqs, m, slow);
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    CHECK(f.requests[i].first_token_s == doctest::Approx(s.requests[i].first_token_s));
    CHECK(f.requests[i].kv_transfer_s == 0);
    CHECK(s.requests[i].end_s > f.requests[i].end_s);
  }
}

TEST_CASE("disaggregation: with an infinitely fast link, TPOT beats colocation under prefill-heavy load") {
  // Property: 1 prefill + 1 decode replica against 2 colocated replicas (the same GPUs), long prompts
  // and short outputs arriving faster than a replica prefills them: colocated decodes wait behind
  // prefill chunks in every mixed step; disaggregated decodes run alone. Mean and p90 TPOT must be
  // lower (and every request must finish) for every seed.
  const LinearStep m;
  for (unsigned seed = 1; seed <= 5; ++seed) {
    std::mt19937_64 rng(seed);
    std::exponential_distribution<double> gap(4.0);
    std::uniform_int_distribution<int> len(1000, 3000), out(5, 40);
    std::vector<ServingRequest> reqs;
    double t = 0;
    for (int i = 0; i < 200; ++i) reqs.push_back(req(t += gap(rng), len(rng), out(rng)));
    ServingEngineConfig dis = disaggregated(5000);
    dis.kv_link = {INFINITY, 0};
    ServingEngineConfig col = dis;
    col.prefill_replicas = 0;
    col.routing = "least-outstanding";
    const auto d = simulate_serving(reqs, m, dis), c = simulate_serving(reqs, m, col);
    std::vector<double> td, tc;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      REQUIRE(d.requests[i].end_s > 0);
      REQUIRE(c.requests[i].end_s > 0);
      td.push_back(tpot(reqs[i], d.requests[i]));
      tc.push_back(tpot(reqs[i], c.requests[i]));
    }
    auto mean = [](const std::vector<double>& v) {
      double s = 0;
      for (double x : v) s += x;
      return s / static_cast<double>(v.size());
    };
    auto p90 = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() * 9 / 10];
    };
    CHECK(mean(td) < mean(tc));
    CHECK(p90(td) < p90(tc));
  }
}

TEST_CASE("serving engine: a replica's speed share stretches its steps") {
  const LinearStep m;
  ServingEngineConfig c;
  c.kv_blocks = 1000;
  c.replicas = 2;
  c.replica_speed = {1.0, 0.4};
  const auto r = simulate_serving({req(0, 100, 3), req(0.001, 100, 3)}, m, c);  // round-robin
  CHECK(r.requests[0].end_s == doctest::Approx(0.020 + 2 * 0.011));
  CHECK(r.requests[1].end_s == doctest::Approx(0.001 + (0.020 + 2 * 0.011) / 0.4));
}

TEST_CASE("serving engine: a time-varying speed factor applies to the steps that start after it") {
  // Replica 0 alone: prefill 100 tokens (20 ms), then 2 decodes (11 ms each) = 42 ms per request. From
  // t = 0.5 s its factor is 0.5 (a training job joined its MPS GPU): the request at 1 s takes 84 ms.
  const LinearStep m;
  ServingEngineConfig c;
  c.kv_blocks = 1000;
  c.replica_speed_changes = {{{0.5, 0.5}}};
  const auto r = simulate_serving({req(0, 100, 3), req(1, 100, 3)}, m, c);
  CHECK(r.requests[0].end_s == doctest::Approx(0.042));
  CHECK(r.requests[1].end_s == doctest::Approx(1 + 0.042 / 0.5));
}

namespace {

/// A load step: 100-token prompts, 100 output tokens, one every 0.25 s for 40 s. One decode replica
/// with max_num_seqs 1 decodes ~0.9 request/s (99 steps of 11 ms), so transferred requests queue on it.
std::vector<ServingRequest> load_step() {
  std::vector<ServingRequest> reqs;
  for (int i = 0; i < 160; ++i) reqs.push_back(req(0.25 * i, 100, 100));
  return reqs;
}

ServingEngineConfig scaled_groups() {
  ServingEngineConfig c = disaggregated();
  c.kv_link = {INFINITY, 0};
  c.replicas = 4;  // 1 prefill + 3 decode
  c.max_num_seqs = 1;
  c.scale_interval_s = 1;
  c.scale_up_queue = 2;
  c.model_load_s = 5;
  return c;
}

}  // namespace

TEST_CASE("disaggregation autoscaler: the decode group scales up by its own queue, after the model load") {
  const LinearStep m;
  const auto reqs = load_step();
  ServingEngineConfig c = scaled_groups();
  c.min_decode_replicas = 1;
  const ServingResult r = simulate_serving(reqs, m, c);
  // Decisions every 1 s: at t = 1 the decode queue (> 2 per ready replica) starts replica 2, which
  // serves from t = 6; at t = 6 (none loading any more) replica 3 starts, serving from t = 11. A
  // request is handed to a decode replica when its prefill ends (its first token).
  CHECK(r.peak_replicas == 4);
  int on2 = 0, on3 = 0;
  for (const auto& o : r.requests) {
    REQUIRE(o.end_s > 0);
    CHECK(o.replica == 0);  // the prefill group (not autoscaled) takes every arrival
    if (o.decode_replica == 2) CHECK(o.first_token_s >= 6 - 1e-9);
    if (o.decode_replica == 3) CHECK(o.first_token_s >= 11 - 1e-9);
    on2 += o.decode_replica == 2 ? 1 : 0;
    on3 += o.decode_replica == 3 ? 1 : 0;
  }
  CHECK(on2 > 0);
  CHECK(on3 > 0);
  // Switched on late, off when idle: less replica time than four all along, more than the minimum two.
  CHECK(r.replica_s < 4 * r.end_s);
  CHECK(r.replica_s > 2 * r.end_s);
  // More decode replicas over time never hurt: the mean E2E lies below one static decode replica's.
  ServingEngineConfig one = scaled_groups();
  one.replicas = 2;
  const ServingResult s = simulate_serving(reqs, m, one);
  double e_auto = 0, e_one = 0;
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    e_auto += r.requests[i].end_s - reqs[i].arrival_s;
    e_one += s.requests[i].end_s - reqs[i].arrival_s;
  }
  CHECK(e_auto < e_one);
}

TEST_CASE("disaggregation autoscaler: never below a group's minimum, and the prefill group by its queue") {
  const LinearStep m;
  // Light load (one request every 5 s, served in ~1.1 s): nothing queues, so nothing starts, and the
  // minimum (1 prefill + 2 decode) stays on from start to end.
  std::vector<ServingRequest> light;
  for (int i = 0; i < 10; ++i) light.push_back(req(5.0 * i, 100, 100));
  ServingEngineConfig c = scaled_groups();
  c.min_decode_replicas = 2;
  const ServingResult r = simulate_serving(light, m, c);
  CHECK(r.peak_replicas == 3);
  CHECK(r.replica_s == doctest::Approx(3 * r.end_s));
  for (const auto& o : r.requests) CHECK(o.decode_replica < 3);
  // Prefill-heavy: 3000-token prompts every 0.1 s; one prefill replica needs ~0.33 s each (two chunks
  // under the 2048-token budget), so arrivals queue there. 3 prefill replicas, min 1; 1 decode replica.
  std::vector<ServingRequest> heavy;
  for (int i = 0; i < 100; ++i) heavy.push_back(req(0.1 * i, 3000, 2));
  ServingEngineConfig p = scaled_groups();
  p.prefill_replicas = 3;
  p.max_num_seqs = 256;
  p.kv_blocks = 100000;
  p.min_prefill_replicas = 1;
  const ServingResult h = simulate_serving(heavy, m, p);
  CHECK(h.peak_replicas == 4);
  for (const auto& o : h.requests) {
    REQUIRE(o.end_s > 0);
    if (o.replica > 0) CHECK(o.arrival_s >= 6 - 1e-9);  // replica 1 started at t = 1, serves from 6
    CHECK(o.decode_replica == 3);
  }
}
