#pragma once
// run_scenario: read the trace, build the policies, the job model and every feature the scenario
// uses (sim/app/feature.hpp) by name, simulate, and write the outputs (the run's own and the
// features'). Outputs are written into a hidden staging folder and moved into place only when
// the run succeeded, so a failed run never leaves partial files presented as complete.
#include <nlohmann/json.hpp>
#include <string>

#include "sim/app/scenario.hpp"

namespace fleetsim {

struct RunOptions {
  bool quiet = false;    ///< no progress line, no stdout table
  bool progress = true;  ///< progress line on stderr for runs longer than a second
};

struct RunOutcome {
  nlohmann::ordered_json summary;
  std::string out_dir;
};

/// Read the workload of a scenario (applies workload.limit). Throws InputError.
std::vector<JobSpec> load_jobs(const Scenario& scenario);

RunOutcome run_scenario(const Scenario& scenario, const RunOptions& options);

}  // namespace fleetsim
