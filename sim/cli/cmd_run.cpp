// fleetsim run SCENARIO [--set KEY=VALUE ...] [--out DIR] [--quiet]
#include <cstdio>
#include <memory>

#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "sim/cli/command.hpp"
#include "sim/metrics/summary.hpp"

namespace fleetsim::cli {
namespace {

struct RunArgs {
  std::string scenario, out;
  std::vector<std::string> sets;
  bool quiet = false;
};

Runner setup(CLI::App& sub) {
  auto a = std::make_shared<RunArgs>();
  sub.add_option("scenario", a->scenario, "scenario TOML file")->required();
  sub.add_option("--set", a->sets,
                 "override a scenario key: KEY=VALUE (repeatable), e.g. cluster.pool.0.nodes=64");
  sub.add_option("--out", a->out, "output folder (overrides output.dir)");
  sub.add_flag("--quiet,-q", a->quiet, "no progress line and no summary table (errors still go to stderr)");
  return [a] {
    Scenario sc = load_scenario(a->scenario, a->sets);
    check_input_paths(sc);  // a mistyped path: named by its key and line
    if (!a->out.empty()) sc.output.dir = a->out;
    RunOptions opt;
    opt.quiet = a->quiet;
    const auto outcome = run_scenario(sc, opt);
    if (!a->quiet) {
      std::printf("fleetsim: %s\n%s", a->scenario.c_str(), format_summary(outcome.summary).c_str());
      const bool network = outcome.summary.contains("network");
      std::printf("  outputs in    %s/ (jobs.csv, timeseries.csv, summary.json, skipped.csv%s)\n",
                  outcome.out_dir.c_str(), network ? ", links.csv, link_tiers.csv" : "");
    }
    return 0;
  };
}

const CommandRegistrar kRegistrar{"run", "simulate a scenario", setup};

}  // namespace
}  // namespace fleetsim::cli
