#pragma once
// What `fleetsim diagnose` found, as the writers (outputs.cpp) need it.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/app/staging.hpp"
#include "sim/diagnosis/fleet.hpp"
#include "sim/diagnosis/job_analysis.hpp"
#include "sim/diagnosis/rule.hpp"

namespace fleetsim::diagnosis {

struct JobResult {
  JobInput input;
  JobAnalysis analysis;
  std::vector<Finding> findings;
  double baseline_s = 0;            ///< replayed step time with the trace's durations
  std::vector<double> predicted_s;  ///< per finding (0: not simulated)
  double combined_s = 0;            ///< all predicted fixes together (0: none)
  double speedup(std::size_t i) const { return predicted_s[i] > 0 ? baseline_s / predicted_s[i] : 1.0; }
  double combined_speedup() const { return combined_s > 0 ? baseline_s / combined_s : 1.0; }
};

struct RankedFix {
  std::string rule;  ///< a rule name, or "all predicted fixes"
  std::string estimate;
  long jobs = 0;
  double gpu_hours = 0;  ///< of the jobs it applies to
  double saved = 0;      ///< GPU-hours saved
};

struct FleetResult {
  FleetTable table;
  std::vector<RankedFix> ranking;  ///< by saved, descending
  std::optional<RerunResult> rerun;
};

/// Writes the output files (diagnose.hpp) into the staging folder.
void write_outputs(const std::vector<JobResult>& jobs, const std::optional<FleetResult>& fleet, Staging& out);
std::string format_findings(const std::vector<JobResult>& jobs, const std::optional<FleetResult>& fleet);

}  // namespace fleetsim::diagnosis
