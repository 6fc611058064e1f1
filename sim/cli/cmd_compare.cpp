// fleetsim compare SCENARIO --policies a,b,c [--placements x,y] [--set KEY=VALUE ...] [--out DIR]
//                  [--jobs N] [--force] [--no-plot] [--quiet]
// A thin sweep (sim/app/sweep.hpp): every policy x placement combination on the same scenario (trace,
// cluster, job model, its own seed) is one sweep run, `fleetsim run SCENARIO --set ...` in its own
// process (SimGrid runs one engine per process) under DIR/runs/<id>/, at most N at a time (default: all
// cores). Names are checked against the registries before anything runs; a rerun reuses the runs that
// completed with the same resolved scenario (--force reruns all). Then the sweep's runs.csv,
// aggregate.csv and paired.csv, and DIR/comparison.csv (one row per combination: policy, placement,
// every scalar key of summary.json in its order, then run_dir; nested objects such as skipped_reasons
// are left out), a table on stdout, and scripts/plot_compare.py DIR for comparison.png and jct_cdf.png
// (a failed plot is a warning). A failed run does not stop the others; compare then names every failed
// run with its error and exits 2 when a run rejected its input (else 1), writing no comparison.csv.
// DIR defaults to <output.dir>/compare.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "sim/app/scenario.hpp"
#include "sim/app/sweep.hpp"
#include "sim/app/sweep_plan.hpp"
#include "sim/app/sweep_results.hpp"
#include "sim/cli/cli_util.hpp"
#include "sim/cli/command.hpp"
#include "sim/cluster/placer.hpp"
#include "sim/engine/policy.hpp"
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

struct Combo {
  std::string policy, placement;
  std::string dir_name() const { return policy + "__" + placement; }
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

std::string csv_cell(const nlohmann::ordered_json& v) {
  if (v.is_null()) return "";
  return csv_quote(v.is_string() ? v.get<std::string>() : v.dump());
}

void plot(const fs::path& dir, bool quiet) {
  if (run_plot_script("plot_compare.py", "FLEETSIM_PLOT_COMPARE", {dir.string()}, "comparison.csv") && !quiet)
    std::printf("  plots         %s, %s\n", (dir / "comparison.png").c_str(), (dir / "jct_cdf.png").c_str());
}

double num(const nlohmann::ordered_json& s, const char* key) {
  const auto it = s.find(key);
  return it != s.end() && it->is_number() ? it->get<double>() : 0.0;
}

void print_table(const std::vector<Combo>& combos, const std::vector<nlohmann::ordered_json>& sums) {
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

void write_comparison(const fs::path& dir, const std::vector<Combo>& combos,
                      const std::vector<nlohmann::ordered_json>& sums,
                      const std::vector<std::string>& run_dirs) {
  std::vector<std::string> keys;  // scalar keys in summary order (union, first seen first)
  for (const auto& s : sums)
    for (const auto& [k, v] : s.items())
      if (!v.is_structured() && k != "policy" && k != "placement" &&
          std::find(keys.begin(), keys.end(), k) == keys.end())
        keys.push_back(k);
  const fs::path tmp = dir / ".comparison.csv.tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) throw InputError((dir / "comparison.csv").string(), 0, "--out", "cannot write file");
    f << "policy,placement";
    for (const auto& k : keys) f << ',' << csv_cell(k);
    f << ",run_dir\n";
    for (std::size_t i = 0; i < combos.size(); ++i) {
      f << csv_cell(combos[i].policy) << ',' << csv_cell(combos[i].placement);
      for (const auto& k : keys) {
        const auto it = sums[i].find(k);
        f << ',' << (it == sums[i].end() ? std::string() : csv_cell(*it));
      }
      f << ',' << csv_cell(run_dirs[i]) << '\n';
    }
    if (!f) throw InputError((dir / "comparison.csv").string(), 0, "--out", "write failed");
  }
  fs::rename(tmp, dir / "comparison.csv");
}

SweepSetting setting(const std::string& key, const std::string& toml, const std::string& label) {
  SweepSetting st;
  st.key = key;
  st.toml = toml;
  st.label = label;
  return st;
}

/// The sweep compare runs: the user's --set keys (one value each), then policy x placement, at the
/// scenario's own seed. Combinations come out policy-major, as the rows of comparison.csv.
SweepSpec compare_spec(const CompareArgs& a, const Scenario& sc, const std::vector<std::string>& policies,
                       const std::vector<std::string>& placements) {
  SweepSpec spec;
  spec.file = a.scenario;
  spec.base = a.scenario;
  for (const auto& s : a.sets) {
    const auto eq = s.find('=');
    const std::string key(trim(s.substr(0, eq)));
    const std::string value = eq == std::string::npos ? std::string() : std::string(trim(s.substr(eq + 1)));
    spec.grid.push_back({key, 0, {setting(key, value, value)}, 0});
  }
  SweepGridKey pol{"scheduler.policy", 0, {}, 0}, pla{"scheduler.placement", 0, {}, 0};
  for (const auto& p : policies) pol.values.push_back(setting(pol.key, '"' + p + '"', p));
  for (const auto& q : placements) pla.values.push_back(setting(pla.key, '"' + q + '"', q));
  spec.grid.push_back(std::move(pol));
  spec.grid.push_back(std::move(pla));
  for (const auto& g : spec.grid) spec.keys.push_back(g.key);
  spec.seeds = {sc.seed};
  return spec;
}

/// The failed runs' errors on stderr; the exit code: 2 when a run rejected its input, else 1.
int report_failures(const SweepPlan& plan, const std::vector<Combo>& combos,
                    const std::vector<SweepRunResult>& results) {
  int code = 1;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].ok) continue;
    const Combo& c = combos[plan.runs[i].combination];
    std::fprintf(stderr, "fleetsim: compare: run %s / %s failed: %s\n", c.policy.c_str(), c.placement.c_str(),
                 results[i].error.c_str());
    if (results[i].exit_code == 2) code = 2;
  }
  std::fprintf(stderr,
               "fleetsim: compare: no comparison.csv written (completed runs are kept for a rerun)\n");
  return code;
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

  std::vector<Combo> combos;
  for (const auto& p : policies)
    for (const auto& q : placements) combos.push_back({p, q});

  const fs::path dir = a.out.empty() ? fs::path(sc.output.dir) / "compare" : fs::path(a.out);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(dir.string(), 0, "--out", "cannot create output folder: " + ec.message());
  for (const char* stale : {"comparison.csv", "comparison.png", "jct_cdf.png"}) fs::remove(dir / stale, ec);

  // compare is a sweep of policy x placement at one seed: the same runner, folders and resume.
  const SweepPlan plan = plan_spec(compare_spec(a, sc, policies, placements), dir.string(), a.force);
  SweepOptions o;
  o.out = dir.string();
  o.jobs = static_cast<std::size_t>(a.jobs);
  o.quiet = a.quiet;
  o.exe = self_exe();
  if (!a.quiet)
    std::fprintf(
        stderr, "fleetsim compare: %zu runs (%zu policies x %zu placements): %zu to run; %zu at a time\n",
        combos.size(), policies.size(), placements.size(), plan.pending.size(), sweep_parallelism(plan, o));
  if (const int rc = run_pending_locally(plan, o); rc != 0) return rc;

  std::vector<SweepRunResult> results;
  for (const auto& r : plan.runs) results.push_back(read_run_result(plan.runs_dir / r.id));
  if (std::any_of(results.begin(), results.end(), [](const SweepRunResult& r) { return !r.ok; }))
    return report_failures(plan, combos, results);
  write_sweep_results(plan.spec, plan.combos, plan.runs, results, dir, true);

  std::vector<nlohmann::ordered_json> sums;
  std::vector<std::string> run_dirs;
  for (const auto& r : plan.runs) {  // one seed: run i is combination i
    const fs::path p = plan.runs_dir / r.id / "summary.json";
    run_dirs.push_back("runs/" + r.id);
    try {
      sums.push_back(nlohmann::ordered_json::parse(read_text(p)));
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(p.string() + ": cannot read the run's summary: " + e.what());
    }
  }
  write_comparison(dir, combos, sums, run_dirs);
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!a.quiet) {
    std::printf("fleetsim compare: %s (%zu runs, %zu run now, in %.1f s wall)\n", a.scenario.c_str(),
                combos.size(), plan.pending.size(), wall);
    print_table(combos, sums);
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
