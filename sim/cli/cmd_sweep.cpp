// fleetsim sweep SWEEP.toml --out DIR [--jobs N] [--force] [--quiet] [--yes] [--mpi [--worker-timeout S] |
// --slurm-array | --run-one N | --collect]. Every combination x seed of the sweep file is one run in its own
// process: local processes (sim/experiments/sweep.hpp), MPI ranks (sweep_mpi.hpp) or SLURM array tasks
// (sweep_slurm.hpp).
#include <memory>

#include "sim/cli/cli_util.hpp"
#include "sim/cli/command.hpp"
#include "sim/experiments/sweep.hpp"
#include "sim/experiments/sweep_mpi.hpp"
#include "sim/experiments/sweep_plan.hpp"
#include "sim/experiments/sweep_slurm.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim::cli {
namespace {

struct SweepArgs {
  std::string sweep, out;
  int jobs = 0;
  bool force = false, quiet = false, yes = false;
  bool mpi = false, slurm = false, collect = false;
  int run_one = 0;
  double worker_timeout_s = 30;
};

Runner setup(CLI::App& sub) {
  auto a = std::make_shared<SweepArgs>();
  sub.add_option("sweep", a->sweep, "sweep TOML file: base scenario, [grid] and/or [[case]], seeds, metrics")
      ->required();
  sub.add_option("--out", a->out, "output folder: runs.csv, aggregate.csv, paired.csv, runs/<id>/")
      ->required();
  sub.add_option("--jobs,-j", a->jobs, "runs at a time (default: all cores)");
  sub.add_flag("--force", a->force, "rerun the runs a previous sweep completed with the same scenario");
  sub.add_flag("--quiet,-q", a->quiet, "no progress and no table (errors still go to stderr)");
  sub.add_flag("--yes,-y", a->yes,
               "start a sweep of more than " + std::to_string(kSweepConfirmRuns) +
                   " runs (without it such a sweep states its run count and stops, exit 2)");
  auto* mpi = sub.add_flag(
      "--mpi", a->mpi, "under mpirun -n K: rank 0 deals the runs to ranks 1..K-1 (needs a build with MPI)");
  sub.add_option("--worker-timeout", a->worker_timeout_s,
                 "--mpi: seconds a busy worker rank may stay silent before its run goes to another rank")
      ->capture_default_str();
  auto* slurm = sub.add_flag("--slurm-array", a->slurm,
                             "write the pending runs and print an sbatch array script (one task per run)");
  auto* one =
      sub.add_option("--run-one", a->run_one, "run line N (from 0) of DIR/slurm/runs.txt (array tasks)");
  auto* collect =
      sub.add_flag("--collect", a->collect, "only build runs.csv, aggregate.csv, paired.csv from DIR/runs/");
  mpi->excludes(slurm, one, collect);
  slurm->excludes(one, collect);
  one->excludes(collect);
  return [a, one] {
    if (a->jobs < 0) throw InputError("", 0, "--jobs", "must be >= 0, got " + std::to_string(a->jobs));
    if (!(a->worker_timeout_s > 0 && a->worker_timeout_s <= 86400))
      throw InputError(
          "", 0, "--worker-timeout",
          "must be a number of seconds in (0, 86400], got " + std::to_string(a->worker_timeout_s));
    SweepOptions o;
    o.out = a->out;
    o.jobs = static_cast<std::size_t>(a->jobs);
    o.force = a->force;
    o.quiet = a->quiet;
    o.yes = a->yes;
    o.worker_timeout_s = a->worker_timeout_s;
    o.exe = self_exe();
    if (a->mpi) return run_sweep_mpi(a->sweep, o);
    if (a->slurm) return write_slurm_array(a->sweep, o);
    if (a->collect) return collect_sweep(a->sweep, o);
    if (one->count() > 0) {
      if (a->run_one < 0)
        throw InputError("", 0, "--run-one", "must be >= 0, got " + std::to_string(a->run_one));
      return run_one_listed(a->sweep, o, static_cast<std::size_t>(a->run_one));
    }
    return run_sweep(a->sweep, o);
  };
}

const CommandRegistrar kRegistrar{"sweep", "run every combination x seed of a sweep file, with 95% intervals",
                                  setup};

}  // namespace
}  // namespace fleetsim::cli
