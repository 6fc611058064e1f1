#include "sim/app/sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "sim/app/process_pool.hpp"
#include "sim/app/scenario.hpp"
#include "sim/app/sweep_results.hpp"
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

int run_sweep(const std::string& path, const SweepOptions& o) {
  const auto t0 = Clock::now();
  if (o.out.empty()) throw InputError("", 0, "--out", "name the sweep's output folder");
  const SweepSpec spec = load_sweep(path);
  const auto combos = sweep_combinations(spec);
  auto runs = sweep_runs(spec, combos);
  std::sort(runs.begin(), runs.end(), [](const SweepRun& a, const SweepRun& b) { return a.id < b.id; });
  check_sweep(spec, combos);  // every combination, before anything runs

  const fs::path out(o.out);
  const fs::path runs_dir = out / "runs";
  std::error_code ec;
  fs::create_directories(runs_dir, ec);
  if (ec) throw InputError(out.string(), 0, "--out", "cannot create output folder: " + ec.message());

  std::vector<ResolvedRun> resolved;
  std::vector<std::size_t> pending;  // indices into runs
  for (std::size_t i = 0; i < runs.size(); ++i) {
    resolved.push_back(resolve_run(spec, runs[i]));
    const fs::path dir = runs_dir / runs[i].id;
    const bool done = fs::exists(dir / "summary.json") && fs::exists(dir / "scenario.toml") &&
                      content_hash(read_all(dir / "scenario.toml")) == resolved.back().hash &&
                      read_run_result(dir).ok;
    if (o.force || !done) pending.push_back(i);
  }
  const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t parallel = std::max<std::size_t>(1, std::min(pending.size(), o.jobs > 0 ? o.jobs : hw));
  if (!o.quiet)
    std::fprintf(stderr,
                 "fleetsim sweep: %zu runs (%zu combinations x %zu seeds): %zu to run, %zu done before; %zu "
                 "at a time\n",
                 runs.size(), combos.size(), spec.seeds.size(), pending.size(), runs.size() - pending.size(),
                 parallel);

  std::vector<ProcessTask> tasks;
  for (const std::size_t i : pending) {
    const fs::path dir = runs_dir / runs[i].id;
    ProcessTask t;
    t.argv = {o.exe, "run", spec.base, "--quiet", "--out", dir.string()};
    for (const auto& s : runs[i].overrides) t.argv.insert(t.argv.end(), {"--set", s});
    t.log = dir / "run.log";
    tasks.push_back(std::move(t));
  }
  std::size_t finished = 0;
  ProcessHooks hooks;
  hooks.before = [&](std::size_t k) {
    const std::size_t i = pending[k];
    const fs::path dir = runs_dir / runs[i].id;
    std::error_code e;
    fs::remove_all(dir, e);  // a rerun starts clean (and a killed run's staging folder goes)
    fs::create_directories(dir, e);
    if (e) throw InputError(dir.string(), 0, "--out", "cannot create run folder: " + e.message());
    write_file(dir / "scenario.toml", resolved[i].scenario);
  };
  hooks.done = [&](std::size_t k, const ProcessResult& r) {
    const std::size_t i = pending[k];
    const fs::path dir = runs_dir / runs[i].id;
    nlohmann::ordered_json j;
    j["id"] = runs[i].id;
    j["status"] = r.ok() ? "ok" : "failed";
    j["scenario_hash"] = resolved[i].hash;
    if (!r.ok()) {
      std::string err = error_of(read_all(dir / "run.log"));
      j["error"] = err.empty() ? r.how() : err + " (" + r.how() + ")";
      for (const auto& entry : fs::directory_iterator(dir))  // a run killed by a signal leaves its staging
        if (entry.path().filename().string().rfind(".staging-", 0) == 0) fs::remove_all(entry.path());
    }
    j["wall_s"] = r.wall_s;
    write_file(dir / "run.json", j.dump(2) + "\n");
    ++finished;
    if (!o.quiet)
      std::fprintf(stderr, "  [%zu/%zu] %s %s  %.1f s%s\n", finished, tasks.size(), runs[i].id.c_str(),
                   combos[runs[i].combination].label().c_str(), r.wall_s,
                   r.ok() ? "" : ("  FAILED: " + j["error"].get<std::string>()).c_str());
    return true;  // a failed run never stops the others
  };
  if (run_processes(tasks, parallel, hooks) == PoolEnd::kInterrupted) {
    std::fprintf(stderr,
                 "fleetsim sweep: interrupted after %zu of %zu runs; completed runs are kept, rerun the same "
                 "command to resume\n",
                 finished, tasks.size());
    return 130;
  }

  std::vector<SweepRunResult> results;
  for (const auto& r : runs) results.push_back(read_run_result(runs_dir / r.id));
  write_sweep_results(spec, combos, runs, results, out, o.quiet);
  std::size_t bad = 0;
  for (const auto& r : results) bad += r.ok ? 0 : 1;
  if (!o.quiet)
    std::printf(
        "  %zu runs (%zu run now, %zu reused), %zu failed, in %.1f s wall; outputs in %s/ (runs.csv, "
        "aggregate.csv, paired.csv, runs/<id>/)\n",
        runs.size(), tasks.size(), runs.size() - tasks.size(), bad,
        std::chrono::duration<double>(Clock::now() - t0).count(), out.c_str());
  if (bad > 0)
    std::fprintf(stderr, "fleetsim sweep: %zu of %zu runs failed (see runs.csv, error column)\n", bad,
                 runs.size());
  return bad > 0 ? 1 : 0;
}

}  // namespace fleetsim
