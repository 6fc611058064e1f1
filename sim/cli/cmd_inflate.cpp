// fleetsim inflate SCENARIO --placements a,b,c [--seeds N] [--max-load X] [--out DIR]
//                 [--set KEY=VALUE ...] [--jobs N] [--no-plot] [--quiet]
// The FGD paper's workload inflation experiment (sim/experiments/inflation_experiment.hpp) for several
// placement policies and seeds in one process.
// Writes DIR/inflation.csv and DIR/inflation_summary.csv (DIR: --out, else output.dir), then runs
// scripts/plot_inflation.py with /usr/bin/python3, if both are there, for DIR/inflation.png; a
// failed plot is a warning. Runs are spread over --jobs threads (default: all cores); the results
// do not depend on it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "sim/app/scenario.hpp"
#include "sim/cli/cli_util.hpp"
#include "sim/cli/command.hpp"
#include "sim/cluster/cluster_state.hpp"
#include "sim/cluster/placer.hpp"
#include "sim/experiments/inflation_experiment.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::cli {
namespace {
namespace fs = std::filesystem;

struct InflateArgs {
  std::string scenario, placements, out;
  std::vector<std::string> sets;
  int seeds = 10;
  double max_load = 1.3;
  int jobs = 0;
  bool no_plot = false, quiet = false;
};

void plot(const fs::path& dir, bool quiet) {
  if (run_plot_script("plot_inflation.py", "FLEETSIM_PLOT_INFLATION",
                      {(dir / "inflation.csv").string(), (dir / "inflation.png").string()},
                      "inflation.csv") &&
      !quiet)
    std::printf("  plot          %s\n", (dir / "inflation.png").c_str());
}

std::vector<std::string> parse_names(const std::string& list) {
  std::vector<std::string> names;
  for (const auto& part : split(list, ',')) {
    const std::string name(trim(part));
    if (name.empty() || std::find(names.begin(), names.end(), name) != names.end()) continue;
    if (!placers().contains(name)) throw InputError("", 0, "--placements", placers().unknown_message(name));
    names.push_back(name);
  }
  if (names.empty()) {
    std::vector<std::string> valid;
    for (const auto& e : placers().entries()) valid.push_back(e.name);
    throw InputError("", 0, "--placements",
                     "name at least one placement policy; valid: " + join(valid, ", "));
  }
  return names;
}

int run(const InflateArgs& a) {
  const std::vector<std::string> names = parse_names(a.placements);
  if (a.seeds < 1) throw InputError("", 0, "--seeds", "must be >= 1, got " + std::to_string(a.seeds));
  if (!(a.max_load > 0) || a.max_load > 100)
    throw InputError("", 0, "--max-load", "must be in (0, 100], got " + std::to_string(a.max_load));
  const Scenario sc = load_scenario(a.scenario, a.sets);
  InflationExperiment e;
  e.placements = names;
  e.seeds = a.seeds;
  e.options.max_load = a.max_load;
  e.threads = a.jobs;
  const std::vector<InflationRun> runs = run_inflation_experiment(sc, e);

  const fs::path dir = a.out.empty() ? fs::path(sc.output.dir) : fs::path(a.out);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(dir.string(), 0, "--out", "cannot create output folder: " + ec.message());
  const auto summary = summarize_inflation(runs);
  write_atomically(dir / "inflation.csv", [&](std::ostream& f) { write_inflation_csv(f, runs); });
  write_atomically(dir / "inflation_summary.csv",
                   [&](std::ostream& f) { write_inflation_summary_csv(f, summary); });

  if (!a.quiet) {
    std::printf("fleetsim inflate: %s, %d seed(s), pods drawn to %.0f %% of %d GPUs\n", a.scenario.c_str(),
                a.seeds, 100 * a.max_load, ClusterState(sc.cluster).total_gpus());
    std::printf("  %-16s %14s %17s %9s %20s %8s\n", "placement", "alloc@100% (%)", "[min, max]", "failed",
                "frag@end GPUs (%free)", "s/run");
    auto sorted = summary;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& x, const auto& y) { return x.at_100_mean > y.at_100_mean; });
    for (const auto& s : sorted)
      std::printf("  %-16s %14.2f   [%6.2f, %6.2f] %9.1f %11.1f (%5.1f%%) %8.3f\n", s.placement.c_str(),
                  s.at_100_mean, s.at_100_min, s.at_100_max, s.failed_pods_mean, s.frag_gpus_end_mean,
                  s.frag_pct_of_free_end_mean, s.wall_s_mean);
    std::printf("  outputs in    %s/ (inflation.csv, inflation_summary.csv)\n", dir.c_str());
  }
  if (!a.no_plot) plot(dir, a.quiet);
  return 0;
}

Runner setup(CLI::App& sub) {
  auto a = std::make_shared<InflateArgs>();
  sub.add_option("scenario", a->scenario, "scenario TOML file (cluster and trace)")->required();
  sub.add_option("--placements", a->placements, "comma-separated placement policies, e.g. fgd,best-fit")
      ->required();
  sub.add_option("--seeds", a->seeds, "runs per placement (seeds: scenario seed + 0..N-1; default 10)");
  sub.add_option("--max-load", a->max_load, "stop when requested GPUs reach this share of the cluster (1.3)");
  sub.add_option("--out", a->out, "output folder (overrides output.dir)");
  sub.add_option("--set", a->sets, "override a scenario key: KEY=VALUE (repeatable)");
  sub.add_option("--jobs,-j", a->jobs, "threads (default: all cores)");
  sub.add_flag("--no-plot", a->no_plot, "do not run scripts/plot_inflation.py");
  sub.add_flag("--quiet,-q", a->quiet, "no table on stdout");
  return [a] { return run(*a); };
}

const CommandRegistrar kRegistrar{"inflate",
                                  "FGD-style workload inflation: allocated GPU share vs arrived load", setup};

}  // namespace
}  // namespace fleetsim::cli
