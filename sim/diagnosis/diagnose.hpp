#pragma once
// `fleetsim diagnose`: per job, the analyses (job_analysis.hpp), the rules' findings (rule.hpp) and
// each finding's fix replayed as a what-if (what_if.hpp); across the fleet, the GPU-hours each fix
// saves and the fleet rerun (fleet.hpp). Outputs (staged, moved into place only on success):
//   breakdown.csv     per job and rank: HTA's temporal and idle-time breakdowns, per-step figures
//   idle_streams.csv  HTA's idle-time breakdown per stream
//   kernels.csv       GPU time per kernel class and the top kernels per job
//   findings.csv      one row per finding: value, threshold, evidence, fix, predicted step, speedup
//   fixes.csv         (with --jobs or --shares) fixes ranked by fleet GPU-hours saved
//   fleet_jobs.csv    (same) GPU-hours and savings per job and fix
//   summary.json      all of it; `fleet` and `rerun` blocks when given
//   fleet_baseline/, fleet_fixed/  (with --scenario) the two fleet runs' folders
#include <string>
#include <vector>

namespace fleetsim::diagnosis {

struct DiagnoseOptions {
  std::vector<std::string> inputs;  ///< folders, manifests, trace files
  std::string out;
  std::vector<std::string> thresholds;  ///< KEY=VALUE
  std::string jobs_csv, shares_csv;
  double fleet_gpu_hours = 0;
  std::string scenario;
  std::vector<std::string> sets;  ///< scenario overrides for the rerun
  int parallel = 0;               ///< replays at once (0: the machine's cores)
  bool quiet = false;
};

/// Runs the diagnosis; returns the exit code (InputError propagates: the CLI exits 2).
int diagnose(const DiagnoseOptions& o);

}  // namespace fleetsim::diagnosis
