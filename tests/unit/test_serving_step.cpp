// The serving step-time model (models/serving/step_model.hpp): hand-derived step times on the tiny
// fixtures of tests/data/serving (README.md there), input errors, and on LLMServingSim's measured
// profiles (shared data): model facts, monotonicity and an idle-server prefill against vLLM's
// measured first-token latency.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "models/collective/collective_model.hpp"
#include "models/serving/step_model.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;
namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/serving/";
const std::string kTiny = kData + "tiny/bf16";
const std::string kTinyConfig = kData + "tiny-config.json";
const std::string kPerf = "serving/llmservingsim/perf/";
const std::string kConfigs = "serving/llmservingsim/configs/model/";

BatchShape decodes(std::vector<int> kv) {
  return BatchShape{{}, std::move(kv)};
}

// A copy of the tiny bundle to break.
fs::path tiny_copy() {
  const auto dir = test::temp_dir("serving");
  fs::copy(kTiny, dir / "bf16", fs::copy_options::recursive);
  return dir / "bf16";
}

InputError load_error(const std::string& profile, const std::string& config, int tp = 1) {
  try {
    ServingStepModel::load(profile, config, tp);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no InputError");
  return InputError("", 0, "", "");
}

std::unique_ptr<ServingStepModel> llama(const std::string& hw, int tp = 1) {
  return ServingStepModel::load(test::shared_path(kPerf + hw + "/meta-llama/Llama-3.1-8B/bf16"),
                                test::shared_path(kConfigs + "meta-llama/Llama-3.1-8B.json"), tp);
}

}  // namespace

TEST_CASE("serving step: tiny model facts from config.json") {
  const auto m = ServingStepModel::load(kTiny, kTinyConfig, 1);
  CHECK(m->model().name == "test/tiny-llama");  // meta.yaml's model
  CHECK(m->model().layers == 2);
  CHECK(m->model().weight_bytes == doctest::Approx(2896));
  CHECK(m->model().kv_bytes_per_token == doctest::Approx(32));
  CHECK_FALSE(m->model().moe);
  CHECK(m->step_s(BatchShape{}) == 0);
  CHECK(m->step_s(BatchShape{{{0, 100}}, {}}) == 0);  // a chunk of no tokens is no work
}

TEST_CASE("serving step: hand-derived step times on the tiny profile") {
  const auto m = ServingStepModel::load(kTiny, kTinyConfig, 1);
  SUBCASE("two skewed decodes: bucket alpha 0.5") {
    const auto b = m->breakdown(decodes({16, 32}));
    CHECK(b.dense_s == doctest::Approx(31e-6));
    CHECK(b.per_sequence_s == doctest::Approx(14e-6));
    CHECK(b.attention_s == doctest::Approx(2 * 5.5e-6));
    CHECK(b.moe_s == 0);
    CHECK(b.allreduce_s == 0);
    CHECK(m->step_s(decodes({16, 32})) == doctest::Approx(56e-6));
  }
  SUBCASE("a chunk after cached tokens with one decode") {
    CHECK(m->step_s(BatchShape{{{24, 16}}, {32}}) == doctest::Approx(116.5e-6));
  }
  SUBCASE("two chunks and two decodes: the second chunk adds its own work only") {
    const BatchShape batch{{{16, 32}, {32, 0}}, {32, 32}};
    CHECK(m->breakdown(batch).attention_s == doctest::Approx(2 * 9e-6));
    CHECK(m->step_s(batch) == doctest::Approx(188.5e-6));
  }
  SUBCASE("a negative bucket alpha is clamped to 0") {
    CHECK(m->breakdown(BatchShape{{{16, 32}}, {16, 32}}).attention_s == doctest::Approx(2 * 7e-6));
  }
  SUBCASE("no bucket: the TP's alpha_default; decodes beyond the grid extrapolate") {
    CHECK(m->breakdown(decodes({16, 32, 32})).attention_s == doctest::Approx(2 * 7.25e-6));
  }
  SUBCASE("longest KV beyond the bucket table: the nearest bucket below it") {
    // A(0,0,2,1008) = 128, A(0,0,2,2000) = 252 (kv extrapolated); bucket kvB>1k absent -> kvB<=1k.
    CHECK(m->breakdown(decodes({16, 2000})).attention_s == doctest::Approx(2 * 190e-6));
  }
  SUBCASE("uniform decodes take no skew correction") {
    CHECK(m->breakdown(decodes({24, 24})).attention_s == doctest::Approx(2 * 5e-6));
  }
  CHECK_THROWS_AS(m->step_s(decodes({-1})), std::invalid_argument);
}

TEST_CASE("serving step: tiny MoE model, TP 1 and TP 2") {
  const std::string profile = kData + "tiny-moe/bf16";
  const std::string config = kData + "tiny-moe-config.json";
  const auto m1 = ServingStepModel::load(profile, config, 1);
  CHECK(m1->model().moe);
  CHECK(m1->model().weight_bytes == doctest::Approx(3024));
  const auto b1 = m1->breakdown(decodes({16, 16, 16}));
  CHECK(b1.moe_s == doctest::Approx(2 * 7.5e-6));
  CHECK(b1.total_s() == doctest::Approx(41e-6));
  CHECK(m1->breakdown(decodes({16})).moe_s == doctest::Approx(2 * 4e-6));  // 1 token: top-2 experts

  ServingStepOptions opt;
  opt.tp_fabric.intra_gbs = 50;
  const auto m2 = ServingStepModel::load(profile, config, 2, opt);
  const auto b2 = m2->breakdown(decodes({16, 16, 16}));
  CHECK(b2.moe_s == doctest::Approx(2 * 3.75e-6));
  CollectiveDesc ar;
  ar.bytes = 3 * 8 * 2;
  ar.ranks = 2;
  const double one = predict_analytic(ar, opt.tp_fabric).seconds;
  CHECK(one > 0);
  // Two all-reduces a layer and one after the embedding, and the all-gather of 3 x 16 logits.
  CollectiveDesc logits{Collective::all_gather, 3 * 16 * 2, 2, 1};
  CHECK(b2.allreduce_s ==
        doctest::Approx((2 * 2 + 1) * one + predict_analytic(logits, opt.tp_fabric).seconds));
}

TEST_CASE("serving step: tiny MoE model, data parallel and expert parallel") {
  // tiny-moe: 2 layers, hidden 8, E = 4 experts, k = 2; its moe.csv is 1 + tokens + experts (us).
  const std::string profile = kData + "tiny-moe/bf16";
  const std::string config = kData + "tiny-moe-config.json";
  ServingStepOptions opt;
  opt.tp_fabric.intra_gbs = 50;
  opt.data_parallel = 2;
  opt.expert_parallel = true;
  const auto ep = ServingStepModel::load(profile, config, 1, opt);
  // Experts: 2 layers x 4 x 3 x hidden 8 x intermediate 4 x 2 bytes.
  CHECK(ep->model().expert_weight_bytes == doctest::Approx(2 * 4 * 3 * 8 * 4 * 2));
  // 3 decodes per rank, the other rank's taken alike: G = 6 tokens. Each GPU holds 2 experts, which
  // 6 tokens activate 2 (1 - (1/2)^6) -> 2 of; 6 x 2 / 2 pairs = the work of 3 tokens: moe(3, 2) = 6.
  const auto b = ep->breakdown(decodes({16, 16, 16}));
  CHECK(b.moe_s == doctest::Approx(2 * 6e-6));
  CollectiveDesc ag;
  ag.op = Collective::all_gather;
  ag.bytes = 6 * 8 * 2;
  ag.ranks = 2;
  CollectiveDesc rs = ag;
  rs.op = Collective::reduce_scatter;
  const double comm =
      predict_analytic(ag, opt.tp_fabric).seconds + predict_analytic(rs, opt.tp_fabric).seconds;
  CHECK(comm > 0);
  CHECK(b.expert_comm_s == doctest::Approx(2 * comm));
  CHECK(b.allreduce_s == 0);
  // The group's real tokens (a lockstep step): 10 -> the work of 5 tokens, moe(5, 2) = 8.
  BatchShape grouped = decodes({16, 16, 16});
  grouped.group_tokens = 10;
  CHECK(ep->breakdown(grouped).moe_s == doctest::Approx(2 * 8e-6));
  // DP 2 without expert parallelism: every expert split over the 2 GPUs, all 6 tokens through each:
  // moe(6, 4 (1 - (1/2)^6) = 3.9375) / 2.
  opt.expert_parallel = false;
  const auto dp = ServingStepModel::load(profile, config, 1, opt);
  CHECK(dp->breakdown(decodes({16, 16, 16})).moe_s == doctest::Approx(2 * (1 + 6 + 3.9375) / 2 * 1e-6));
  // TP 2 with expert parallelism (DP 1): 2 experts per GPU, 3 tokens -> 1.5 tokens' work on 2 experts
  // (the fewest a token activates): moe(1.5, 2) = 4.5; no expert all-gather, the TP all-reduces stay.
  opt.data_parallel = 1;
  opt.expert_parallel = true;
  const auto tp = ServingStepModel::load(profile, config, 2, opt);
  const auto t = tp->breakdown(decodes({16, 16, 16}));
  CHECK(t.moe_s == doctest::Approx(2 * 4.5e-6));
  CHECK(t.expert_comm_s == 0);
  CHECK(t.allreduce_s > 0);
}

TEST_CASE("serving step: bad input names the file, line and field") {
  SUBCASE("TP degree no profiled degree divides lists the profiled ones") {
    const auto dir = tiny_copy();
    fs::rename(dir / "tp1", dir / "tp2");
    const auto e = load_error(dir.string(), kTinyConfig, 1);
    CHECK(e.field() == "tensor_parallel");
    CHECK(std::string(e.what()).find("profiled: 2") != std::string::npos);
  }
  SUBCASE("TP not dividing the attention heads names config.json's key") {
    const auto e = load_error(kTiny, kTinyConfig, 3);  // 2 heads
    CHECK(e.file() == kTinyConfig);
    CHECK(e.field() == "num_attention_heads");
  }
  SUBCASE("EP not dividing the experts names config.json's key") {
    ServingStepOptions opt;
    opt.data_parallel = 3;  // 4 experts over 3 ranks
    opt.expert_parallel = true;
    const std::string config = kData + "tiny-moe-config.json";
    try {
      ServingStepModel::load(kData + "tiny-moe/bf16", config, 1, opt);
      FAIL("no InputError");
    } catch (const InputError& e) {
      CHECK(e.file() == config);
      CHECK(e.field() == "num_experts");
    }
  }
  SUBCASE("missing table") {
    const auto dir = tiny_copy();
    fs::remove(dir / "tp1" / "attention.csv");
    const auto e = load_error(dir.string(), kTinyConfig);
    CHECK(e.file() == (dir / "tp1" / "attention.csv").string());
  }
  SUBCASE("missing meta.yaml") {
    const auto dir = tiny_copy();
    fs::remove(dir / "meta.yaml");
    CHECK(load_error(dir.string(), kTinyConfig).file() == (dir / "meta.yaml").string());
  }
  SUBCASE("malformed time") {
    const auto dir = tiny_copy();
    test::write_file(dir / "tp1" / "dense.csv", "layer,tokens,time_us\nembedding,1,1\nembedding,9,fast\n");
    const auto e = load_error(dir.string(), kTinyConfig);
    CHECK(e.line() == 3);
    CHECK(e.field() == "time_us");
  }
  SUBCASE("short row") {
    const auto dir = tiny_copy();
    test::write_file(dir / "tp1" / "per_sequence.csv", "layer,sequences,time_us\nlm_head,1\n");
    CHECK(load_error(dir.string(), kTinyConfig).line() == 2);
  }
  SUBCASE("missing column") {
    const auto dir = tiny_copy();
    test::write_file(dir / "tp1" / "attention.csv", "prefill_chunk,kv_prefill,n_decode,time_us\n16,0,0,3\n");
    CHECK(load_error(dir.string(), kTinyConfig).field() == "kv_decode");
  }
  SUBCASE("negative count") {
    const auto dir = tiny_copy();
    test::write_file(dir / "tp1" / "attention.csv",
                     "prefill_chunk,kv_prefill,n_decode,kv_decode,time_us\n16,0,0,0,3\n16,-1,0,0,3\n");
    const auto e = load_error(dir.string(), kTinyConfig);
    CHECK(e.line() == 3);
    CHECK(e.field() == "kv_prefill");
  }
  SUBCASE("missing skew bucket table named by meta.yaml") {
    const auto dir = tiny_copy();
    fs::remove(dir / "tp1" / "skew_fit.csv");
    CHECK(load_error(dir.string(), kTinyConfig).file() == (dir / "tp1" / "skew_fit.csv").string());
  }
  SUBCASE("missing config key") {
    const auto dir = test::temp_dir("serving-config");
    test::write_file(dir / "c.json",
                     R"({"num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 16})");
    CHECK(load_error(kTiny, (dir / "c.json").string()).field() == "hidden_size");
  }
  SUBCASE("malformed config JSON") {
    const auto dir = test::temp_dir("serving-config");
    test::write_file(dir / "c.json", "{\n\"hidden_size\": 8,\n oops\n}");
    CHECK(load_error(kTiny, (dir / "c.json").string()).line() == 3);
  }
  SUBCASE("MoE model without moe.csv") {
    CHECK(load_error(kTiny, kData + "tiny-moe-config.json").file() == kTiny + "/tp1/moe.csv");
  }
}

TEST_CASE("serving step: Llama-3.1-8B facts") {
  test::require_shared(kPerf + "RTXPRO6000/meta-llama/Llama-3.1-8B/bf16");
  const auto m = llama("RTXPRO6000");
  CHECK(m->model().name == "meta-llama/Llama-3.1-8B");
  CHECK(m->model().layers == 32);
  CHECK(m->model().weight_bytes / 2 == doctest::Approx(8.0303e9).epsilon(1e-4));
  CHECK(m->model().weight_bytes == doctest::Approx(16.06e9).epsilon(1e-3));
  CHECK(m->model().kv_bytes_per_token == 131072);
  CHECK_FALSE(m->model().moe);
}

TEST_CASE("serving step: more decodes, tokens or KV are never faster (RTXPRO6000 and RTX4090)") {
  test::require_shared(kPerf + "RTX4090/meta-llama/Llama-3.1-8B/bf16");
  test::require_shared(kPerf + "RTXPRO6000/meta-llama/Llama-3.1-8B/bf16");
  for (const std::string hw : {"RTXPRO6000", "RTX4090"}) {
    CAPTURE(hw);
    const auto m = llama(hw);
    for (const int kv : {16, 100, 1000, 5000, 20000}) {
      double prev = 0;
      for (int n = 1; n <= 300; ++n) {
        const double t = m->step_s(decodes(std::vector<int>(static_cast<std::size_t>(n), kv)));
        CHECK(t >= prev);
        prev = t;
      }
    }
    for (const int n : {1, 3, 32, 100, 256}) {
      double prev = 0;
      for (int kv = 0; kv <= 20000; kv += 37) {
        const double t = m->step_s(decodes(std::vector<int>(static_cast<std::size_t>(n), kv)));
        CHECK(t >= prev);
        prev = t;
      }
    }
    for (const int decoding : {0, 8, 64}) {
      for (const int history : {0, 2048, 8000}) {
        double prev = 0;
        for (int tokens = 1; tokens <= 2400; tokens += 7) {
          const double t = m->step_s(
              BatchShape{{{tokens, history}}, std::vector<int>(static_cast<std::size_t>(decoding), 700)});
          CHECK(t >= prev);
          prev = t;
        }
      }
    }
  }
}

TEST_CASE("serving step: one sequence's KV growing in a skewed batch") {
  test::require_shared(kPerf + "RTXPRO6000/meta-llama/Llama-3.1-8B/bf16");
  const auto m = llama("RTXPRO6000");
  // The skew bucket (and its alpha) can change as one sequence grows: the step may get shorter,
  // but by little (1.7% at most on this sweep).
  double worst = 0;
  for (const int n : {2, 3, 8, 33, 100, 200})
    for (const int base : {16, 500, 3000})
      for (const int chunk : {0, 300}) {
        std::vector<int> kv(static_cast<std::size_t>(n), base);
        double prev = 0;
        for (int x = base; x <= 20000; x += 50) {
          kv[0] = x;
          BatchShape b{{}, kv};
          if (chunk > 0) b.prefills.push_back({chunk, 1000});
          const double t = m->step_s(b);
          if (prev > 0) worst = std::max(worst, (prev - t) / prev);
          prev = t;
        }
      }
  MESSAGE("largest drop of the step time as one sequence grows: " << worst * 100 << "%");
  CHECK(worst < 0.02);
}

TEST_CASE("serving step: idle-server prefill vs vLLM's measured first-token latency") {
  test::require_shared(kPerf + "RTXPRO6000/meta-llama/Llama-3.1-8B/bf16");
  const auto m = llama("RTXPRO6000");
  // bench-0 of runs/RTXPRO6000-Llama-3.1-8B: 2358 prompt tokens on an idle server, chunked by
  // max_num_batched_tokens 2048; first_token_ts - queued_ts = 0.1695 s.
  const double first = m->step_s(BatchShape{{{2048, 0}}, {}});
  const double second = m->step_s(BatchShape{{{310, 2048}}, {}});
  const double measured = 479748.510151426 - 479748.340626232;
  MESSAGE("2048-token chunk " << first * 1e3 << " ms, 310 after 2048 " << second * 1e3 << " ms, sum "
                              << (first + second) * 1e3 << " ms vs measured TTFT " << measured * 1e3
                              << " ms");
  CHECK(first + second > 0.5 * measured);
  CHECK(first + second < 1.5 * measured);
}

TEST_CASE("serving step: TP 2 adds all-reduces, and the Qwen3-30B-A3B MoE") {
  test::require_shared(kPerf + "RTXPRO6000/Qwen/Qwen3-30B-A3B-Instruct-2507/bf16");
  const auto l2 = llama("RTXPRO6000", 2);
  const auto b = l2->breakdown(decodes(std::vector<int>(64, 1000)));
  CHECK(b.allreduce_s > 0);
  CHECK(b.total_s() < llama("RTXPRO6000", 1)->step_s(decodes(std::vector<int>(64, 1000))));

  const auto q =
      ServingStepModel::load(test::shared_path(kPerf + "RTXPRO6000/Qwen/Qwen3-30B-A3B-Instruct-2507/bf16"),
                             test::shared_path(kConfigs + "Qwen/Qwen3-30B-A3B-Instruct-2507.json"), 1);
  CHECK(q->model().moe);
  CHECK(q->model().layers == 48);
  CHECK(q->model().weight_bytes / 2 == doctest::Approx(30.53e9).epsilon(0.01));  // "30B-A3B"
  CHECK(q->model().kv_bytes_per_token == 2 * 48 * 4 * 128 * 2);
  double prev = 0;
  for (int n = 1; n <= 256; ++n) {
    const auto bq = q->breakdown(decodes(std::vector<int>(static_cast<std::size_t>(n), 500)));
    CHECK(bq.moe_s > 0);
    CHECK(bq.total_s() >= prev);
    prev = bq.total_s();
  }
}
