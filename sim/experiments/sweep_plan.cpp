#include "sim/experiments/sweep_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/app/scenario.hpp"
#include "sim/experiments/sweep_results.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const fs::path& p, const std::string& text) {
  const fs::path tmp = p.parent_path() / ("." + p.filename().string() + ".tmp");
  {
    std::ofstream f(tmp, std::ios::binary);
    f << text;
    if (!f) throw InputError(p.string(), 0, "--out", "cannot write file");
  }
  fs::rename(tmp, p);
}

/// The error a failed run printed: its last "fleetsim: error:" (or "internal error") line, else its
/// last non-empty line; "" when the log is empty.
std::string error_of(const std::string& log) {
  std::string last, flagged;
  for (const auto& raw : split(log, '\n')) {
    const std::string line(trim(raw));
    if (line.empty()) continue;
    last = line;
    if (line.rfind("fleetsim: error: ", 0) == 0) flagged = line.substr(17);
    if (line.rfind("fleetsim: internal error: ", 0) == 0) flagged = line.substr(10);
  }
  return flagged.empty() ? last : flagged;
}

}  // namespace

std::string content_hash(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

ResolvedRun resolve_run(const SweepSpec& spec, const SweepRun& run) {
  ResolvedRun r;
  r.scenario = resolved_scenario_text(spec.base, run.overrides);
  r.hash = content_hash(r.scenario);
  return r;
}

SweepPlan plan_sweep(const std::string& path, const std::string& out, bool force, bool confirmed) {
  if (out.empty()) throw InputError("", 0, "--out", "name the sweep's output folder");
  return plan_spec(load_sweep(path), out, force, confirmed);
}

SweepPlan plan_spec(SweepSpec spec, const std::string& out, bool force, bool confirmed) {
  if (out.empty()) throw InputError("", 0, "--out", "name the sweep's output folder");
  SweepPlan p;
  p.file = spec.file;
  p.spec = std::move(spec);
  p.combos = sweep_combinations(p.spec);
  p.runs = sweep_runs(p.spec, p.combos);
  std::sort(p.runs.begin(), p.runs.end(), [](const SweepRun& a, const SweepRun& b) { return a.id < b.id; });
  if (!confirmed && p.runs.size() > kSweepConfirmRuns)
    throw InputError(
        p.file, 0, "--yes",
        "this sweep is " + std::to_string(p.runs.size()) + " runs (" + std::to_string(p.combos.size()) +
            " combinations x " + std::to_string(p.spec.seeds.size()) + " seeds), more than " +
            std::to_string(kSweepConfirmRuns) + ": add --yes to start them, or sweep fewer values or seeds");
  check_sweep(p.spec, p.combos);  // every combination, before anything runs

  p.out = out;
  p.runs_dir = p.out / "runs";
  std::error_code ec;
  p.out_existed = fs::exists(p.out, ec);
  fs::create_directories(p.runs_dir, ec);
  if (ec) throw InputError(p.out.string(), 0, "--out", "cannot create output folder: " + ec.message());

  for (std::size_t i = 0; i < p.runs.size(); ++i) {
    p.resolved.push_back(resolve_run(p.spec, p.runs[i]));
    const fs::path dir = p.runs_dir / p.runs[i].id;
    const bool done = fs::exists(dir / "summary.json") && fs::exists(dir / "scenario.toml") &&
                      content_hash(read_all(dir / "scenario.toml")) == p.resolved.back().hash &&
                      read_run_result(dir).ok;
    if (force || !done) p.pending.push_back(i);
  }
  return p;
}

SweepJob sweep_job(const SweepPlan& plan, std::size_t run, const std::string& exe) {
  const SweepRun& r = plan.runs.at(run);
  SweepJob j;
  j.id = r.id;
  j.dir = plan.runs_dir / r.id;
  j.scenario = plan.resolved.at(run).scenario;
  j.hash = plan.resolved.at(run).hash;
  j.argv = {exe, "run", plan.spec.base, "--quiet", "--out", j.dir.string()};
  for (const auto& s : r.overrides) j.argv.insert(j.argv.end(), {"--set", s});
  return j;
}

void prepare_job(const SweepJob& job) {
  std::error_code e;
  fs::remove_all(job.dir, e);  // a rerun starts clean (and a killed run's staging folder goes)
  fs::create_directories(job.dir, e);
  if (e) throw InputError(job.dir.string(), 0, "--out", "cannot create run folder: " + e.message());
  write_file(job.dir / "scenario.toml", job.scenario);
}

ProcessTask job_task(const SweepJob& job) {
  ProcessTask t;
  t.argv = job.argv;
  t.log = job.dir / "run.log";
  return t;
}

SweepJobOutcome record_job(const SweepJob& job, const ProcessResult& r) {
  SweepJobOutcome o;
  o.ok = r.ok();
  o.wall_s = r.wall_s;
  if (r.started && r.signal == 0) o.exit_code = r.exit_code;
  nlohmann::ordered_json j;
  j["id"] = job.id;
  j["status"] = r.ok() ? "ok" : "failed";
  j["scenario_hash"] = job.hash;
  if (!r.ok()) {
    const std::string err = error_of(read_all(job.dir / "run.log"));
    o.error = err.empty() ? r.how() : err + " (" + r.how() + ")";
    j["error"] = o.error;
    j["exit_code"] = o.exit_code;
    for (const auto& entry : fs::directory_iterator(job.dir))  // a run killed by a signal leaves its staging
      if (entry.path().filename().string().rfind(".staging-", 0) == 0) fs::remove_all(entry.path());
  }
  j["wall_s"] = r.wall_s;
  // An error quoting invalid UTF-8 from a bad input (binary bytes in a trace) is written with U+FFFD.
  write_file(job.dir / "run.json", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return o;
}

SweepJobOutcome execute_job(const SweepJob& job, bool& interrupted, const std::function<void()>& tick) {
  SweepJobOutcome outcome;
  ProcessHooks hooks;
  hooks.tick = tick;
  hooks.before = [&](std::size_t) { prepare_job(job); };
  hooks.done = [&](std::size_t, const ProcessResult& r) {
    outcome = record_job(job, r);
    return true;
  };
  interrupted = run_processes({job_task(job)}, 1, hooks) == PoolEnd::kInterrupted;
  return outcome;
}

int report_interrupted(std::size_t finished, std::size_t total) {
  std::fprintf(stderr,
               "fleetsim sweep: interrupted after %zu of %zu runs; completed runs are kept, rerun the same "
               "command to resume\n",
               finished, total);
  return 130;
}

void print_job_progress(const SweepPlan& plan, std::size_t run, std::size_t finished, std::size_t total,
                        const SweepJobOutcome& o) {
  const SweepRun& r = plan.runs.at(run);
  std::fprintf(stderr, "  [%zu/%zu] %s %s  %.1f s%s\n", finished, total, r.id.c_str(),
               plan.combos[r.combination].label().c_str(), o.wall_s,
               o.ok ? "" : ("  FAILED: " + o.error).c_str());
}

int finish_sweep(const SweepPlan& plan, bool quiet, std::size_t ran_now, Clock::time_point t0) {
  std::vector<SweepRunResult> results;
  for (const auto& r : plan.runs) results.push_back(read_run_result(plan.runs_dir / r.id));
  const bool all_rejected =
      !results.empty() &&
      std::all_of(results.begin(), results.end(), [](const auto& r) { return !r.ok && r.exit_code == 2; });
  if (all_rejected) {  // the sweep's input is bad (e.g. the base's trace): no partial output, exit 2
    std::fprintf(stderr, "fleetsim: error: every run rejected its input (%zu runs); the first: %s\n",
                 results.size(), results.front().error.c_str());
    std::error_code ec;
    for (const auto& r : plan.runs) fs::remove_all(plan.runs_dir / r.id, ec);
    if (fs::is_empty(plan.runs_dir, ec)) fs::remove(plan.runs_dir, ec);
    if (!plan.out_existed && fs::is_empty(plan.out, ec)) fs::remove(plan.out, ec);
    return 2;
  }
  write_sweep_results(plan.spec, plan.combos, plan.runs, results, plan.out, quiet);
  std::size_t bad = 0;
  for (const auto& r : results) bad += r.ok ? 0 : 1;
  if (!quiet)
    std::printf(
        "  %zu runs (%zu run now, %zu reused), %zu failed, in %.1f s wall; outputs in %s/ (runs.csv, "
        "aggregate.csv, paired.csv, runs/<id>/)\n",
        plan.runs.size(), ran_now, plan.runs.size() - ran_now, bad,
        std::chrono::duration<double>(Clock::now() - t0).count(), plan.out.c_str());
  if (bad > 0)
    std::fprintf(stderr, "fleetsim sweep: %zu of %zu runs failed (see runs.csv, error column)\n", bad,
                 plan.runs.size());
  return bad > 0 ? 1 : 0;
}

}  // namespace fleetsim
