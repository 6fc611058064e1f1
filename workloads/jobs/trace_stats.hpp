#pragma once
// TraceStats: a summary of a workload (counts, arrival span, GPU demand, duration percentiles,
// GPU-hours), and a readable text table of it for the CLI's trace inspection.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "workloads/jobs/job.hpp"

namespace fleetsim {

struct TraceStats {
  std::size_t jobs = 0;
  double first_submit_s = 0;                 ///< earliest submit time
  double last_submit_s = 0;                  ///< latest submit time
  double span_s = 0;                         ///< last - first submit
  std::map<int, std::size_t> gpu_histogram;  ///< GPUs per job -> number of jobs (0 = CPU only)
  std::size_t fractional_gpu_jobs = 0;       ///< jobs sharing GPUs (gpus > 0 and gpu_milli < 1000)
  std::size_t single_node_jobs = 0;          ///< jobs that must sit on one node
  std::size_t jobs_with_steps = 0;           ///< jobs with a step count
  std::size_t jobs_with_duration = 0;        ///< jobs with a known duration; the figures below are over these
  double duration_p10_s = 0, duration_p50_s = 0, duration_p90_s = 0, duration_p99_s = 0;
  double duration_max_s = 0, duration_mean_s = 0;
  /// Sum of gpus * gpu_milli / 1000 * duration / 3600 over jobs with a duration.
  double gpu_hours = 0;
};

/// Summary of `jobs` (in any order). Percentiles interpolate linearly between order statistics.
TraceStats compute_stats(const std::vector<JobSpec>& jobs);

/// Readable multi-line table with units, headed by `title`.
std::string format_stats(const TraceStats& stats, const std::string& title);

/// "42 s", "12.5 min", "3.2 h", "4.1 d": a duration in the largest unit that keeps it >= 1 (to 1 decimal).
std::string human_duration(double seconds);

}  // namespace fleetsim
