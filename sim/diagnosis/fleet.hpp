#pragma once
// The fleet side of `fleetsim diagnose`: which diagnosed job (profile) each fleet job runs, the
// GPU-hours saved per fix across the fleet, and the rerun of the fleet simulation with the fixed
// jobs' shorter run times.
//
// Jobs table (--jobs FILE.csv, header row, plain CSV): `model` (or `job`) names a diagnosed job;
// GPU-hours from `gpu_hours`, else `gpus` x `duration` (seconds) / 3600. Rows naming no diagnosed
// job are counted and left out. Shares table (--shares FILE.csv): `model` (or `job`) and `share`
// (of the fleet's GPU-hours, --fleet-gpu-hours).
// GPU-hours saved by a fix = sum over the jobs it applies to of GPU-hours x (1 - 1 / speedup).
//
// Rerun (--scenario FILE with --jobs): the scenario's cluster and scheduler run the jobs table as a
// `csv` workload (columns submit, gpus, duration, model, and id when present) twice through
// run_scenario(), each in its own process: as given, and with each diagnosed job's duration divided
// by the speedup of its predicted fixes replayed together.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fleetsim::diagnosis {

struct FleetShare {
  std::string job;  ///< a diagnosed job's name
  double gpu_hours = 0;
  long rows = 0;  ///< fleet jobs running it
};

struct FleetTable {
  std::string file;
  std::vector<FleetShare> shares;  ///< per diagnosed job named in the table
  long unmatched_rows = 0;         ///< rows naming no diagnosed job
  double unmatched_gpu_hours = 0;
  double total_gpu_hours = 0;
};

/// Reads --jobs (fleet_gpu_hours = 0) or --shares with --fleet-gpu-hours. InputError names file, line
/// and column.
FleetTable read_fleet_table(const std::string& file, const std::vector<std::string>& diagnosed,
                            double fleet_gpu_hours);

struct RerunResult {
  nlohmann::json baseline, fixed;  ///< the two runs' summary.json
  long jobs_changed = 0;
};

/// Runs the scenario on the jobs table as given and with durations / speedup[job] (in forked
/// children), writing the runs into `baseline_dir` and `fixed_dir`; `fixed_csv` is where the
/// rewritten table goes.
RerunResult rerun_fleet(const std::string& scenario, const std::vector<std::string>& sets,
                        const std::string& jobs_csv, const std::map<std::string, double>& speedup,
                        const std::string& fixed_csv, const std::string& baseline_dir,
                        const std::string& fixed_dir);

}  // namespace fleetsim::diagnosis
