// The serving engine (sim/serving/serving_engine.hpp) with a hand-made step model, so every time is
// derived by hand: step = 10 ms + 0.1 ms per prefill token + 1 ms per decode.
#include <doctest/doctest.h>

#include <random>

#include "sim/serving/free_block_queue.hpp"
#include "sim/serving/serving_engine.hpp"
#include "tests/linear_step.hpp"

using namespace fleetsim;
using fleetsim::test::LinearStep;

namespace {

ServingRequest req(double at, int in, int out, std::vector<std::uint64_t> hashes = {}) {
  ServingRequest r;
  r.arrival_s = at;
  r.input_tokens = in;
  r.output_tokens = out;
  r.block_hashes = std::move(hashes);
  return r;
}

ServingEngineConfig config(long kv_blocks = 1000) {
  ServingEngineConfig c;
  c.kv_blocks = kv_blocks;
  return c;
}

}  // namespace

TEST_CASE("serving engine: an idle server's TTFT is one prefill, then one decode per token") {
  const LinearStep m;
  const auto r = simulate_serving({req(1.0, 100, 3)}, m, config());
  const auto& o = r.requests[0];
  CHECK(o.first_token_s == doctest::Approx(1.0 + 0.010 + 0.0100));  // prefill of 100 tokens
  CHECK(o.end_s == doctest::Approx(1.020 + 2 * 0.011));             // two decodes of 11 ms
  CHECK(r.steps == 3);
  CHECK(o.preemptions == 0);
}

TEST_CASE("serving engine: chunked prefill under the token budget, decodes ride along") {
  const LinearStep m;
  ServingEngineConfig c = config();
  c.max_num_batched_tokens = 64;
  // A: 100-token prompt at 0: chunks 64 (16.4 ms) and 36 (13.6 ms) -> first token at 30 ms.
  // B: 10-token prompt at 0.001, admitted in A's second step? No: step 1 started at 0 with A alone;
  // step 2 (at 16.4 ms) has A's 36 + B's 10 tokens = 10 + 4.6 ms -> both end their prefill at 31 ms.
  const auto r = simulate_serving({req(0, 100, 2), req(0.001, 10, 2)}, m, c);
  CHECK(r.requests[0].first_token_s == doctest::Approx(0.0164 + 0.0146));
  CHECK(r.requests[1].first_token_s == doctest::Approx(0.0164 + 0.0146));
  // Then one step decodes both: 12 ms.
  CHECK(r.requests[0].end_s == doctest::Approx(0.031 + 0.012));
  CHECK(r.requests[1].end_s == doctest::Approx(0.031 + 0.012));
}

TEST_CASE("serving engine: KV capacity limits the running batch exactly as configured") {
  const LinearStep m;
  // 6 blocks of 16 tokens: three 32-token prompts fit at a time; each ends with its prefill (1 output
  // token). Nine requests at 0: the first arrival starts a step alone (13.2 ms), then waves of three
  // (10 + 3 x 3.2 = 19.6 ms) and a last one of two (16.4 ms).
  std::vector<ServingRequest> reqs;
  for (int i = 0; i < 9; ++i) reqs.push_back(req(0, 32, 1));
  const auto r = simulate_serving(reqs, m, config(6));
  const double expect[] = {0.0132, 0.0328, 0.0328, 0.0328, 0.0524, 0.0524, 0.0524, 0.0688, 0.0688};
  for (std::size_t i = 0; i < 9; ++i) CHECK(r.requests[i].first_token_s == doctest::Approx(expect[i]));
  CHECK(r.steps == 4);
  // max_num_seqs = 2 limits it the same way: 13.2 ms, then pairs of 16.4 ms.
  ServingEngineConfig c = config();
  c.max_num_seqs = 2;
  const auto s = simulate_serving(reqs, m, c);
  CHECK(s.requests[8].first_token_s == doctest::Approx(0.0132 + 4 * 0.0164));
}

TEST_CASE("serving engine: a full KV cache preempts the latest request, which recomputes") {
  const LinearStep m;
  // 5 blocks = 80 tokens. A and B (32-token prompts, 40 outputs) both fit at first (2 + 2 blocks) but
  // need 3 blocks each once past 48 tokens: B (admitted last) is preempted and recomputed after A.
  const auto r = simulate_serving({req(0, 32, 40), req(0, 32, 40)}, m, config(5));
  CHECK(r.requests[0].preemptions == 0);
  CHECK(r.requests[1].preemptions >= 1);
  CHECK(r.requests[0].end_s > 0);
  CHECK(r.requests[1].end_s > r.requests[0].end_s);
  // A request that can never fit is rejected: it never produces a token.
  const auto big = simulate_serving({req(0, 100, 10)}, m, config(5));
  CHECK(big.requests[0].first_token_s < 0);
  CHECK(big.requests[0].end_s < 0);
}

TEST_CASE("serving engine: a waiting request is admitted only when its whole prompt fits the free KV") {
  const LinearStep m;
  ServingEngineConfig c = config(9);
  c.max_num_batched_tokens = 64;
  // vLLM's scheduler_reserve_full_isl. A (96 tokens = 6 blocks, 3 outputs) prefills in chunks of 64
  // (4 blocks, 16.4 ms) and 32 (2 blocks, 13.2 ms): 3 blocks stay free. B (64 tokens = 4 blocks)
  // arrives meanwhile; its 32-token chunk would fit those 3 blocks, its prompt does not: it waits
  // while A decodes (11 ms each; A's 97th token takes a 7th block) and starts when A ends.
  const auto r = simulate_serving({req(0, 96, 3), req(0.001, 64, 1)}, m, c);
  CHECK(r.requests[0].first_token_s == doctest::Approx(0.0164 + 0.0132));
  CHECK(r.requests[0].end_s == doctest::Approx(0.0296 + 2 * 0.011));
  CHECK(r.requests[1].first_token_s == doctest::Approx(0.0516 + 0.0164));
  CHECK(r.requests[1].preemptions == 0);
  CHECK(r.steps == 5);
}

TEST_CASE("serving engine: with prefix caching a preempted request finds its cached blocks again") {
  const LinearStep m;
  // 5 blocks. A (32 tokens, 10 outputs) prefills (13.2 ms); then A decodes (its 33rd token takes a
  // 3rd block) while B (32 tokens, 40 outputs) prefills into the last 2 blocks (14.2 ms, B's first
  // token at 27.4 ms). B's 33rd token finds no free block: B, the latest admitted, is preempted; its
  // 2 full blocks go to the free queue, still cached. A decodes alone (8 x 11 ms, no new block) and
  // ends at 115.4 ms; B's 33 tokens need 3 blocks: it is re-admitted then, finds its 2 blocks (32
  // tokens) and computes one token (a decode step, 11 ms), then 38 more decodes.
  const std::vector<ServingRequest> reqs = {req(0, 32, 10), req(0, 32, 40)};
  ServingEngineConfig c = config(5);
  c.prefix_caching = true;
  const auto r = simulate_serving(reqs, m, c);
  CHECK(r.requests[0].end_s == doctest::Approx(0.0274 + 8 * 0.011));
  CHECK(r.requests[1].first_token_s == doctest::Approx(0.0274));
  CHECK(r.requests[1].preemptions == 1);
  CHECK(r.requests[1].cached_tokens == 32);
  CHECK(r.requests[1].end_s == doctest::Approx(0.1154 + 0.011 + 38 * 0.011));
  // Without prefix caching it recomputes all 33 tokens (13.3 ms).
  c.prefix_caching = false;
  const auto n = simulate_serving(reqs, m, c);
  CHECK(n.requests[1].cached_tokens == 0);
  CHECK(n.requests[1].end_s == doctest::Approx(0.1154 + 0.0133 + 38 * 0.011));
}

TEST_CASE("serving engine: data-parallel ranks of an MoE model step in lockstep") {
  const LinearStep m;
  // Two replicas in one lockstep group; round-robin sends A (100 tokens, 3 outputs) to 0 and B (50
  // tokens, 3 outputs, at 1 ms) to 1. B waits for the group's first step (A's prefill, 20 ms); then
  // A's decode (11 ms) steps with B's prefill (15 ms): 15 ms; then both decode (11 ms); then B's last.
  ServingEngineConfig c = config();
  c.replicas = 2;
  c.lockstep = 2;
  const std::vector<ServingRequest> reqs = {req(0, 100, 3), req(0.001, 50, 3)};
  const auto r = simulate_serving(reqs, m, c);
  CHECK(r.requests[0].replica == 0);
  CHECK(r.requests[1].replica == 1);
  CHECK(r.requests[0].first_token_s == doctest::Approx(0.020));
  CHECK(r.requests[1].first_token_s == doctest::Approx(0.035));
  CHECK(r.requests[0].end_s == doctest::Approx(0.046));
  CHECK(r.requests[1].end_s == doctest::Approx(0.057));
  // Independent replicas: B starts at once, each decodes at its own pace.
  c.lockstep = 1;
  const auto f = simulate_serving(reqs, m, c);
  CHECK(f.requests[0].end_s == doctest::Approx(0.020 + 2 * 0.011));
  CHECK(f.requests[1].first_token_s == doctest::Approx(0.001 + 0.015));
  CHECK(f.requests[1].end_s == doctest::Approx(0.016 + 2 * 0.011));
}

TEST_CASE("serving engine: the free block queue reuses the oldest free blocks first") {
  FreeBlockQueue q;
  q.reset(4);
  q.take(1);
  const long t = q.release(1, 2);  // 1 block gone for good, then 2 cached ones behind the 4 free
  CHECK(q.free() == 6);
  q.take(4);
  CHECK(q.cached(t) == 2);
  q.take(1);  // the run's tail block is reused
  CHECK(q.cached(t) == 1);
  q.release(3, 0);
  q.claim(t, 1);  // its owner takes its leading block back
  CHECK(q.free() == 3);
  CHECK(q.cached(t) == 0);
  q.take(3);
  CHECK(q.free() == 0);
  CHECK(q.release(0, 0) == -1);
}

TEST_CASE("serving engine: routing - round-robin, least-outstanding and prefix-aware") {
  const LinearStep m;
  ServingEngineConfig c = config();
  c.replicas = 2;
  const std::vector<ServingRequest> reqs = {req(0, 10, 50), req(0.001, 10, 50), req(0.002, 10, 50)};
  auto r = simulate_serving(reqs, m, c);
  CHECK(r.requests[0].replica == 0);
  CHECK(r.requests[1].replica == 1);
  CHECK(r.requests[2].replica == 0);
  // Prefix-aware: the third request shares its first block with the second, so it follows it.
  c.routing = "prefix-aware";
  c.prefix_caching = true;
  const std::vector<ServingRequest> pre = {req(0, 32, 2, {1, 2}), req(0.001, 32, 2, {7, 8}),
                                           req(1.0, 32, 2, {7, 9})};
  r = simulate_serving(pre, m, c);
  CHECK(r.requests[1].replica == 1);
  CHECK(r.requests[2].replica == 1);
  CHECK(r.requests[2].cached_tokens == 16);
  // Its prefill computes only the 16 uncached tokens: 10 + 1.6 ms.
  CHECK(r.requests[2].first_token_s == doctest::Approx(1.0 + 0.0116));
}

TEST_CASE("serving engine: vllm-dp routing weighs waiting requests 4 to 1 against running ones") {
  // t = 0: six requests at once go 0, 1, 0, 1, 0, 1 under both rules (a busy replica's new request
  // waits: 4 x waiting + running). Requests 1 and 3 are short (one output token), the others long
  // (500 tokens, 10 ms + 1 ms per sequence a step). At t = 1 replica 0 runs 3 and replica 1 runs 1,
  // both in mid-step. Two requests arrive at once: the first goes to replica 1 (score 1 < 3) and waits
  // there for the step to end; the second finds replica 1 at 4 x 1 + 1 = 5 > 3: vllm-dp picks replica
  // 0, while least-outstanding counts 2 < 3 and picks replica 1 again.
  const LinearStep m;
  std::vector<ServingRequest> reqs;
  for (int i = 0; i < 6; ++i) reqs.push_back(req(0, 10, i == 1 || i == 3 ? 1 : 500));
  reqs.push_back(req(1.0, 10, 5));
  reqs.push_back(req(1.0, 10, 5));
  ServingEngineConfig c = config();
  c.replicas = 2;
  c.max_num_seqs = 8;
  for (const std::string routing : {"vllm-dp", "least-outstanding"}) {
    c.routing = routing;
    const auto r = simulate_serving(reqs, m, c);
    for (int i = 0; i < 6; ++i) CHECK(r.requests[static_cast<std::size_t>(i)].replica == i % 2);
    CHECK(r.requests[6].replica == 1);
    CHECK(r.requests[7].replica == (routing == "vllm-dp" ? 0 : 1));
  }
}

TEST_CASE("serving engine: more replicas never raise the mean TTFT (random load, least-outstanding)") {
  const LinearStep m;
  std::mt19937_64 rng(3);
  std::exponential_distribution<double> gap(40.0);
  std::uniform_int_distribution<int> len(10, 1500), out(1, 300);
  std::vector<ServingRequest> reqs;
  double t = 0;
  for (int i = 0; i < 400; ++i) reqs.push_back(req(t += gap(rng), len(rng), out(rng)));
  double prev = INFINITY;
  for (int n : {1, 2, 4, 8}) {
    ServingEngineConfig c = config(2000);
    c.replicas = n;
    c.routing = "least-outstanding";
    const auto r = simulate_serving(reqs, m, c);
    double sum = 0;
    for (const auto& o : r.requests) {
      REQUIRE(o.end_s > 0);
      sum += o.first_token_s - o.arrival_s;
    }
    CHECK(sum / 400 <= prev + 1e-12);
    prev = sum / 400;
  }
}

TEST_CASE("serving engine: the autoscaler starts replicas when requests queue, after the model load") {
  const LinearStep m;
  // One request every 0.25 s for 40 s, each ~1.1 s alone (prefill 100 tokens + 99 decodes) and one
  // at a time per replica (max_num_seqs 1): one replica serves ~0.9 request/s, so requests queue.
  std::vector<ServingRequest> reqs;
  for (int i = 0; i < 160; ++i) reqs.push_back(req(0.25 * i, 100, 100));
  ServingEngineConfig c = config();
  c.replicas = 4;
  c.max_num_seqs = 1;
  c.routing = "least-outstanding";
  auto mean_ttft = [&](const ServingResult& r) {
    double s = 0;
    for (std::size_t i = 0; i < reqs.size(); ++i) s += r.requests[i].first_token_s - reqs[i].arrival_s;
    return s / static_cast<double>(reqs.size());
  };
  const ServingResult all4 = simulate_serving(reqs, m, c);
  ServingEngineConfig one = c;
  one.replicas = 1;
  const ServingResult only1 = simulate_serving(reqs, m, one);
  ServingEngineConfig scaled = c;
  scaled.min_replicas = 1;
  scaled.scale_interval_s = 1;
  scaled.scale_up_queue = 2;
  scaled.model_load_s = 5;
  const ServingResult auto4 = simulate_serving(reqs, m, scaled);
  CHECK(auto4.peak_replicas == 4);  // never more than `replicas`
  for (const auto& o : auto4.requests) REQUIRE(o.end_s > 0);
  // Replica 1 starts at the first decision (t = 1 s) and serves from t = 6 s.
  for (std::size_t i = 0; i < reqs.size(); ++i)
    if (auto4.requests[i].replica > 0) CHECK(auto4.requests[i].arrival_s >= 6 - 1e-9);
  CHECK(mean_ttft(auto4) < mean_ttft(only1));
  CHECK(mean_ttft(auto4) > mean_ttft(all4));
  // Replicas switched on late and off when idle: less replica time than four all along.
  CHECK(auto4.replica_s < 4 * auto4.end_s);
  CHECK(auto4.replica_s > auto4.end_s);
  // min_replicas = replicas: no autoscaler, the static result.
  ServingEngineConfig fixed = c;
  fixed.min_replicas = 4;
  const ServingResult same = simulate_serving(reqs, m, fixed);
  CHECK(mean_ttft(same) == doctest::Approx(mean_ttft(all4)));
}
