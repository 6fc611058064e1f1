#include "sim/experiments/sweep_slurm.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/experiments/sweep_plan.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

/// `text` in single quotes for a shell.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string sweep_command(const std::string& exe, const std::string& path, const fs::path& out) {
  return quoted(exe) + " sweep " + quoted(fs::absolute(path).string()) + " --out " +
         quoted(fs::absolute(out).string());
}

fs::path list_file(const fs::path& out) {
  return out / "slurm" / "runs.txt";
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  if (!f) throw InputError(p.string(), 0, "--out", "cannot write file");
}

}  // namespace

int write_slurm_array(const std::string& path, const SweepOptions& o) {
  const SweepPlan plan = plan_sweep(path, o.out, o.force, o.yes);
  const fs::path slurm = plan.out / "slurm";
  std::error_code ec;
  fs::create_directories(slurm, ec);
  if (ec) throw InputError(slurm.string(), 0, "--out", "cannot create folder: " + ec.message());
  std::string ids, listing;
  for (std::size_t k = 0; k < plan.pending.size(); ++k) {
    const SweepJob job = sweep_job(plan, plan.pending[k], o.exe);
    prepare_job(job);
    ids += job.id + "\n";
    listing += "#   " + std::to_string(k) + " " + job.id + "\n";
  }
  write_text(list_file(plan.out), ids);
  const std::string cmd = sweep_command(o.exe, path, plan.out);
  const std::string sbatch = fs::absolute(slurm / "sweep.sbatch").string();
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# fleetsim sweep " << path << " as a SLURM job array: one task per pending run ("
    << plan.pending.size() << " of " << plan.runs.size() << "), listed in "
    << fs::absolute(list_file(plan.out)).string() << ".\n"
    << "# Submit, then collect the results when every task has ended:\n"
    << "#   jid=$(sbatch --parsable " << quoted(sbatch) << ")\n"
    << "#   sbatch --dependency=afterany:$jid --wrap \"" << cmd << " --collect\"\n"
    << "# (or run " << cmd << " --collect yourself afterwards)\n"
    << "#SBATCH --job-name=fleetsim-sweep\n"
    << "#SBATCH --ntasks=1\n"
    << "#SBATCH --cpus-per-task=1\n"
    << "#SBATCH --chdir=" << fs::current_path().string() << "\n"  // grid paths resolve against it
    << "#SBATCH --output=" << fs::absolute(slurm).string() << "/%A_%a.out\n";
  if (!plan.pending.empty()) s << "#SBATCH --array=0-" << plan.pending.size() - 1 << "\n";
  s << "# array index -> run:\n" << listing;
  if (plan.pending.empty())
    s << "# nothing to run: every run is complete\nexit 0\n";
  else
    s << "exec " << cmd << " --run-one \"$SLURM_ARRAY_TASK_ID\"\n";
  write_text(slurm / "sweep.sbatch", s.str());
  std::fputs(s.str().c_str(), stdout);
  if (!o.quiet)
    std::fprintf(stderr,
                 "fleetsim sweep: %zu runs, %zu to run as array tasks, %zu done before; script in %s, then "
                 "%s --collect\n",
                 plan.runs.size(), plan.pending.size(), plan.runs.size() - plan.pending.size(),
                 sbatch.c_str(), cmd.c_str());
  return 0;
}

int run_one_listed(const std::string& path, const SweepOptions& o, std::size_t index) {
  const SweepPlan plan = plan_sweep(path, o.out, o.force);
  const fs::path list = list_file(plan.out);
  std::ifstream f(list);
  if (!f)
    throw InputError(list.string(), 0, "--run-one", "no run list: run fleetsim sweep --slurm-array first");
  std::string id;
  for (std::size_t k = 0; k <= index; ++k)
    if (!std::getline(f, id))
      throw InputError(list.string(), 0, "--run-one",
                       "no run " + std::to_string(index) + " (the list has " + std::to_string(k) + ")");
  for (std::size_t i = 0; i < plan.runs.size(); ++i) {
    if (plan.runs[i].id != id) continue;
    bool interrupted = false;
    const SweepJobOutcome outcome = execute_job(sweep_job(plan, i, o.exe), interrupted);
    if (interrupted) return 130;
    if (!o.quiet) print_job_progress(plan, i, 1, 1, outcome);
    return outcome.ok ? 0 : 1;
  }
  throw InputError(list.string(), static_cast<long>(index) + 1, "--run-one",
                   "run '" + id + "' is not in " + path + " (changed since --slurm-array? run it again)");
}

int collect_sweep(const std::string& path, const SweepOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const SweepPlan plan = plan_sweep(path, o.out, false);
  const int rc = finish_sweep(plan, o.quiet, 0, t0);
  // Runs without run.json never ended: their task was killed (or has not run yet).
  std::string missing;
  std::size_t n = 0;
  for (const auto& r : plan.runs) {
    if (fs::exists(plan.runs_dir / r.id / "run.json")) continue;
    if (++n <= 10) missing += (n > 1 ? " " : "") + r.id;
  }
  if (n > 0)
    std::fprintf(stderr,
                 "fleetsim sweep: %zu of %zu runs missing (their task was killed or has not run): %s%s; "
                 "fleetsim sweep %s --out %s --slurm-array writes an array of only the runs to do\n",
                 n, plan.runs.size(), missing.c_str(), n > 10 ? " ..." : "", path.c_str(), o.out.c_str());
  return rc;
}

}  // namespace fleetsim
