#pragma once
// What every sweep backend shares (sim/experiments/sweep.hpp local processes, sweep_mpi.hpp MPI ranks,
// sweep_slurm.hpp SLURM array tasks): the plan (the sweep file parsed and checked, its runs sorted by
// id and resolved, the runs still to do), one run executed exactly as `fleetsim sweep` runs it (a
// clean DIR/runs/<id>/ with scenario.toml, `fleetsim run ... --out DIR/runs/<id>` with its log in
// run.log, run.json with status, error and scenario hash), and the results written at the end.
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "sim/experiments/process_pool.hpp"
#include "sim/experiments/sweep_spec.hpp"

namespace fleetsim {

/// The scenario TOML a run resolves to (base scenario + overrides) and its content hash (FNV-1a 64, hex).
struct ResolvedRun {
  std::string scenario;
  std::string hash;
};
ResolvedRun resolve_run(const SweepSpec& spec, const SweepRun& run);

/// FNV-1a 64-bit hash of `text` as 16 hex digits.
std::string content_hash(const std::string& text);

struct SweepPlan {
  std::string file;  ///< the sweep file
  SweepSpec spec;
  std::vector<SweepCombination> combos;
  std::vector<SweepRun> runs;  ///< sorted by id
  std::vector<ResolvedRun> resolved;
  std::vector<std::size_t> pending;  ///< indices into runs: not complete (or all, with force)
  std::filesystem::path out, runs_dir;
  bool out_existed =
      false;  ///< OUT was there before this sweep (else a sweep whose every run rejects its input removes it)
};

/// A sweep of more runs than this (every combination x seed, done or not) starts only when confirmed
/// (fleetsim sweep --yes).
inline constexpr std::size_t kSweepConfirmRuns = 1000;

/// Parses and checks the sweep file (InputError before anything runs), creates OUT/runs/ and finds
/// the runs to do: those without summary.json, a successful run.json and the same scenario.toml.
/// Unless `confirmed`, a sweep of more than kSweepConfirmRuns runs is an InputError stating its run
/// count (before its combinations are checked and before anything is written).
SweepPlan plan_sweep(const std::string& path, const std::string& out, bool force, bool confirmed = true);
/// The same for a sweep spec built in memory (fleetsim compare: policies x placements at one seed).
SweepPlan plan_spec(SweepSpec spec, const std::string& out, bool force, bool confirmed = true);

/// One run as a self-contained job (what an MPI worker receives).
struct SweepJob {
  std::string id;
  std::filesystem::path dir;  ///< OUT/runs/<id>
  std::string scenario;       ///< resolved scenario.toml
  std::string hash;
  std::vector<std::string> argv;  ///< fleetsim run BASE --quiet --out DIR --set ...
};
SweepJob sweep_job(const SweepPlan& plan, std::size_t run, const std::string& exe);

/// What a run ended with (also in its run.json).
struct SweepJobOutcome {
  bool ok = false;
  std::string error;
  double wall_s = 0;
  int exit_code =
      -1;  ///< when the run's process exited (2: bad input); -1 when it did not start or was killed
};

/// Empties the run's folder and writes scenario.toml (before its process starts).
void prepare_job(const SweepJob& job);
/// The process task of a job (argv, log = run.log).
ProcessTask job_task(const SweepJob& job);
/// Writes run.json from the ended process (error text from run.log when it failed; a killed run's
/// staging folder removed) and returns the outcome.
SweepJobOutcome record_job(const SweepJob& job, const ProcessResult& result);
/// prepare_job, the process, record_job: one run, synchronously. kInterrupted sets `interrupted`.
/// `tick`, when set, is called about every 20 ms while the run's process runs (an MPI worker's heartbeat).
SweepJobOutcome execute_job(const SweepJob& job, bool& interrupted, const std::function<void()>& tick = {});

/// The progress line of an ended run ("  [3/12] c000-s3 scheduler.policy=fifo  0.1 s").
void print_job_progress(const SweepPlan& plan, std::size_t run, std::size_t finished, std::size_t total,
                        const SweepJobOutcome& outcome);

/// Says that the sweep was interrupted after `finished` of `total` runs (completed runs are kept for a
/// rerun) and returns its exit code, 130.
int report_interrupted(std::size_t finished, std::size_t total);

/// Reads every run's results, writes runs.csv, aggregate.csv, paired.csv (and the table unless
/// quiet), prints the summary line. Returns 0 when every run succeeded, else 1; but when every run
/// rejected its input (exit 2: the sweep's input is bad, e.g. the base's trace) it writes nothing, removes
/// the runs' folders (and OUT if this sweep created it), prints the first run's error and returns 2.
int finish_sweep(const SweepPlan& plan, bool quiet, std::size_t ran_now,
                 std::chrono::steady_clock::time_point t0);

}  // namespace fleetsim
