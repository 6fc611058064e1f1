#include "sim/experiments/compare.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "sim/experiments/sweep.hpp"
#include "sim/experiments/sweep_plan.hpp"
#include "sim/experiments/sweep_results.hpp"
#include "workloads/base/csv_quote.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {
namespace {
namespace fs = std::filesystem;

std::string csv_cell(const nlohmann::ordered_json& v) {
  if (v.is_null()) return "";
  return csv_quote(v.is_string() ? v.get<std::string>() : v.dump());
}

void write_comparison(const fs::path& dir, const std::vector<CompareCombo>& combos,
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
SweepSpec compare_spec(const CompareSetup& a, const Scenario& sc) {
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
  for (const auto& p : a.policies) pol.values.push_back(setting(pol.key, '"' + p + '"', p));
  for (const auto& q : a.placements) pla.values.push_back(setting(pla.key, '"' + q + '"', q));
  spec.grid.push_back(std::move(pol));
  spec.grid.push_back(std::move(pla));
  for (const auto& g : spec.grid) spec.keys.push_back(g.key);
  spec.seeds = {sc.seed};
  return spec;
}

/// The failed runs' errors on stderr; the exit code: 2 when a run rejected its input, else 1.
int report_failures(const SweepPlan& plan, const std::vector<CompareCombo>& combos,
                    const std::vector<SweepRunResult>& results) {
  int code = 1;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].ok) continue;
    const CompareCombo& c = combos[plan.runs[i].combination];
    std::fprintf(stderr, "fleetsim: compare: run %s / %s failed: %s\n", c.policy.c_str(), c.placement.c_str(),
                 results[i].error.c_str());
    if (results[i].exit_code == 2) code = 2;
  }
  std::fprintf(stderr,
               "fleetsim: compare: no comparison.csv written (completed runs are kept for a rerun)\n");
  return code;
}

nlohmann::ordered_json read_summary(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream text;
  text << f.rdbuf();
  try {
    return nlohmann::ordered_json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(p.string() + ": cannot read the run's summary: " + e.what());
  }
}

}  // namespace

CompareResult run_compare(const CompareSetup& a, const Scenario& sc) {
  CompareResult out;
  for (const auto& p : a.policies)
    for (const auto& q : a.placements) out.combos.push_back({p, q});

  const fs::path dir(a.out);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(dir.string(), 0, "--out", "cannot create output folder: " + ec.message());
  for (const char* stale : {"comparison.csv", "comparison.png", "jct_cdf.png"}) fs::remove(dir / stale, ec);

  // compare is a sweep of policy x placement at one seed: the same runner, folders and resume.
  const SweepPlan plan = plan_spec(compare_spec(a, sc), dir.string(), a.force);
  SweepOptions o;
  o.out = dir.string();
  o.jobs = a.jobs;
  o.quiet = a.quiet;
  o.exe = a.exe;
  out.ran = plan.pending.size();
  if (!a.quiet)
    std::fprintf(stderr,
                 "fleetsim compare: %zu runs (%zu policies x %zu placements): %zu to run; %zu at a time\n",
                 out.combos.size(), a.policies.size(), a.placements.size(), plan.pending.size(),
                 sweep_parallelism(plan, o));
  if (const int rc = run_pending_locally(plan, o); rc != 0) {
    out.exit_code = rc;
    return out;
  }

  std::vector<SweepRunResult> results;
  for (const auto& r : plan.runs) results.push_back(read_run_result(plan.runs_dir / r.id));
  if (std::any_of(results.begin(), results.end(), [](const SweepRunResult& r) { return !r.ok; })) {
    out.exit_code = report_failures(plan, out.combos, results);
    return out;
  }
  write_sweep_results(plan.spec, plan.combos, plan.runs, results, dir, true);

  std::vector<std::string> run_dirs;
  for (const auto& r : plan.runs) {  // one seed: run i is combination i
    run_dirs.push_back("runs/" + r.id);
    out.summaries.push_back(read_summary(plan.runs_dir / r.id / "summary.json"));
  }
  write_comparison(dir, out.combos, out.summaries, run_dirs);
  return out;
}

}  // namespace fleetsim
