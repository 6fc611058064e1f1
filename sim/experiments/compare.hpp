#pragma once
// `fleetsim compare` as an experiment: a thin sweep (sweep.hpp) in which every policy x placement
// combination on the same scenario (trace, cluster, job model, its own seed) is one sweep run,
// `fleetsim run SCENARIO --set ...` in its own process under DIR/runs/<id>/. A rerun reuses the runs
// that completed with the same resolved scenario (force: rerun all). Writes the sweep's runs.csv,
// aggregate.csv and paired.csv, and DIR/comparison.csv: one row per combination (policy, placement,
// every scalar key of summary.json in its order, then run_dir; nested objects are left out).
// A failed run does not stop the others; then no comparison.csv is written.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/scenario.hpp"

namespace fleetsim {

struct CompareSetup {
  std::string scenario;                           ///< scenario file
  std::vector<std::string> sets;                  ///< KEY=VALUE overrides for every run
  std::vector<std::string> policies, placements;  ///< registered names (placements: at least one)
  std::string out;                                ///< output folder
  std::size_t jobs = 0;                           ///< runs at a time (0: all cores)
  bool force = false;                             ///< rerun completed runs too
  bool quiet = false;                             ///< no progress on stderr
  std::string exe;                                ///< the fleetsim executable the runs start
};

struct CompareCombo {
  std::string policy, placement;
};

struct CompareResult {
  int exit_code = 0;                 ///< 0; else 2 when a run rejected its input, 1 for any other failed run
  std::vector<CompareCombo> combos;  ///< policy-major
  std::vector<nlohmann::ordered_json> summaries;  ///< each combination's summary.json (exit_code 0)
  std::size_t ran = 0;                            ///< runs started now (the others were reused)
};

/// `scenario` is the setup's scenario, loaded with its overrides (validated before anything runs).
/// Failed runs are named with their errors on stderr.
CompareResult run_compare(const CompareSetup& setup, const Scenario& scenario);

}  // namespace fleetsim
