#pragma once
// Pipeline schedules of one training iteration: how long m micro-batches take through p stages, the
// bubble, the point-to-point sends on the critical path and the micro-batches each stage holds in
// flight (for memory). Pure arithmetic on per-stage times: no kernels, no SimGrid.
//
// Stage s takes F_s forward and B_s backward per micro-batch (its whole share of the model); c is the
// stage with the largest F + B, v the model chunks per stage (interleaved only; 1 otherwise).
//   GPipe        all forwards, then all backwards (flow shop of identical jobs per direction):
//                time = sum_s (F_s + B_s) + (m - 1) (max_s F_s + max_s B_s)
//   1F1B         (Narayanan et al., SC'21; PipeDream-Flush): time = m (F_c + B_c) + sum_{s != c} (F_s + B_s)
//   interleaved  each stage runs v chunks of 1/v of its layers:
//                time = m (F_c + B_c) + sum_{s != c} (F_s + B_s) / v
// For equal stages (F + B = T each): GPipe and 1F1B take (m + p - 1) T, a bubble of (p - 1) T, i.e.
// (p - 1) / m of the ideal m T; interleaved (m + (p - 1) / v) T, a bubble of (p - 1) / (v m).
// Sends on the critical path (each one micro-batch's activation or its gradient, blocking): a
// micro-batch crosses the critical stage's two boundaries forward and backward, and the pipeline's
// fill and drain cross the p - 1 boundaries once each way: 2 (m + p - 2); interleaved crosses v times as
// many chunk boundaries per micro-batch: 2 (v m + p - 2). No sends when p = 1.
// In flight (micro-batches whose activations a stage holds at its peak):
//   GPipe        m
//   1F1B         min(m, p - s)
//   interleaved  in chunks of 1/v of the stage's layers, Megatron's warm-up count plus the one in its
//                steady state: min(v m, 2 (p - s - 1) + (v - 1) p + 1); for stage 0 that is
//                p (1 + (p - 1) / (p v)) stage-shares (Korthikanti et al. 2022, section 4.2.3).
#include <vector>

#include "models/llm/transformer.hpp"

namespace fleetsim::llm {

struct StagePass {
  double forward_s = 0, backward_s = 0;  ///< one micro-batch through the stage
};

struct PipelineTime {
  double total_s = 0;   ///< the pipeline part of the iteration (no optimizer, no DP)
  double steady_s = 0;  ///< m (F_c + B_c): the critical stage's work
  double bubble_s = 0;  ///< total_s - steady_s
  int critical = 0;     ///< c
};

/// Pipeline time of `m` micro-batches over `stages` (one entry per pipeline rank).
PipelineTime pipeline_time(PipelineSchedule schedule, const std::vector<StagePass>& stages, long m,
                           int virtual_stages);

/// Point-to-point sends on the critical path (see above).
double pipeline_sends(PipelineSchedule schedule, int p, long m, int virtual_stages);

/// Micro-batches (in units of the stage's whole layer share) stage `s` holds at its peak.
double in_flight(PipelineSchedule schedule, int s, int p, long m, int virtual_stages);

}  // namespace fleetsim::llm
