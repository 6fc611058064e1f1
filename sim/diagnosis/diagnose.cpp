// The diagnosis end to end (see diagnose.hpp).
#include "sim/diagnosis/diagnose.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <thread>

#include "sim/app/staging.hpp"
#include "sim/diagnosis/results.hpp"
#include "sim/diagnosis/what_if.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim::diagnosis {
namespace {

namespace fs = std::filesystem;

std::string number(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

// Every predicted (not bounded) fix of a job, chained.
Fix combined_fix(const JobResult& j) {
  Fix all;
  all.estimate = "prediction";
  std::vector<const Fix*> parts;
  for (const auto& f : j.findings)
    if (f.fix && f.fix->estimate == "prediction") parts.push_back(&*f.fix);
  for (const Fix* p : parts) {
    for (std::size_t c = 0; c < all.what_if.speedup.size(); ++c)
      all.what_if.speedup[c] *= p->what_if.speedup[c];
  }
  all.adjust = [parts](const JobAnalysis& a, replay::Retiming& r) {
    for (const Fix* p : parts)
      if (p->adjust) p->adjust(a, r);
  };
  return all;
}

long predicted_fixes(const JobResult& j) {
  long n = 0;
  for (const auto& f : j.findings) n += f.fix && f.fix->estimate == "prediction" ? 1 : 0;
  return n;
}

FleetResult rank_fleet(const std::vector<JobResult>& jobs, const DiagnoseOptions& o) {
  std::vector<std::string> names;
  for (const auto& j : jobs) names.push_back(j.input.name);
  FleetResult fr;
  fr.table = o.jobs_csv.empty() ? read_fleet_table(o.shares_csv, names, o.fleet_gpu_hours)
                                : read_fleet_table(o.jobs_csv, names, 0);
  std::map<std::string, RankedFix> by_rule;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const JobResult& j = jobs[k];
    const double h = fr.table.shares[k].gpu_hours;
    for (std::size_t i = 0; i < j.findings.size(); ++i) {
      if (!j.findings[i].fix) continue;
      RankedFix& r = by_rule[j.findings[i].rule];
      r.rule = j.findings[i].rule;
      r.estimate = j.findings[i].fix->estimate;
      ++r.jobs;
      r.gpu_hours += h;
      r.saved += h * (1 - 1 / j.speedup(i));
    }
    if (predicted_fixes(j) > 1) {
      RankedFix& r = by_rule["all predicted fixes"];
      r.rule = "all predicted fixes";
      r.estimate = "prediction";
      ++r.jobs;
      r.gpu_hours += h;
      r.saved += h * (1 - 1 / j.combined_speedup());
    }
  }
  for (auto& [k, r] : by_rule) fr.ranking.push_back(r);
  std::sort(fr.ranking.begin(), fr.ranking.end(), [](const RankedFix& a, const RankedFix& b) {
    return a.saved != b.saved ? a.saved > b.saved : a.rule < b.rule;
  });
  return fr;
}

}  // namespace

int diagnose(const DiagnoseOptions& o) {
  if (o.out.empty()) throw InputError("", 0, "--out", "diagnose needs --out DIR");
  if (!o.jobs_csv.empty() && !o.shares_csv.empty())
    throw InputError("", 0, "--shares", "give --jobs or --shares, not both");
  if (!o.shares_csv.empty() && !(o.fleet_gpu_hours > 0))
    throw InputError(o.shares_csv, 0, "--fleet-gpu-hours", "--shares needs --fleet-gpu-hours H (> 0)");
  if (!o.scenario.empty() && o.jobs_csv.empty())
    throw InputError(o.scenario, 0, "--jobs",
                     "the fleet rerun (--scenario) runs the jobs table given with --jobs");
  Thresholds th;
  for (const auto& kv : o.thresholds) th.set(kv);
  for (const auto& f : {o.jobs_csv, o.shares_csv, o.scenario})
    if (!f.empty() && !fs::is_regular_file(f))
      throw InputError(f, 0,
                       f == o.scenario   ? "--scenario"
                       : f == o.jobs_csv ? "--jobs"
                                         : "--shares",
                       "no such file");

  // Parse, measure and check every job before anything is simulated or written.
  std::vector<JobInput> inputs = resolve_jobs(o.inputs);
  std::vector<JobResult> jobs(inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    jobs[k].input = std::move(inputs[k]);
    load_traces(jobs[k].input);
    jobs[k].analysis = analyse_job(jobs[k].input);
    jobs[k].findings = check_rules(jobs[k].analysis, th);
  }

  // The replays: per job its baseline, each simulated fix, and its predicted fixes together.
  std::vector<std::function<std::string()>> tasks;
  struct Slot {
    std::size_t job;
    long finding;  // -1 baseline, -2 combined
  };
  std::vector<Slot> slots;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const JobResult* j = &jobs[k];
    jobs[k].predicted_s.assign(j->findings.size(), 0.0);
    tasks.emplace_back([j] { return number(replay_step_s(j->analysis, nullptr)); });
    slots.push_back({k, -1});
    for (std::size_t i = 0; i < j->findings.size(); ++i) {
      if (!j->findings[i].fix) continue;
      const Fix* fix = &*j->findings[i].fix;
      tasks.emplace_back([j, fix] { return number(replay_step_s(j->analysis, fix)); });
      slots.push_back({k, static_cast<long>(i)});
    }
    if (predicted_fixes(*j) > 1) {
      tasks.emplace_back([j] {
        const Fix all = combined_fix(*j);
        return number(replay_step_s(j->analysis, &all));
      });
      slots.push_back({k, -2});
    }
  }
  const int parallel =
      o.parallel > 0 ? o.parallel : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::vector<std::string> out = run_forked(tasks, parallel);
  for (std::size_t s = 0; s < slots.size(); ++s) {
    JobResult& j = jobs[slots[s].job];
    const double v = std::stod(out[s]);
    if (slots[s].finding == -1)
      j.baseline_s = v;
    else if (slots[s].finding == -2)
      j.combined_s = v;
    else
      j.predicted_s[static_cast<std::size_t>(slots[s].finding)] = v;
  }
  for (auto& j : jobs)
    if (predicted_fixes(j) == 1)
      for (std::size_t i = 0; i < j.findings.size(); ++i)
        if (j.findings[i].fix && j.findings[i].fix->estimate == "prediction") j.combined_s = j.predicted_s[i];

  std::optional<FleetResult> fleet;
  if (!o.jobs_csv.empty() || !o.shares_csv.empty()) fleet = rank_fleet(jobs, o);
  Staging staging(o.out, "--out");
  if (!o.scenario.empty()) {
    std::map<std::string, double> speedup;
    for (const auto& j : jobs)
      if (j.combined_s > 0) speedup[j.input.name] = j.combined_speedup();
    fleet->rerun = rerun_fleet(o.scenario, o.sets, o.jobs_csv, speedup, staging.path("fleet_jobs_fixed.csv"),
                               staging.path("fleet_baseline"), staging.path("fleet_fixed"));
  }
  write_outputs(jobs, fleet, staging);
  std::error_code ec;
  for (const char* d : {"fleet_baseline", "fleet_fixed"})
    if (fleet && fleet->rerun) fs::remove_all(fs::path(o.out) / d, ec);
  staging.commit({"fixes.csv", "fleet_jobs.csv", "fleet_jobs_fixed.csv"});
  if (!o.quiet) std::printf("%s  outputs in %s/\n", format_findings(jobs, fleet).c_str(), o.out.c_str());
  return 0;
}

}  // namespace fleetsim::diagnosis
