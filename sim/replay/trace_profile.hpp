#pragma once
// A training profile (models/job/training_profile.hpp) derived from one rank's Kineto trace, so the
// cluster simulation's `kernels` job model can run the traced job on other GPU types and placements
// (`fleetsim profile-from-trace`).
//
// Per step (ProfilerStep#N, else the whole trace), averaged over the rank's steps:
//   kernels / backward_kernels  the GPU operations, grouped by shape (GEMMs whose launching aten op
//                               recorded input dims) or else by name; those launched inside the
//                               autograd engine form the backward pass. Each keeps its measured
//                               duration (`ms`) on the traced GPU and its invocations per step.
//   grad_mb                     the all-reduce bytes of the step (data-parallel gradients)
//   overlap                     measured (communication - exposed communication) / backward time
//   other_ms                    step time not covered by kernels or exposed communication (CPU-bound
//                               gaps, data loading)
// On the traced GPU alone the profile gives the measured step time minus the exposed communication;
// other GPUs re-time each kernel by the kernel model (shapes) or by spec ratio (no shape).
#include <string>
#include <vector>

#include "models/job/training_profile.hpp"
#include "sim/replay/exec_graph.hpp"
#include "sim/replay/replay.hpp"

namespace fleetsim::replay {

struct TraceProfile {
  TrainingProfile profile;
  int rank = 0;
  long steps = 0;                  ///< steps averaged over
  Breakdown measured;              ///< mean measured breakdown of those steps (span = step time)
  double forward_s = 0;            ///< per step, sum of the non-backward operations' durations
  double backward_s = 0;           ///< per step, sum of the backward operations' durations
  long shaped = 0;                 ///< kernel entries with a GEMM shape (re-timed by the kernel model)
  long shapeless = 0;              ///< entries re-timed by spec ratio
  std::vector<std::string> notes;  ///< approximations the user should know about
};

/// Derives the profile of the graph's first rank. `source_gpu` names the traced GPU when the trace's
/// device name is not in the catalog ("" = from deviceProperties). Throws InputError when the rank
/// has no GPU work inside its steps or the GPU cannot be identified.
TraceProfile profile_from_trace(const ExecGraph& g, const std::string& name,
                                const std::string& source_gpu = "");

}  // namespace fleetsim::replay
