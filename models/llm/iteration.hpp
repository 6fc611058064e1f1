#pragma once
// One training iteration of a transformer on a platform: operators timed by a kernel model and
// issued by the host (host.hpp), collectives priced at the size each call sends (comm.hpp), the
// pipeline scheduled (schedule.hpp), memory checked (memory.hpp). Pure: no SimGrid.
//
// Per stage and micro-batch: F = the stage's forward pass (embedding on stage 0, its layers, head on
// the last stage) and B = its backward pass (with recomputation), each a stream of kernels and
// blocking TP/EP collectives issued by the host; their time is the stream's (host.hpp). Megatron
// overlaps none of the TP collectives with compute (they sit between dependent GEMMs) and runs
// pipeline sends between passes.
// Pipeline: schedule.hpp's time of m micro-batches, plus the critical path's sends
// (2 (m + p - 2) activations of one micro-batch; interleaved 2 (v m + p - 2)) and the tied-embedding
// gradient sync between the first and last stage.
// DP: the gradients of the largest stage all-reduced (ZeRO 1-2: reduce-scatter + all-gather of the
// parameters, same volume; ZeRO 3 adds a parameter all-gather per layer forward and backward);
// with overlap_grad (Megatron's overlapped DDP) the reduction runs in buckets of
// grad_bucket_params() as the last micro-batch's backward pass fills them, the last bucket after the
// pass (bucketed_reduction, comm.hpp: exposed = what ends after the pass), else it all follows the
// pipeline; the ZeRO all-gathers block. Optimizer: Adam over the stage's parameter shard, after the
// reduction.
// Total = pipeline + sends + exposed DP + optimizer + host_overhead_s.
// Memory: memory.hpp, per stage; with TrainingSetup::recompute_auto the least recomputation whose
// largest stage fits (none, selective, full) is used. A layout whose largest stage needs more than
// the GPU's memory is predicted and flagged (feasible = false, with why).
#include <string>
#include <vector>

#include "models/collective/collective_model.hpp"
#include "models/kernel/kernel_model.hpp"
#include "models/llm/memory.hpp"
#include "models/llm/operators.hpp"
#include "models/llm/platform.hpp"
#include "models/llm/transformer.hpp"

namespace fleetsim::llm {

struct StageTime {
  int stage = 0;
  int layers = 0;
  double forward_s = 0, backward_s = 0;  ///< one micro-batch, as the stream runs it
  double compute_s = 0;                  ///< kernels' GPU time, forward + backward
  double tp_s = 0, ep_s = 0;             ///< collectives, forward + backward
  double launch_s = 0;                   ///< host-bound time: passes less their GPU work
  double params = 0;                     ///< parameters held (before ZeRO)
  MemoryBreakdown memory;
  long kernels = 0;  ///< kernel launches per micro-batch
};

struct Prediction {
  double total_s = 0;
  // Breakdown of total_s (they sum to it): the critical stage's compute, blocking TP and EP
  // collectives and host-bound time over all micro-batches, the pipeline bubble, PP sends, exposed
  // DP communication, optimizer, fixed host overhead.
  double compute_s = 0, tp_s = 0, ep_s = 0, launch_s = 0, bubble_s = 0, pp_s = 0, dp_exposed_s = 0;
  double optimizer_s = 0, host_s = 0;
  double dp_s = 0;  ///< DP reduction time before overlap
  long microbatches = 0;
  int critical_stage = 0;
  std::vector<StageTime> stages;
  Recompute recompute = Recompute::none;  ///< what ran (recompute_auto: the least that fits)
  MemoryBreakdown memory;                 ///< the largest stage's
  double memory_bytes = 0;                ///< memory.total()
  double memory_capacity = 0;             ///< the GPU's
  bool feasible = true;                   ///< fits in memory
  std::string infeasible;                 ///< why not, when not
  double tokens_per_s = 0;
  PredictionLabel label = PredictionLabel::measured;  ///< worst kernel label used
  /// The largest part of the iteration: "compute", "tp", "ep", "launch", "bubble", "pp", "dp",
  /// "optimizer", "host".
  std::string dominant() const;
};

/// Predicts one iteration; validate(m, s) first (InputError on a bad setup).
Prediction predict_iteration(const TransformerConfig& m, const TrainingSetup& s, const LlmPlatform& p,
                             const KernelModel& kernels, const CollectiveModel& collectives);

}  // namespace fleetsim::llm
