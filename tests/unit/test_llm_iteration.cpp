// LLM training iteration (models/llm): hand-derived times with a fake kernel model, properties
// (scaling, memory), bad input, and vTrain's measured single-server iterations (shared data).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"
#include "models/llm/comm.hpp"
#include "models/llm/iteration.hpp"
#include "models/llm/vtrain.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;
using namespace fleetsim::llm;
namespace fs = std::filesystem;

namespace {

/// Every kernel takes 1 us plus 1 ps per FLOP; every collective 0.
class FakeKernels final : public KernelModel {
 public:
  KernelPrediction predict(const KernelDesc& k, const GpuSpec&) const override {
    return {1e-6 + 1e-12 * k.flops(), PredictionLabel::measured};
  }
};
class NoComm final : public CollectiveModel {
 public:
  CollectivePrediction predict(const CollectiveDesc&, const CommFabric&) const override {
    return {0, "none", ""};
  }
};

LlmPlatform a100() {
  LlmPlatform p;
  p.gpu = &gpu_spec("A100-SXM4-40GB");
  p.fabric = fabric_for(*p.gpu);
  return p;
}

TrainingSetup tiny_setup() {
  TrainingSetup s;
  s.seq = 16, s.global_batch = 1, s.micro_batch = 1, s.dtype = DType::fp16;
  return s;
}

double pass_seconds(const PassOps& p, const KernelModel& k, const GpuSpec& g) {
  double t = 0;
  for (const LlmOp& op : p.ops) t += op.count * k.predict(op.kernel, g).seconds;
  return t;
}

InputError config_error(const std::string& text) {
  const auto dir = test::temp_dir("llm");
  test::write_file(dir / "config.json", text);
  try {
    read_transformer_config((dir / "config.json").string());
  } catch (const InputError& e) {
    fs::remove_all(dir);
    return e;
  }
  fs::remove_all(dir);
  FAIL("no InputError");
  return InputError("", 0, "", "");
}

}  // namespace

TEST_CASE("llm: a tiny GPT on one GPU takes one microsecond per kernel (88 kernels)") {
  // Per layer 15 forward kernels, 23 backward (4 linears x 2, 2 bmm x 2, 2 ln x 2, 7 others);
  // embedding 2 + 1, head 3 + 5, optimizer 1: 2 x 38 + 3 + 8 + 1 = 88.
  class Constant final : public KernelModel {
   public:
    KernelPrediction predict(const KernelDesc&, const GpuSpec&) const override {
      return {1e-6, PredictionLabel::measured};
    }
  };
  const TransformerConfig m = gpt_config(2, 64, 4, 128, 16);
  const TrainingSetup s = tiny_setup();
  validate(m, s, "tiny");
  const Prediction r = predict_iteration(m, s, a100(), Constant{}, NoComm{});
  CHECK(r.total_s == doctest::Approx(88e-6));
  CHECK(r.stages.size() == 1);
  CHECK(r.stages[0].kernels == 87);
  CHECK(r.bubble_s == 0);
  CHECK(r.feasible);
}

TEST_CASE("llm: 7 layers on 3 pipeline stages split 3-2-2 and the slowest stage sets the period") {
  // One microsecond per kernel: a layer is 15 forward + 23 backward = 38 us per micro-batch, the
  // embedding 2 + 1, the head 3 + 5. Stage 0: 3 layers + embedding = 117 us; stage 1: 2 layers = 76;
  // stage 2: 2 layers + head = 84. 4 micro-batches of the critical stage 0 plus the bubble (the other
  // stages once, 76 + 84) plus the optimizer (1): 4 x 117 + 160 + 1 = 629 us.
  class Constant final : public KernelModel {
   public:
    KernelPrediction predict(const KernelDesc&, const GpuSpec&) const override {
      return {1e-6, PredictionLabel::measured};
    }
  };
  const TransformerConfig m = gpt_config(7, 64, 4, 128, 16);
  TrainingSetup s = tiny_setup();
  s.global_batch = 4, s.pp = 3;
  validate(m, s, "tiny");
  const Prediction r = predict_iteration(m, s, a100(), Constant{}, NoComm{});
  REQUIRE(r.stages.size() == 3);
  CHECK(r.stages[0].layers == 3);
  CHECK(r.stages[1].layers == 2);
  CHECK(r.stages[2].layers == 2);
  CHECK(r.critical_stage == 0);
  CHECK(r.stages[0].forward_s + r.stages[0].backward_s == doctest::Approx(117e-6));
  CHECK(r.stages[2].forward_s + r.stages[2].backward_s == doctest::Approx(84e-6));
  CHECK(r.bubble_s == doctest::Approx(160e-6));
  CHECK(r.total_s == doctest::Approx(629e-6));
  s.pp = 8;  // more stages than layers
  CHECK_THROWS_WITH_AS(validate(m, s, "cfg.json"), doctest::Contains("'pp'"), InputError);
}

TEST_CASE("llm: Hugging Face eager kernels of a GPT-2 layer and a BERT classifier head (NeuSight)") {
  // GPT-2 inference, eager, one layer forward: ln1, qkv, score, scale, mask (where), softmax, context,
  // contiguous, proj, residual add, ln2, fc1, gelu_new as 8 kernels, fc2, residual add = 22 kernels;
  // training adds the 3 dropouts. BERT: Q, K and V are three GEMMs; its classifier head is the pooler,
  // tanh and a 2-way classifier (no vocabulary GEMM), and no loss when the setup has none.
  TransformerConfig gpt2 = gpt_config(2, 64, 4, 128, 16);
  gpt2.model_type = "gpt2", gpt2.activation = "gelu_new";
  TrainingSetup s = tiny_setup();
  s.eager = true, s.dropout = false, s.loss = false;
  auto kernels = [](const PassOps& p) {
    double n = 0;
    for (const LlmOp& op : p.ops) n += op.count;
    return n;
  };
  CHECK(kernels(layer_ops(gpt2, s).forward) == 22);
  CHECK(kernels(head_ops(gpt2, s).forward) == 2);  // final ln, logits
  s.dropout = true;
  CHECK(kernels(layer_ops(gpt2, s).forward) == 25);
  TransformerConfig bert = gpt_config(2, 64, 4, 128, 16);
  bert.model_type = "bert", bert.activation = "gelu";
  s.dropout = false, s.classifier_head = true;
  CHECK(kernels(layer_ops(bert, s).forward) == 17);  // 3 GEMMs for Q/K/V, 1 gelu
  const LayerOps head = head_ops(bert, s);
  CHECK(kernels(head.forward) == 3);
  for (const LlmOp& op : head.forward.ops) CHECK(op.kernel.n != 128);  // no vocabulary GEMM
}

TEST_CASE("llm: TP=PP=DP=1 equals the sum of the operator predictions") {
  const TransformerConfig m = gpt_config(4, 256, 8, 1024, 128);
  TrainingSetup s = tiny_setup();
  s.seq = 128, s.global_batch = 4, s.micro_batch = 2;
  const FakeKernels k;
  const LlmPlatform p = a100();
  const LayerOps layer = layer_ops(m, s), emb = embedding_ops(m, s), head = head_ops(m, s);
  const double per_mb =
      4 * (pass_seconds(layer.forward, k, *p.gpu) + pass_seconds(layer.backward, k, *p.gpu)) +
      pass_seconds(emb.forward, k, *p.gpu) + pass_seconds(emb.backward, k, *p.gpu) +
      pass_seconds(head.forward, k, *p.gpu) + pass_seconds(head.backward, k, *p.gpu);
  const Prediction r = predict_iteration(m, s, p, k, NoComm{});
  const double params = 4 * m.layer_params() + m.embedding_params();
  const double expected = 2 * per_mb + k.predict(optimizer_op(params, s).kernel, *p.gpu).seconds;
  CHECK(r.microbatches == 2);
  CHECK(r.total_s == doctest::Approx(expected).epsilon(1e-12));
  CHECK(r.compute_s + r.optimizer_s == doctest::Approx(r.total_s));
}

TEST_CASE(
    "llm: more data-parallel GPUs at a fixed global batch are faster unless DP communication dominates") {
  const TransformerConfig m = gpt_config(24, 2048, 16, 50304, 1024);
  const auto kernels = kernel_models().create("roofline", KernelCalibration{});
  const auto comm = collective_models().create("nccl-default", CollectiveModelParams{});
  LlmPlatform p = a100();
  for (const double nic : {200.0, 1.0}) {  // a normal NIC, and one so slow that DP dominates
    p.fabric = fabric_for(*p.gpu, nic);
    p.gpus_per_node = 1;  // every DP rank on its own server
    double previous = 0;
    for (int dp : {1, 2, 4, 8}) {
      TrainingSetup s;
      s.seq = 1024, s.global_batch = 64, s.micro_batch = 1, s.dtype = DType::fp16, s.dp = dp;
      const Prediction r = predict_iteration(m, s, p, *kernels, *comm);
      if (dp > 1 && r.total_s > previous) CHECK(r.dominant() == "dp");
      if (nic == 200.0 && dp > 1) CHECK(r.total_s < previous);
      previous = r.total_s;
    }
  }
}

TEST_CASE("llm: pipeline bubble and memory") {
  const TransformerConfig m = gpt_config(8, 1024, 16, 50304, 1024);
  TrainingSetup s;
  s.seq = 1024, s.global_batch = 8, s.micro_batch = 1, s.dtype = DType::fp16, s.pp = 4;
  const FakeKernels k;
  const Prediction r = predict_iteration(m, s, a100(), k, NoComm{});
  CHECK(r.stages.size() == 4);
  CHECK(r.bubble_s > 0);
  CHECK(r.bubble_s < r.compute_s);  // about (p - 1) / m of it
  CHECK(r.feasible);
  // GPT-3 175B on one A100: weights, gradients and Adam alone are 2.8 TB.
  const TransformerConfig big = gpt_config(96, 12288, 96, 50304, 2048);
  TrainingSetup one;
  one.seq = 2048, one.global_batch = 1, one.dtype = DType::fp16;
  const Prediction huge = predict_iteration(big, one, a100(), k, NoComm{});
  CHECK_FALSE(huge.feasible);
  CHECK(huge.infeasible.find("A100-SXM4-40GB") != std::string::npos);
}

TEST_CASE("llm: config.json spellings and bad input name file and key") {
  const auto dir = test::temp_dir("llm");
  test::write_file(
      dir / "llama.json",
      R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
  "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100, "hidden_act": "silu",
  "tie_word_embeddings": false})");
  const TransformerConfig l = read_transformer_config((dir / "llama.json").string());
  CHECK(l.gated_mlp);
  CHECK(l.kv_heads == 2);
  CHECK(l.max_positions == 0);
  CHECK_FALSE(l.tied_embeddings);
  test::write_file(dir / "gpt2.json",
                   R"({"n_layer": 12, "n_embd": 768, "n_head": 12, "n_inner": null, "vocab_size": 50257,
  "n_positions": 1024, "activation_function": "gelu_new"})");
  const TransformerConfig g = read_transformer_config((dir / "gpt2.json").string());
  CHECK(g.intermediate == 3072);
  CHECK(g.total_params() == doctest::Approx(124.4e6).epsilon(0.01));  // GPT-2 small
  fs::remove_all(dir);

  const InputError malformed = config_error("{\"num_hidden_layers\": 2,\n \"hidden_size\": }");
  CHECK(malformed.line() == 2);
  const InputError missing =
      config_error("{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"vocab_size\": 10}");
  CHECK(missing.field() == "num_attention_heads");
  const InputError bad = config_error("{\n\"num_hidden_layers\": -2, \"hidden_size\": 64}");
  CHECK(bad.field() == "num_hidden_layers");
  CHECK(bad.line() == 2);

  const TransformerConfig m = gpt_config(4, 256, 8, 1024, 128);
  TrainingSetup s = tiny_setup();
  s.tp = 3;
  CHECK_THROWS_WITH_AS(validate(m, s, "cfg.json"), doctest::Contains("'tp'"), InputError);
  s.tp = 1, s.pp = 5;
  CHECK_THROWS_WITH_AS(validate(m, s, "cfg.json"), doctest::Contains("'pp'"), InputError);
  s.pp = 1, s.dp = 2;
  CHECK_THROWS_WITH_AS(validate(m, s, "cfg.json"), doctest::Contains("'global_batch'"), InputError);
}

TEST_CASE("llm: the CLI exits 2 on an unknown GPU or a bad layout, with no output") {
  const auto dir = test::temp_dir("llm-cli");
  test::write_file(dir / "config.json",
                   R"({"n_layer": 4, "n_embd": 256, "n_head": 8, "vocab_size": 1000, "n_positions": 128})");
  const std::string cfg = (dir / "config.json").string(), out = (dir / "out").string();
  auto r = test::run_fleetsim("llm predict --model " + cfg + " --gpu NoSuchGPU --out " + out);
  CHECK(r.code == 2);
  CHECK(r.output.find("--gpu") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out" / "prediction.json"));
  r = test::run_fleetsim("llm predict --model " + cfg + " --tp 3 --seq 128 --out " + out);
  CHECK(r.code == 2);
  CHECK(r.output.find("'tp'") != std::string::npos);
  r = test::run_fleetsim("llm predict --model " + cfg + " --pp 5 --seq 128 --global-batch 2 --out " + out);
  CHECK(r.code == 2);  // more pipeline stages than the 4 layers (3 stages split 2-1-1 are fine)
  CHECK(r.output.find("'pp'") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out" / "prediction.json"));
  r = test::run_fleetsim("llm predict --model " + cfg + " --pp 3 --seq 128 --global-batch 2 --out " + out);
  CHECK(r.code == 0);
  fs::remove_all(dir / "out");
  r = test::run_fleetsim("llm predict --model " + cfg + " --seq 128 --global-batch 2 --out " + out);
  CHECK(r.code == 0);
  CHECK(fs::exists(dir / "out" / "prediction.json"));
  fs::remove_all(dir);
}

TEST_CASE("llm: vTrain single-server ground truth (1,440 measured iterations)") {
  test::require_shared("llm/vtrain/ground_truth_single.csv");
  Calibration cal =
      load_calibration(std::string(FLEETSIM_SOURCE_DIR) + "/models/calibrations/neusight-fp32.json");
  // fp16 GEMMs at the fp32 fits' efficiency on the tensor-core peak (tensor-core efficiency 1, the
  // calibration's), full recomputation (vTrain's use_checkpoint), and the default host launch time
  // (fitted on alternate rows: 61 us either way; models/llm/README.md "Host overhead").
  const auto kernels = kernel_models().create("calibrated", cal.kernels);
  CollectiveModelParams cp;
  cp.calibration = training_collectives(cal.collectives);  // nccl-tests fits with small messages below
  const auto comm = collective_models().create("calibrated", cp);
  TrainingSetup base;
  base.dtype = DType::fp16, base.recompute = Recompute::full, base.overlap_grad = false;
  const auto cases = read_vtrain_csv(test::shared_path("llm/vtrain/ground_truth_single.csv"), base);
  REQUIRE(cases.size() == 1440);
  LlmPlatform p = a100();
  p.gpu = &gpu_spec("A100-80GB");
  set_link(p, *cp.calibration);  // NVSwitch
  p.host.launch_s = kDefaultLaunchUs * 1e-6;
  std::vector<double> ape;
  for (const MeasuredCase& c : cases) {
    const Prediction r = predict_iteration(c.model, c.setup, p, *kernels, *comm);
    CHECK(r.feasible);
    ape.push_back(100 * std::abs(r.total_s / c.measured_s - 1));
  }
  const double mape = std::accumulate(ape.begin(), ape.end(), 0.0) / static_cast<double>(ape.size());
  const auto at90 = ape.begin() + static_cast<std::ptrdiff_t>(ape.size() * 9 / 10);
  std::nth_element(ape.begin(), at90, ape.end());
  MESSAGE("vTrain single-server MAPE " << mape << "%, p90 " << *at90 << "%");
  // Measured 6.66%, p90 16.65% (vTrain itself: 8.37%; target 8%). Held out: fitted on even rows, 6.87% on the
  // odd ones; on one hidden size, 7.5-7.7% on the other (models/llm/README.md).
  CHECK(mape < 7.0);
  CHECK(*at90 < 17.0);  // measured 16.65%
}
