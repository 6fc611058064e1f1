#pragma once
// The engine's own [execution] keys: what a job pays to start and restart, and how jobs sharing a
// GPU slow each other where the job model has no measured pair rate. Declared once, in
// engine_config.cpp, beside these defaults; read with EngineConfig::from.
#include "workloads/base/options.hpp"

namespace fleetsim {

struct EngineConfig {
  double restart_overhead_s = 30;  ///< fixed checkpoint-restore cost of a preempted job's restart, s
  double start_overhead_s = 0;     ///< cost of a job's first start before it makes progress, s
  double restart_s_per_gb = 0;     ///< plus this many seconds per GB of model state
  double state_gb_per_gpu = 0;     ///< model state per GPU of the job, GB (for restart_s_per_gb)
  double colocation_slowdown = 1;  ///< speed factor of a job per other job on its GPU (no pair rate)

  /// From the [execution] section (the keys above; the loader has range-checked them).
  static EngineConfig from(const Options& execution);
};

}  // namespace fleetsim
