#pragma once
// fleetsim sweep: every combination x seed of a sweep file (sim/app/sweep_spec.hpp) is one run of
// `fleetsim run BASE --set ...` in its own process, at most `jobs` at a time, with outputs under
// OUT/runs/<id>/ beside the resolved scenario (scenario.toml), the child's log (run.log) and run.json
// (status, error text, scenario hash). A rerun skips the runs whose summary.json exists and whose
// scenario.toml has the same content as the newly resolved scenario; `force` reruns all. A failed run
// is recorded (run.json, runs.csv status/error) and never stops the others. Then the results
// (sim/app/sweep_results.hpp): runs.csv, aggregate.csv, paired.csv and a table on stdout.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/app/sweep_spec.hpp"

namespace fleetsim {

struct SweepOptions {
  std::string out;       ///< output folder (required)
  std::size_t jobs = 0;  ///< runs at a time (0: all cores)
  bool force = false;    ///< rerun completed runs too
  bool quiet = false;    ///< no progress and no table
  std::string exe;       ///< the fleetsim executable the runs are started with
};

/// The scenario TOML a run resolves to (base scenario + overrides) and its content hash (FNV-1a 64, hex).
struct ResolvedRun {
  std::string scenario;
  std::string hash;
};
ResolvedRun resolve_run(const SweepSpec& spec, const SweepRun& run);

/// FNV-1a 64-bit hash of `text` as 16 hex digits.
std::string content_hash(const std::string& text);

/// Runs the sweep file at `path`. Returns the exit code: 0 all runs succeeded, 1 some failed (recorded
/// in runs.csv), 130 interrupted (completed runs are kept for a rerun). Throws InputError on bad input
/// before anything runs.
int run_sweep(const std::string& path, const SweepOptions& options);

}  // namespace fleetsim
