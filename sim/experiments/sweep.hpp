#pragma once
// fleetsim sweep: every combination x seed of a sweep file (sim/experiments/sweep_spec.hpp) is one run of
// `fleetsim run BASE --set ...` in its own process, at most `jobs` at a time, with outputs under
// OUT/runs/<id>/ beside the resolved scenario (scenario.toml), the child's log (run.log) and run.json
// (status, error text, scenario hash). A rerun skips the runs whose summary.json exists and whose
// scenario.toml has the same content as the newly resolved scenario; `force` reruns all. A failed run
// is recorded (run.json, runs.csv status/error) and never stops the others. Then the results
// (sim/experiments/sweep_results.hpp): runs.csv, aggregate.csv, paired.csv and a table on stdout.
#include <cstddef>
#include <string>

namespace fleetsim {

struct SweepOptions {
  std::string out;               ///< output folder (required)
  std::size_t jobs = 0;          ///< runs at a time (0: all cores)
  bool force = false;            ///< rerun completed runs too
  bool quiet = false;            ///< no progress and no table
  bool yes = false;              ///< start a sweep of more than kSweepConfirmRuns runs (sweep_plan.hpp)
  double worker_timeout_s = 30;  ///< --mpi: a busy worker rank silent this long is given up (sweep_mpi.hpp)
  std::string exe;               ///< the fleetsim executable the runs are started with
};

/// Runs the sweep file at `path`. Returns the exit code: 0 all runs succeeded, 1 some failed (recorded
/// in runs.csv), 130 interrupted (completed runs are kept for a rerun). Throws InputError on bad input
/// before anything runs.
int run_sweep(const std::string& path, const SweepOptions& options);

struct SweepPlan;  // sim/experiments/sweep_plan.hpp
/// Runs the plan's pending runs as local processes, `options.jobs` at a time, printing progress unless
/// quiet. Returns 0, or 130 when interrupted. (The MPI backend with one rank uses it too.)
int run_pending_locally(const SweepPlan& plan, const SweepOptions& options);
/// How many runs at a time: options.jobs (0: all cores), at most the pending runs, at least 1.
std::size_t sweep_parallelism(const SweepPlan& plan, const SweepOptions& options);
/// "fleetsim sweep: N runs (...): P to run, D done before; J at a time" on stderr unless quiet.
void print_sweep_start(const SweepPlan& plan, std::size_t parallel, bool quiet);

}  // namespace fleetsim
