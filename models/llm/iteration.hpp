#pragma once
// One training iteration of a transformer on a platform (issue 18): operators timed by a kernel model,
// collectives by a collective model, the pipeline scheduled, memory checked. Pure: no SimGrid.
//
// Placement (Megatron's rank order): TP innermost, then DP, then PP; ranks fill servers of
// `gpus_per_node` in order. A group of n ranks with stride r spans ceil(n r / gpus_per_node) servers
// (at most n) when n r exceeds a server, else one.
//
// Per stage and micro-batch: F = forward kernels + blocking TP/EP collectives, B = backward (with
// recomputation). Stage 0 adds the embedding, the last stage the head and loss; layers are split
// evenly (the first stages take the remainder).
// Pipeline (m micro-batches, p stages, critical stage c with the largest F + B):
//   pipeline = m (F_c + B_c) + bubble + pp comm
//   bubble   = (sum over stages of F_s + B_s - (F_c + B_c)) / v   (v = virtual stages, interleaved only;
//              GPipe and 1F1B have the same bubble, (p-1)/m of the compute for equal stages)
//   pp comm  = 2 (m + p - 2) send/recv of one micro-batch's activation (p > 1)
// DP: the gradients of the largest stage all-reduced (ZeRO 1-2: reduce-scatter + all-gather of the
// parameters, same volume; ZeRO 3 adds a parameter all-gather per layer forward and backward);
// with overlap_grad the reduction hides behind the last micro-batch's backward pass (exposed = the
// excess). Optimizer: Adam over the stage's parameter shard, after the reduction.
// Total = pipeline + exposed DP + optimizer + host_overhead_s.
//
// Memory per GPU (bytes; Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
// Models", 2022, for activations of 2-byte dtypes, doubled for fp32):
//   weights + grads + optimizer = params x (mixed: 2 + 2 + 12; fp32: 4 + 4 + 8), with the optimizer
//   divided by dp from ZeRO 1, the gradients from ZeRO 2, the weights from ZeRO 3;
//   activations per layer and micro-batch: s b h (34 + 5 a s / h) without TP; with TP
//   s b h (10 + 24 / t + 5 a s / (h t)); with sequence parallelism s b h (34 + 5 a s / h) / t;
//   selective recomputation drops the 5 a s / h term; full keeps 2 s b h (/ t with SP) per layer plus
//   one layer's full set; times the micro-batches in flight (1F1B: p - stage, GPipe: m), plus the
//   last stage's fp32 logits (4 s b V / t).
// Feasible when the largest stage fits in the GPU's memory.
#include <string>
#include <vector>

#include "models/collective/collective_model.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "models/kernel/kernel_model.hpp"
#include "models/llm/operators.hpp"
#include "models/llm/transformer.hpp"

namespace fleetsim::llm {

struct LlmPlatform {
  const GpuSpec* gpu = nullptr;
  int gpus_per_node = 8;
  CommFabric fabric;
  /// Fixed time per iteration outside the GPU work (framework, data loader), s.
  double host_overhead_s = 0;
  /// Host time to launch one kernel, s: a kernel takes at least this long (the CPU cannot issue
  /// kernels faster than the GPU runs them). 0 = the kernel model's time as it is. Above 0, a kernel's
  /// GPU time leaves out the kernel model's fixed per-call part (KernelPrediction::fixed_s: the
  /// calibrated fits' intercept is their benchmark harness's host time per call, which the floor
  /// replaces). 85 us fits vTrain, with tensor-core efficiency 0.7 (models/llm/README.md).
  double launch_floor_s = 0;
};

struct StageTime {
  int stage = 0;
  int layers = 0;
  double forward_s = 0, backward_s = 0;  ///< one micro-batch, including blocking TP/EP collectives
  double compute_s = 0;                  ///< kernels only, forward + backward
  double tp_s = 0, ep_s = 0;             ///< collectives, forward + backward
  double params = 0;                     ///< parameters held (before ZeRO)
  double memory_bytes = 0;
  long kernels = 0;  ///< kernel launches per micro-batch
};

struct Prediction {
  double total_s = 0;
  // Breakdown of total_s (they sum to it): critical stage's compute over all micro-batches, its
  // blocking TP and EP collectives, the pipeline bubble, exposed PP and DP communication, optimizer,
  // host overhead.
  double compute_s = 0, tp_s = 0, ep_s = 0, bubble_s = 0, pp_s = 0, dp_exposed_s = 0;
  double optimizer_s = 0, host_s = 0;
  double dp_s = 0;  ///< DP reduction time before overlap
  long microbatches = 0;
  int critical_stage = 0;
  std::vector<StageTime> stages;
  double memory_bytes = 0;     ///< largest stage
  double memory_capacity = 0;  ///< the GPU's
  bool feasible = true;
  std::string infeasible;  ///< why not, when not
  double tokens_per_s = 0;
  PredictionLabel label = PredictionLabel::measured;  ///< worst kernel label used
  /// The largest part of the iteration: "compute", "tp", "ep", "bubble", "pp", "dp", "optimizer".
  std::string dominant() const;
};

/// Predicts one iteration; validate(m, s) first (InputError on a bad setup).
Prediction predict_iteration(const TransformerConfig& m, const TrainingSetup& s, const LlmPlatform& p,
                             const KernelModel& kernels, const CollectiveModel& collectives);

/// Memory of one GPU of `stage` (see above).
double stage_memory_bytes(const TransformerConfig& m, const TrainingSetup& s, int stage, int layers,
                          double params);

}  // namespace fleetsim::llm
