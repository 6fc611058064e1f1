// fleetsim diagnose TRACES... --out DIR [--jobs JOBS.csv | --shares SHARES.csv --fleet-gpu-hours H]
//                   [--scenario FILE [--set KEY=VALUE ...]] [--threshold KEY=VALUE ...]
#include <cstdio>
#include <memory>

#include "sim/cli/command.hpp"
#include "sim/diagnosis/diagnose.hpp"
#include "sim/diagnosis/rule.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim::cli {
namespace {

Runner setup(CLI::App& sub) {
  auto a = std::make_shared<diagnosis::DiagnoseOptions>();
  auto list = std::make_shared<bool>(false);
  sub.add_option(
      "traces", a->inputs,
      "jobs: a folder per job (its ranks' Kineto traces), a manifest CSV (job,rank,path) or a trace file");
  sub.add_option("--out", a->out, "output folder (findings.csv, breakdown.csv, summary.json, ...)");
  sub.add_option("--threshold", a->thresholds,
                 "a rule threshold KEY=VALUE (repeatable; --list-rules lists them)");
  sub.add_option("--jobs", a->jobs_csv,
                 "fleet jobs table (model naming a diagnosed job; gpus, duration or gpu_hours)");
  sub.add_option("--shares", a->shares_csv, "fleet shares table (model, share) with --fleet-gpu-hours");
  sub.add_option("--fleet-gpu-hours", a->fleet_gpu_hours, "the fleet's GPU-hours that --shares divides");
  sub.add_option("--scenario", a->scenario,
                 "rerun the fleet (--jobs) on this scenario's cluster and scheduler");
  sub.add_option("--set", a->sets, "scenario override for the rerun KEY=VALUE (repeatable)");
  sub.add_option("--parallel", a->parallel, "replays at once (default: the machine's cores)");
  sub.add_flag("--list-rules", *list, "list the rules and their thresholds, and exit");
  sub.add_flag("--quiet,-q", a->quiet, "no table");
  return [a, list] {
    if (*list) {
      std::printf("%s", diagnosis::describe_rules().c_str());
      return 0;
    }
    if (a->inputs.empty())
      throw InputError("", 0, "TRACES", "diagnose needs at least one job (folder, manifest or trace)");
    return diagnosis::diagnose(*a);
  };
}

const CommandRegistrar kRegistrar{
    "diagnose",
    "find a fleet's inefficient jobs in their profiler traces, replay each fix, rank fixes by GPU-hours",
    setup};

}  // namespace
}  // namespace fleetsim::cli
