// fleetsim compare SCENARIO --policies a,b,c [--placements x,y] [--set KEY=VALUE ...] [--out DIR]
//                  [--jobs N] [--force] [--no-plot] [--quiet]
// The experiment (a thin sweep of policy x placement) is sim/experiments/compare.hpp; this file parses
// the arguments, checks the names against the registries before anything runs, prints the table and
// runs scripts/plot_compare.py DIR for comparison.png and jct_cdf.png (a failed plot is a warning).
// compare names every failed run with its error and exits 2 when a run rejected its input (else 1).
// DIR defaults to <output.dir>/compare.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "sim/app/scenario.hpp"
#include "sim/cli/cli_util.hpp"
#include "sim/cli/command.hpp"
#include "sim/cluster/placer.hpp"
#include "sim/engine/policy.hpp"
#include "sim/experiments/compare.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::cli {
namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct CompareArgs {
  std::string scenario, out;
  std::vector<std::string> policies, placements, sets;
  int jobs = 0;
  bool no_plot = false, quiet = false, force = false;
};

/// Comma-separated (or repeated) names, trimmed, duplicates dropped, each checked against `registry`.
template <typename R>
std::vector<std::string> check_names(const std::vector<std::string>& given, const R& registry,
                                     const std::string& option) {
  std::vector<std::string> names;
  for (const auto& g : given)
    for (const auto& part : split(g, ',')) {
      const std::string name(trim(part));
      if (name.empty() || std::find(names.begin(), names.end(), name) != names.end()) continue;
      if (!registry.contains(name)) throw InputError("", 0, option, registry.unknown_message(name));
      names.push_back(name);
    }
  return names;
}

void plot(const fs::path& dir, bool quiet) {
  if (run_plot_script("plot_compare.py", "FLEETSIM_PLOT_COMPARE", {dir.string()}, "comparison.csv") && !quiet)
    std::printf("  plots         %s, %s\n", (dir / "comparison.png").c_str(), (dir / "jct_cdf.png").c_str());
}

double num(const nlohmann::ordered_json& s, const char* key) {
  const auto it = s.find(key);
  return it != s.end() && it->is_number() ? it->get<double>() : 0.0;
}

void print_table(const std::vector<CompareCombo>& combos, const std::vector<nlohmann::ordered_json>& sums) {
  std::size_t wp = 6, wl = 9;
  for (const auto& c : combos) {
    wp = std::max(wp, c.policy.size());
    wl = std::max(wl, c.placement.size());
  }
  const int ip = static_cast<int>(wp), il = static_cast<int>(wl);
  std::printf("  %-*s  %-*s %11s %10s %10s %12s %11s %11s %7s %12s %9s\n", ip, "policy", il, "placement",
              "mean JCT h", "p50 JCT h", "p99 JCT h", "mean wait h", "p99 wait h", "makespan h", "util %",
              "busy util %", "restarts");
  for (std::size_t i = 0; i < combos.size(); ++i) {
    const auto& s = sums[i];
    std::printf("  %-*s  %-*s %11.2f %10.2f %10.2f %12.2f %11.2f %11.2f %7.1f %12.1f %9.0f\n", ip,
                combos[i].policy.c_str(), il, combos[i].placement.c_str(), num(s, "mean_jct_s") / 3600,
                num(s, "p50_jct_s") / 3600, num(s, "p99_jct_s") / 3600, num(s, "mean_wait_s") / 3600,
                num(s, "p99_wait_s") / 3600, num(s, "makespan_s") / 3600, 100 * num(s, "gpu_utilization"),
                100 * num(s, "busy_window_utilization"), num(s, "restarts"));
  }
}

int run(const CompareArgs& a) {
  const auto t0 = Clock::now();
  const std::vector<std::string> policies = check_names(a.policies, schedulers(), "--policies");
  std::vector<std::string> placements = check_names(a.placements, placers(), "--placements");
  if (policies.empty()) {
    std::vector<std::string> valid;
    for (const auto& e : schedulers().entries()) valid.push_back(e.name);
    throw InputError("", 0, "--policies", "name at least one scheduling policy; valid: " + join(valid, ", "));
  }
  for (const auto& s : a.sets) {
    const std::string key(trim(s.substr(0, s.find('='))));
    if (key == "scheduler.policy" || key == "scheduler.placement")
      throw InputError("", 0, "--set", "'" + key + "' is set by compare: use --policies / --placements");
  }
  if (a.jobs < 0) throw InputError("", 0, "--jobs", "must be >= 0, got " + std::to_string(a.jobs));
  // Validate the scenario (and the overrides) once here, so a typo fails before any child starts.
  const Scenario sc = load_scenario(a.scenario, a.sets);
  if (placements.empty()) placements.push_back(sc.scheduler.placement);

  CompareSetup setup;
  setup.scenario = a.scenario;
  setup.sets = a.sets;
  setup.policies = policies;
  setup.placements = placements;
  setup.out = (a.out.empty() ? fs::path(sc.output.dir) / "compare" : fs::path(a.out)).string();
  setup.jobs = static_cast<std::size_t>(a.jobs);
  setup.force = a.force;
  setup.quiet = a.quiet;
  setup.exe = self_exe();
  const CompareResult r = run_compare(setup, sc);
  if (r.exit_code != 0) return r.exit_code;
  const fs::path dir(setup.out);
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!a.quiet) {
    std::printf("fleetsim compare: %s (%zu runs, %zu run now, in %.1f s wall)\n", a.scenario.c_str(),
                r.combos.size(), r.ran, wall);
    print_table(r.combos, r.summaries);
    std::printf("  outputs in    %s/ (comparison.csv, runs.csv, paired.csv, runs/<id>/)\n", dir.c_str());
  }
  if (!a.no_plot) plot(dir, a.quiet);
  return 0;
}

Runner setup(CLI::App& sub) {
  auto a = std::make_shared<CompareArgs>();
  sub.add_option("scenario", a->scenario, "scenario TOML file")->required();
  sub.add_option("--policies", a->policies, "comma-separated scheduling policies, e.g. fifo,fifo-skip")
      ->required()
      ->delimiter(',');
  sub.add_option("--placements", a->placements,
                 "comma-separated placement policies (default: the scenario's scheduler.placement)")
      ->delimiter(',');
  sub.add_option("--set", a->sets, "override a scenario key for every run: KEY=VALUE (repeatable)");
  sub.add_option("--out", a->out, "output folder (default: <output.dir>/compare)");
  sub.add_option("--jobs,-j", a->jobs, "runs at a time (default: all cores)");
  sub.add_flag("--force", a->force,
               "rerun the runs an earlier compare into --out completed with the same scenario");
  sub.add_flag("--no-plot", a->no_plot, "do not run scripts/plot_compare.py");
  sub.add_flag("--quiet,-q", a->quiet, "no progress and no table (errors still go to stderr)");
  return [a] { return run(*a); };
}

const CommandRegistrar kRegistrar{"compare", "run several policies x placements on one scenario and compare",
                                  setup};

}  // namespace
}  // namespace fleetsim::cli
