#pragma once
// The FGD paper's workload inflation experiment over several placement policies and seeds: seeds are
// the scenario's seed + 0 .. N-1; each run draws pods with std::mt19937_64(seed) and gives the
// placement policy a seed derived from it (splitmix64), so the random policy's draws are independent
// of the pod draws. The scenario's [scheduler.placement_options] go to every listed policy (each key
// must be read by one of them). Runs are spread over threads; the results do not depend on how many.
#include <string>
#include <vector>

#include "sim/app/scenario.hpp"
#include "sim/experiments/inflation.hpp"

namespace fleetsim {

struct InflationExperiment {
  std::vector<std::string> placements;  ///< registered placer names, in order
  int seeds = 10;                       ///< runs per placement
  InflationOptions options;
  int threads = 0;  ///< 0: all cores
};

/// Every placement x seed run, placement-major. Throws InputError on bad input (unknown names, a trace
/// without jobs, unread placement options) before any run starts.
std::vector<InflationRun> run_inflation_experiment(const Scenario& scenario, const InflationExperiment& e);

}  // namespace fleetsim
