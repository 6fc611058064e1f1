#pragma once
// The results of a sweep: runs.csv (one row per run: id, swept keys, seed, status, error, metrics),
// aggregate.csv (per combination and metric: n, mean, std, 95% CI half-width over seeds, min, max),
// paired.csv (a setting vs the baseline setting of its key on the same seeds: difference and relative
// difference with their 95% intervals) and the table fleetsim sweep prints. Nothing here depends on
// the order in which runs ended: rows are sorted by run id, so the same sweep gives byte-identical
// files whatever the number of workers.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/experiments/sweep_spec.hpp"

namespace fleetsim {

/// What one run left: its status and, when it succeeded, its metrics (summary.json's numbers, nested
/// objects flattened as "block.key"; wall times and the seed left out).
struct SweepRunResult {
  bool ok = false;
  std::string error;
  int exit_code = -1;  ///< of a failed run's process (2: bad input); -1 when it did not exit by itself
  std::string hash;
  std::map<std::string, double> metrics;
  std::vector<std::string> metric_order;  ///< keys in summary.json order
};

/// Reads OUT/runs/<id>/ (run.json, summary.json) of a run. A run without run.json is "missing".
SweepRunResult read_run_result(const std::filesystem::path& run_dir);

/// Writes runs.csv, aggregate.csv and paired.csv into `out` (each through a temporary file), and
/// prints the table unless `quiet`.
void write_sweep_results(const SweepSpec& spec, const std::vector<SweepCombination>& combos,
                         const std::vector<SweepRun>& runs, const std::vector<SweepRunResult>& results,
                         const std::filesystem::path& out, bool quiet);

}  // namespace fleetsim
