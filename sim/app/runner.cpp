#include "sim/app/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "sim/app/feature.hpp"
#include "sim/app/staging.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/metrics/fairness.hpp"
#include "sim/metrics/recorders.hpp"
#include "sim/metrics/summary.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {

std::vector<JobSpec> load_jobs(const Scenario& scenario) {
  if (scenario.workload.format.empty()) return {};  // services only
  std::vector<JobSpec> jobs = read_trace(scenario.workload);
  if (scenario.workload_limit > 0 && static_cast<long>(jobs.size()) > scenario.workload_limit)
    jobs.resize(static_cast<std::size_t>(scenario.workload_limit));
  return jobs;
}

namespace {
/// A streamed trace's job model is chosen (execution.job_model = "auto") from its first jobs.
constexpr std::size_t kAutoSample = 10000;

/// The first `count` jobs of a stream (it is rewound before and after).
std::vector<JobSpec> first_jobs(JobStream& stream, std::size_t count) {
  std::vector<JobSpec> jobs;
  stream.rewind();
  JobSpec j;
  while (jobs.size() < count && stream.next(j)) jobs.push_back(j);
  stream.rewind();
  return jobs;
}

/// What features write after the run: staged files, and summary entries kept for the summary.
class StagedOutputs final : public FeatureOutputs {
 public:
  explicit StagedOutputs(Staging& staging) : staging_(staging) {}
  std::ofstream open(const std::string& name) override { return staging_.open(name); }
  nlohmann::ordered_json& figures() override { return figures_; }
  nlohmann::ordered_json& entry(const std::string& key) override { return entries_[key]; }
  const nlohmann::ordered_json& figures_written() const { return figures_; }
  const nlohmann::ordered_json& entries_written() const { return entries_; }

 private:
  Staging& staging_;
  nlohmann::ordered_json figures_ = nlohmann::ordered_json::object();
  nlohmann::ordered_json entries_ = nlohmann::ordered_json::object();
};

/// The run's own outputs, then every output a registered feature may write (stale copies of those
/// not written this time are removed).
std::vector<std::string> known_outputs() {
  std::vector<std::string> names{"jobs.csv", "skipped.csv", "timeseries.csv", "summary.json"};
  for (const FeatureEntry* e : ordered_features())
    for (const auto& name : e->outputs)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  return names;
}
}  // namespace

RunOutcome run_scenario(const Scenario& sc, const RunOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  // Resolve every name before the (possibly long) trace read, so typos fail fast.
  SimulationParts parts;
  parts.scheduler = schedulers().create(sc.scheduler.policy, SchedulerParams{sc.seed, &sc.scheduler.options},
                                        sc.key_file("scheduler.policy"), sc.key_line("scheduler.policy"),
                                        "scheduler.policy");
  parts.placer = placers().create(
      sc.scheduler.placement, PlacerParams{sc.seed, &sc.scheduler.placement_options},
      sc.key_file("scheduler.placement"), sc.key_line("scheduler.placement"), "scheduler.placement");
  sc.scheduler.options.check_all_used("scheduling policy '" + sc.scheduler.policy + "'");
  sc.scheduler.placement_options.check_all_used("placement policy '" + sc.scheduler.placement + "'");
  parts.engine = EngineConfig::from(sc.execution.settings);
  if (sc.execution.job_model != "auto" && !job_models().contains(sc.execution.job_model))
    throw InputError(sc.key_file("execution.job_model"), sc.key_line("execution.job_model"),
                     "execution.job_model", job_models().unknown_message(sc.execution.job_model) + ", auto");

  // Features (sim/app/feature.hpp) read their inputs now, so bad input fails before anything runs.
  std::vector<std::unique_ptr<Feature>> features;
  for (const FeatureEntry* e : ordered_features())
    if (auto f = e->make(sc)) features.push_back(std::move(f));
  // Generated traces and sorted csv files stream (the run holds only the jobs in the system); other
  // files are read whole.
  if (!sc.workload.format.empty())
    parts.stream = stream_trace(sc.workload, static_cast<std::size_t>(std::max(0L, sc.workload_limit)));
  if (!parts.stream) parts.jobs = load_jobs(sc);
  parts.trace_file = sc.workload.path.empty() ? sc.file : sc.workload.path;
  JobModelParams mp;
  mp.settings = sc.execution.settings;
  mp.workload = sc.workload.settings;
  mp.scenario_file = sc.file;
  mp.nic_gbps = sc.cluster.network.nic_gbps;
  mp.nics_per_node = sc.cluster.network.nics_per_node;
  if (!sc.cluster.pools.empty())
    mp.gpus_per_nic = sc.cluster.gpus_per_nic(sc.cluster.pools.front().gpus_per_node);
  mp.intra_node_gbps = sc.cluster.network.intra_node_gbps;
  const std::string model_name =
      sc.execution.job_model == "auto"
          ? auto_job_model(mp, parts.stream ? first_jobs(*parts.stream, kAutoSample) : parts.jobs)
          : sc.execution.job_model;
  parts.job_model =
      job_models().create(model_name, mp, sc.file, sc.key_line("execution.job_model"), "execution.job_model");
  parts.scheduler->check(*parts.job_model, model_name, sc.key_file("scheduler.policy"),
                         sc.key_line("scheduler.policy"));
  parts.cluster = sc.cluster;
  // A finished job's engine state is released (memory for the jobs in the system only), unless a
  // cluster hook reads finished jobs after the run (ClusterHook::keeps_finished_jobs).
  parts.keep_finished = false;

  Staging staging(sc.output.dir);
  // jobs.csv and timeseries.csv are written as the run goes (jobs.csv's rows through sorted runs in
  // a staged scratch file, merged in trace order at the end), so memory does not grow with the trace.
  auto jobs_file = staging.open("jobs.csv");
  JobTable table(jobs_file, staging.path("jobs.csv.runs"));
  std::ofstream timeseries_file;
  if (sc.output.timeseries) timeseries_file = staging.open("timeseries.csv");
  TimeSeries series(sc.output.timeseries ? &timeseries_file : nullptr);
  FairnessObserver fairness;
  Progress progress(stderr);
  Simulation sim(std::move(parts));
  sim.add_observer(table);
  sim.add_observer(series);
  sim.add_observer(fairness);
  for (auto& f : features) f->attach(sim);
  if (!options.quiet && options.progress) sim.add_observer(progress);
  const SimulationResult res = sim.run();

  RunInfo info;
  info.scenario = sc.file;
  info.policy = sc.scheduler.policy;
  info.placement = sc.scheduler.placement;
  info.job_model = model_name;
  info.seed = sc.seed;
  info.jobs = res.jobs;
  info.events = res.events;
  jobs_file.close();
  staging.discard("jobs.csv.runs");
  {
    auto f = staging.open("skipped.csv");
    table.write_skipped_csv(f);
  }
  timeseries_file.close();
  info.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  for (auto& f : features) f->complete();
  StagedOutputs outputs(staging);
  for (const auto& f : features) f->write(outputs, table);
  RunOutcome out;
  out.summary = make_summary(info, table, series, &fairness, outputs.figures_written());
  for (const auto& [key, value] : outputs.entries_written().items()) out.summary[key] = value;
  {
    auto f = staging.open("summary.json");
    f << out.summary.dump(2) << '\n';
  }
  staging.commit(known_outputs());
  out.out_dir = sc.output.dir;
  return out;
}

}  // namespace fleetsim
