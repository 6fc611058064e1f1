// fleetsim sweep SWEEP.toml --out DIR [--jobs N] [--force] [--quiet]
// Every combination x seed of the sweep file is one run in its own process (sim/app/sweep.hpp).
#include <memory>

#include "sim/app/sweep.hpp"
#include "sim/cli/cli_util.hpp"
#include "sim/cli/command.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim::cli {
namespace {

struct SweepArgs {
  std::string sweep, out;
  int jobs = 0;
  bool force = false, quiet = false;
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
  return [a] {
    if (a->jobs < 0) throw InputError("", 0, "--jobs", "must be >= 0, got " + std::to_string(a->jobs));
    SweepOptions o;
    o.out = a->out;
    o.jobs = static_cast<std::size_t>(a->jobs);
    o.force = a->force;
    o.quiet = a->quiet;
    o.exe = self_exe();
    return run_sweep(a->sweep, o);
  };
}

const CommandRegistrar kRegistrar{"sweep", "run every combination x seed of a sweep file, with 95% intervals",
                                  setup};

}  // namespace
}  // namespace fleetsim::cli
