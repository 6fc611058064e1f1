#pragma once
// summary.json: the headline figures of a run, computed from the standard observers.
#include <nlohmann/json.hpp>
#include <string>

#include "sim/metrics/fairness.hpp"
#include "sim/metrics/recorders.hpp"

namespace fleetsim {

struct RunInfo {
  std::string scenario;
  std::string policy;
  std::string placement;
  std::string job_model;
  std::uint64_t seed = 0;
  long jobs = 0;
  double wall_s = 0;
  long events = 0;
};

/// Keys: jobs, completed, skipped, skipped_reasons, mean_jct_s, p50_jct_s, p99_jct_s, mean_wait_s,
/// p50_wait_s, p99_wait_s, makespan_s, gpu_utilization (allocated GPU-time / (GPUs x makespan)),
/// busy_window_s and busy_window_utilization (the same over the busy window: from the first arrival
/// until no job arrives or waits any more, recorders.hpp; gpu_utilization when that window is empty),
/// total_gpus, peak_queued, events, wall_s, scenario, policy, placement, job_model, seed; with a
/// FairnessObserver also rho_mean, rho_max, rho_share_above_1 (finish-time fairness, fairness.hpp);
/// then `figures` (features' own headline figures, e.g. energy_figures()) before total_gpus.
nlohmann::ordered_json make_summary(const RunInfo& info, const JobTable& jobs, const TimeSeries& ts,
                                    const FairnessObserver* fairness = nullptr,
                                    const nlohmann::ordered_json& figures = nlohmann::ordered_json::object());

/// The short human table printed on stdout (a fairness line when the summary has rho figures, an
/// energy line when it has energy figures).
std::string format_summary(const nlohmann::ordered_json& s);

}  // namespace fleetsim
