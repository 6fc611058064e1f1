// What decides and times an LLM iteration beyond its kernels (models/llm): per-GPU memory against
// the published accounting (ZeRO's bytes per parameter, Korthikanti et al.'s activations per layer),
// recomputation chosen by memory, each pipeline schedule's bubble, the host issuing kernels, and the
// tensor-parallel all-reduces a micro-batch sends. Every expected value is derived by hand below.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "models/llm/iteration.hpp"
#include "models/llm/memory.hpp"
#include "models/llm/schedule.hpp"

using namespace fleetsim;
using namespace fleetsim::llm;

namespace {

/// GPT-3 175B as Megatron and Korthikanti et al. describe it: 96 layers, h 12288, 96 heads.
TransformerConfig gpt3_175b() {
  return gpt_config(96, 12288, 96, 51200, 2048);
}

TrainingSetup half(long seq, long micro) {
  TrainingSetup s;
  s.seq = seq, s.micro_batch = micro, s.global_batch = micro, s.dtype = DType::fp16;
  return s;
}

/// 1 us per kernel.
class Constant final : public KernelModel {
 public:
  KernelPrediction predict(const KernelDesc&, const GpuSpec&) const override {
    return {1e-6, PredictionLabel::measured};
  }
};

/// An all-reduce takes 1 us + 1 ns per byte; other collectives nothing.
class LinearAllReduce final : public CollectiveModel {
 public:
  CollectivePrediction predict(const CollectiveDesc& d, const CommFabric&) const override {
    if (d.op != Collective::all_reduce) return {0, "none", ""};
    return {1e-6 + 1e-9 * d.bytes, "ring", "Simple"};
  }
};

LlmPlatform a100_80() {
  LlmPlatform p;
  p.gpu = &gpu_spec("A100-80GB");
  p.fabric = fabric_for(*p.gpu);
  return p;
}

}  // namespace

TEST_CASE("memory: ZeRO's bytes per parameter (Rajbhandari et al., SC'20, Figure 1: 7.5B, 64 GPUs)") {
  // Mixed precision: 2 (fp16 weights) + 2 (gradients) + K = 12 (fp32 weights, momentum, variance)
  // bytes per parameter. Figure 1: Psi = 7.5 B, N_d = 64: baseline 120 GB, P_os 31.4 GB, P_os+g
  // 16.6 GB, P_os+g+p 1.9 GB per GPU.
  const TransformerConfig tiny = gpt_config(1, 8, 1, 8, 1);
  TrainingSetup s = half(1, 1);
  s.dp = 64, s.global_batch = 64;
  const StageShape shape{0, 7.5e9};
  const double expected[] = {120e9, 4 * 7.5e9 + 12 * 7.5e9 / 64, 2 * 7.5e9 + 14 * 7.5e9 / 64,
                             16 * 7.5e9 / 64};
  const double published_gb[] = {120, 31.4, 16.6, 1.9};
  for (int zero = 0; zero <= 3; ++zero) {
    s.zero = zero;
    const MemoryBreakdown m = stage_memory(tiny, s, 0, shape);
    const double state = m.weights + m.grads + m.optimizer;
    CHECK(state == doctest::Approx(expected[zero]));
    CHECK(state / 1e9 == doctest::Approx(published_gb[zero]).epsilon(0.02));  // the paper rounds
  }
  s.dtype = DType::fp32, s.zero = 0;  // fp32 training: 4 + 4 + 8 (Adam's two moments)
  const MemoryBreakdown f = stage_memory(tiny, s, 0, shape);
  CHECK(f.weights + f.grads + f.optimizer == doctest::Approx(16 * 7.5e9));
  CHECK(f.optimizer == doctest::Approx(8 * 7.5e9));
}

TEST_CASE("memory: activations per layer are Korthikanti et al.'s Table 2 (GPT-3 175B, s 2048, b 1, t 8)") {
  // Reducing Activation Recomputation in Large Transformer Models (MLSys 2023), Table 2, bytes per
  // layer: s b h (34 + 5 a s / h) without parallelism; TP s b h (10 + 24/t + 5 a s/(h t)); TP + SP
  // s b h (34/t + 5 a s/(h t)); TP + selective s b h (10 + 24/t); TP + SP + selective 34 s b h / t;
  // full 2 s b h. Here 5 a s / h = 5 x 96 x 2048 / 12288 = 80.
  const TransformerConfig m = gpt3_175b();
  const double sbh = 2048.0 * 1 * 12288;
  TrainingSetup s = half(2048, 1);
  CHECK(layer_activation_bytes(m, s, Recompute::none) == doctest::Approx(sbh * (34 + 80)));
  s.tp = 8;
  CHECK(layer_activation_bytes(m, s, Recompute::none) == doctest::Approx(sbh * (10 + 3 + 10)));
  CHECK(layer_activation_bytes(m, s, Recompute::selective) == doctest::Approx(sbh * 13));
  CHECK(layer_activation_bytes(m, s, Recompute::full) == doctest::Approx(2 * sbh));
  s.sequence_parallel = true;
  CHECK(layer_activation_bytes(m, s, Recompute::none) == doctest::Approx(sbh * (34.0 / 8 + 10)));
  CHECK(layer_activation_bytes(m, s, Recompute::selective) == doctest::Approx(sbh * 34 / 8));
  // fp32 tensors are twice the bytes; a micro batch of 4 four times.
  s.sequence_parallel = false, s.dtype = DType::fp32;
  CHECK(layer_activation_bytes(m, s, Recompute::selective) == doctest::Approx(2 * sbh * 13));
  s.dtype = DType::fp16, s.micro_batch = 4;
  CHECK(layer_activation_bytes(m, s, Recompute::selective) == doctest::Approx(4 * sbh * 13));
}

TEST_CASE("memory: GPT-3 175B, TP 8, PP 8, DP 8, ZeRO 1, selective + SP: a middle stage by hand") {
  // Stage 1 of 8 holds 12 layers of 12 h^2 + 13 h parameters / t = 226,512,384 each: 2,718,148,608.
  // Model state with ZeRO 1 over dp 8: (2 + 2 + 12 / 8) bytes each = 14,949,817,344 B. Activations
  // (1F1B: stage 1 holds p - 1 = 7 micro-batches): 12 x 7 x 34 s b h / t = 8,984,199,168 B.
  const TransformerConfig m = gpt3_175b();
  TrainingSetup s = half(2048, 1);
  s.tp = 8, s.pp = 8, s.dp = 8, s.global_batch = 64, s.zero = 1;
  s.recompute = Recompute::selective, s.sequence_parallel = true;
  const auto shapes = stage_shapes(m, s);
  REQUIRE(shapes.size() == 8);
  CHECK(shapes[1].layers == 12);
  CHECK(shapes[1].params == doctest::Approx(2718148608.0));
  const MemoryBreakdown b = stage_memory(m, s, 1, shapes[1]);
  CHECK(b.weights + b.grads + b.optimizer == doctest::Approx(14949817344.0));
  CHECK(b.activations == doctest::Approx(8984199168.0));
  CHECK(b.total() == doctest::Approx(23934016512.0));
  // The first stage holds p = 8 micro-batches of its 12 layers, i.e. all L = 96 layer-micro-batches
  // (Korthikanti et al. section 4.2.3), plus the embedding output's dropout mask (s b h / t per
  // micro-batch with SP).
  const MemoryBreakdown first = stage_memory(m, s, 0, shapes[0]);
  const double sbh = 2048.0 * 12288;
  CHECK(first.activations == doctest::Approx(96 * 34 * sbh / 8 + 8 * sbh / 8));
}

TEST_CASE("memory: --recompute auto takes the least recomputation that fits (GPT-3 175B on A100-80GB)") {
  // TP 8, PP 8, DP 8, ZeRO 1, no SP, first stage (8 micro-batches of 12 layers in flight), model state
  // 5.5 bytes x 2.796e9 parameters (12 layers + the embedding) = 15.4 GB of 85.9 GB (80 GiB):
  //   micro batch 2: none 96 x 23 s b h x 2 = 111 GB; selective 96 x 13 x 2 s b h = 62.8 GB: selective
  //   micro batch 4: selective 126 GB; full 96 x 2 x 4 s b h + one layer's whole set 23 x 4 s b h
  //                  = 19.3 + 2.3 GB: full
  //   micro batch 1: none 55.6 GB: none
  const TransformerConfig m = gpt3_175b();
  const double capacity = 80.0 * 1024 * 1024 * 1024;
  const Recompute expected[] = {Recompute::none, Recompute::none, Recompute::selective, Recompute::none,
                                Recompute::full};  // by micro batch
  for (long micro : {1L, 2L, 4L}) {
    TrainingSetup s = half(2048, micro);
    s.tp = 8, s.pp = 8, s.dp = 8, s.global_batch = 64 * micro, s.zero = 1;
    INFO("micro batch " << micro);
    CHECK(least_recompute(m, s, capacity) == expected[micro]);
    s.recompute_auto = true;
    const Prediction r = predict_iteration(m, s, a100_80(), Constant{}, LinearAllReduce{});
    CHECK(r.recompute == expected[micro]);
    CHECK(r.feasible);
    CHECK(r.memory_bytes <= capacity);
    s.recompute_auto = false, s.recompute = Recompute::none;  // the same layout without recomputation
    const Prediction none = predict_iteration(m, s, a100_80(), Constant{}, LinearAllReduce{});
    CHECK(none.feasible == (micro == 1));
    if (!none.feasible) CHECK(none.infeasible.find("activations") != std::string::npos);
  }
}

TEST_CASE("schedules: 1F1B, GPipe and interleaved bubbles are the schedules' arithmetic") {
  // Four equal stages (F = 1, B = 2), m = 8: the ideal is 8 x 3 = 24; 1F1B and GPipe add
  // (p - 1)(F + B) = 9, a bubble of (p - 1) / m = 3/8; interleaved with v = 2 adds 9 / 2 = 4.5,
  // (p - 1) / (v m) = 3/16.
  const std::vector<StagePass> equal(4, StagePass{1, 2});
  const PipelineTime f1b = pipeline_time(PipelineSchedule::one_f_one_b, equal, 8, 1);
  CHECK(f1b.total_s == doctest::Approx(33));
  CHECK(f1b.bubble_s / f1b.steady_s == doctest::Approx(3.0 / 8));
  CHECK(pipeline_time(PipelineSchedule::gpipe, equal, 8, 1).total_s == doctest::Approx(33));
  const PipelineTime inter = pipeline_time(PipelineSchedule::interleaved, equal, 8, 2);
  CHECK(inter.total_s == doctest::Approx(28.5));
  CHECK(inter.bubble_s / inter.steady_s == doctest::Approx(3.0 / 16));
  // Unequal stages, m = 3: stage 0 F 2 B 1, stage 1 F 1 B 3. 1F1B: 3 x max(F + B) = 12, plus the
  // other stage once: 15. GPipe (each direction a flow shop): sum(F + B) = 7 plus
  // (m - 1)(max F + max B) = 2 x 5: 17.
  const std::vector<StagePass> uneven{{2, 1}, {1, 3}};
  const PipelineTime u = pipeline_time(PipelineSchedule::one_f_one_b, uneven, 3, 1);
  CHECK(u.total_s == doctest::Approx(15));
  CHECK(u.critical == 1);
  CHECK(pipeline_time(PipelineSchedule::gpipe, uneven, 3, 1).total_s == doctest::Approx(17));
  // One stage: no bubble, no sends.
  const PipelineTime one = pipeline_time(PipelineSchedule::one_f_one_b, {{1, 2}}, 5, 1);
  CHECK(one.bubble_s == 0);
  CHECK(pipeline_sends(PipelineSchedule::one_f_one_b, 1, 5, 1) == 0);
  // Sends on the critical path: 2 (m + p - 2) = 20; interleaved 2 (v m + p - 2) = 36.
  CHECK(pipeline_sends(PipelineSchedule::one_f_one_b, 4, 8, 1) == 20);
  CHECK(pipeline_sends(PipelineSchedule::interleaved, 4, 8, 2) == 36);
  // In flight: 1F1B p - s (at most m); GPipe m; interleaved stage 0 holds p (1 + (p - 1) / (p v)) =
  // 4 x 11/8 = 5.5 stage-shares (11 chunks of half a stage), the last stage 5 chunks = 2.5.
  CHECK(in_flight(PipelineSchedule::one_f_one_b, 0, 4, 8, 1) == 4);
  CHECK(in_flight(PipelineSchedule::one_f_one_b, 3, 4, 8, 1) == 1);
  CHECK(in_flight(PipelineSchedule::one_f_one_b, 0, 4, 2, 1) == 2);
  CHECK(in_flight(PipelineSchedule::gpipe, 2, 4, 8, 1) == 8);
  CHECK(in_flight(PipelineSchedule::interleaved, 0, 4, 8, 2) == doctest::Approx(5.5));
  CHECK(in_flight(PipelineSchedule::interleaved, 3, 4, 8, 2) == doctest::Approx(2.5));
}

TEST_CASE("schedules: the interleaved schedule through predict_iteration, 8 layers on 4 stages") {
  // 1 us per kernel, no communication: a layer is 15 forward + 23 backward kernels = 38 us; stages
  // hold 2 layers (+ embedding 3 us on stage 0, head 8 us on stage 3): 79, 76, 76, 84 us per
  // micro-batch. m = 8: 1F1B 8 x 84 + (79 + 76 + 76) = 903 us; interleaved (v = 2) 672 + 231 / 2.
  const TransformerConfig m = gpt_config(8, 64, 4, 128, 16);
  TrainingSetup s = half(16, 1);
  s.pp = 4, s.global_batch = 8;
  LlmPlatform p = a100_80();
  const Prediction f1b = predict_iteration(m, s, p, Constant{}, LinearAllReduce{});
  CHECK(f1b.critical_stage == 3);
  CHECK(f1b.bubble_s == doctest::Approx(231e-6));
  CHECK(f1b.compute_s == doctest::Approx(672e-6));
  s.schedule = PipelineSchedule::interleaved, s.virtual_stages = 2;
  const Prediction inter = predict_iteration(m, s, p, Constant{}, LinearAllReduce{});
  CHECK(inter.bubble_s == doctest::Approx(115.5e-6));
  CHECK(inter.compute_s == doctest::Approx(672e-6));
}

TEST_CASE("host: kernels issued ahead of the GPU, or each at least its launch") {
  // launch 10 us; kernels of 50, 1, 1, 1 us. Running ahead: issued at 10, 20, 30, 40; done at 60,
  // 61, 62, 63. Per kernel: 50 + 3 x 10 = 80. Ten 1-us kernels running ahead: host-bound, 101 us.
  HostModel h{10e-6, false};
  StreamQueue ahead(h, true), per(h, false);
  for (double g : {50e-6, 1e-6, 1e-6, 1e-6}) ahead.issue(g), per.issue(g);
  CHECK(ahead.done_s() == doctest::Approx(63e-6));
  CHECK(per.done_s() == doctest::Approx(80e-6));
  StreamQueue small(h, true);
  small.issue(1e-6, 10);
  CHECK(small.done_s() == doctest::Approx(101e-6));
  // CUDA graphs: one 10 us launch, then the kernels back to back: 10 + 53.
  StreamQueue graph(HostModel{10e-6, true}, false);
  for (double g : {50e-6, 1e-6, 1e-6, 1e-6}) graph.issue(g);
  CHECK(graph.done_s() == doctest::Approx(63e-6));
  // A block repeated 100 times equals issuing it 100 times (the steady state extrapolated): GPU-bound
  // after the first, 63 + 99 x 53 us; and a host-bound block, 100 x 40 + 1.
  for (const std::vector<QueueItem>& block :
       {std::vector<QueueItem>{{50e-6, 1}, {1e-6, 3}}, std::vector<QueueItem>{{1e-6, 4}}}) {
    StreamQueue looped(h, true), repeated(h, true);
    for (int i = 0; i < 100; ++i)
      for (const QueueItem& k : block) looped.issue(k.gpu_s, k.count);
    repeated.repeat(block, 100);
    CHECK(repeated.done_s() == doctest::Approx(looped.done_s()).epsilon(1e-12));
  }
  StreamQueue gpu_bound(h, true);
  gpu_bound.repeat({{50e-6, 1}, {1e-6, 3}}, 100);
  CHECK(gpu_bound.done_s() == doctest::Approx(63e-6 + 99 * 53e-6));
}

TEST_CASE("tp: a micro-batch's all-reduces, 2 + 2 per layer (+ 2 recomputed) at s b h bytes") {
  // 2 layers, h 64, seq 16, micro batch 2, fp16, TP 2: each all-reduce sends 2 x 16 x 64 x 2 =
  // 4,096 bytes, 1 us + 4.096 us. Per micro-batch: 2 layers x (2 forward + 2 backward) + the
  // vocab-parallel embedding's 1 = 9; full recomputation repeats each layer's 2 forward ones: 13.
  // Two micro-batches (global batch 4).
  const TransformerConfig m = gpt_config(2, 64, 4, 128, 16);
  TrainingSetup s = half(16, 2);
  s.tp = 2, s.global_batch = 4;
  const double one = 1e-6 + 1e-9 * 4096;
  const Prediction r = predict_iteration(m, s, a100_80(), Constant{}, LinearAllReduce{});
  CHECK(r.microbatches == 2);
  CHECK(r.tp_s == doctest::Approx(2 * 9 * one));
  s.recompute = Recompute::full;
  CHECK(predict_iteration(m, s, a100_80(), Constant{}, LinearAllReduce{}).tp_s ==
        doctest::Approx(2 * 13 * one));
  // Blocking: the iteration is the kernels plus these collectives (one stage, no DP, no host model).
  s.recompute = Recompute::none;
  const Prediction blocking = predict_iteration(m, s, a100_80(), Constant{}, LinearAllReduce{});
  CHECK(blocking.total_s == doctest::Approx(blocking.compute_s + blocking.tp_s + blocking.optimizer_s));
}
