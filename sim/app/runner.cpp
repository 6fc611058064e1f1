#include "sim/app/runner.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "sim/app/staging.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/failures/failure_hook.hpp"
#include "sim/metrics/energy.hpp"
#include "sim/metrics/fairness.hpp"
#include "sim/metrics/recorders.hpp"
#include "sim/metrics/summary.hpp"
#include "sim/network/fabric_fidelity.hpp"
#include "sim/network/network_hook.hpp"
#include "sim/network/network_report.hpp"
#include "sim/serving/service.hpp"
#include "sim/serving/service_placement.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {
namespace fs = std::filesystem;

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
  parts.restart_overhead_s = sc.execution.restart_overhead_s;
  parts.start_overhead_s = sc.execution.start_overhead_s;
  parts.restart_s_per_gb = sc.execution.restart_s_per_gb;
  parts.state_gb_per_gpu = sc.execution.state_gb_per_gpu;
  parts.colocation_slowdown = sc.execution.colocation_slowdown;
  if (sc.execution.job_model != "auto" && !job_models().contains(sc.execution.job_model))
    throw InputError(sc.key_file("execution.job_model"), sc.key_line("execution.job_model"),
                     "execution.job_model", job_models().unknown_message(sc.execution.job_model) + ", auto");

  // Services: checked before anything runs, so bad input writes nothing.
  std::vector<ServiceSpec> specs;
  std::set<std::string> names;
  for (std::size_t i = 0; i < sc.services.size(); ++i) {
    specs.push_back(
        service_spec(sc.services[i].service, sc.services[i].requests, static_cast<int>(i), sc.seed, sc.file));
    if (!names.insert(specs.back().name).second)
      throw sc.services[i].service.error("name", "duplicate service name '" + specs.back().name + "'");
  }
  std::vector<PreparedService> prepared;
  for (const auto& spec : specs) prepared.push_back(prepare_service(spec));
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
  EnergyObserver energy(sc.power, sc.cluster);

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
  std::unique_ptr<NetworkFidelity> network;
  if (const auto config = NetworkFidelityConfig::from(sc.execution.settings))
    network = std::make_unique<NetworkFidelity>(sc.cluster, *config);
  std::unique_ptr<FabricFidelity> fabric;
  if (const auto config = NetworkFidelityConfig::from(sc.execution.settings, "fabric"))
    fabric = std::make_unique<FabricFidelity>(sc.cluster, *config);
  std::unique_ptr<FailureHook> failures;
  if (auto config = FailureConfig::from(sc.failures, sc.seed, sc.cluster.nodes.size())) {
    failures = std::make_unique<FailureHook>(std::move(*config));
  }
  std::vector<ReplicaDemand> demands;
  for (const auto& spec : specs) {
    auto d = replica_demands(spec);
    demands.insert(demands.end(), d.begin(), d.end());
  }
  ServiceReservations reservations(std::move(demands));
  // A finished job's engine state is released (memory for the jobs in the system only), except for
  // the failure hook, whose per-job report reads every job's record after the run.
  parts.keep_finished = failures != nullptr;
  Simulation sim(std::move(parts));
  if (network) sim.attach(*network);
  if (fabric) sim.attach(*fabric);
  // Failures first: held spares are out of service before the replicas are placed.
  if (failures) sim.attach(*failures);
  if (failures && network) failures->add_tenant(*network);  // SimGrid hosts off while nodes are out
  if (!specs.empty()) {
    sim.attach(reservations);
    if (failures) failures->add_tenant(reservations);
  }
  sim.add_observer(table);
  sim.add_observer(series);
  sim.add_observer(fairness);
  sim.add_observer(energy);
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
  RunOutcome out;
  out.summary = make_summary(info, table, series, &fairness, &energy);
  if (network || fabric) {
    const NetworkReport report = network ? network->report() : fabric->report();
    {
      auto f = staging.open("links.csv");
      write_links_csv(f, report);
    }
    {
      auto f = staging.open("link_tiers.csv");
      write_link_tiers_csv(f, report);
    }
    out.summary["network"] = network_summary(report, table);
    if (network && !network->node_switches().empty()) {
      auto& sw = out.summary["network"]["nodes_switched_off"];
      sw = nlohmann::ordered_json::array();
      for (const auto& x : network->node_switches())
        sw.push_back(
            {{"node", x.node}, {"off_s", x.off_s}, {"on_s", x.on_s}, {"hosts_seen_off", x.seen_off}});
    }
    if (network && !network->leaf_switches().empty()) {
      auto& sw = out.summary["network"]["leaves_switched_off"];
      sw = nlohmann::ordered_json::array();
      for (const auto& x : network->leaf_switches())
        sw.push_back({{"leaf", x.leaf},
                      {"off_s", x.off_s},
                      {"on_s", x.on_s},
                      {"uplinks", x.links},
                      {"uplinks_seen_off", x.seen_off}});
    }
  }
  nlohmann::ordered_json services;
  if (!specs.empty()) {
    // Services hold their replicas' GPUs in the cluster for the whole run (ServiceReservations, above);
    // their requests are then simulated on those replicas.
    auto f = staging.open("requests.csv");
    auto series_file = staging.open("serving_timeseries.csv");
    write_requests_header(f);
    write_serving_series_header(series_file);
    nlohmann::ordered_json block;
    std::size_t first = 0;  // this service's first demand in the reservations
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const auto& all = reservations.placements();
      const auto n = static_cast<std::size_t>(specs[i].engine.replicas);
      const auto last = std::min(all.size(), first + n);
      // A replica moved by failover: every placement it held, in time order.
      const PlacementHistory mine(all.begin() + static_cast<long>(first),
                                  all.begin() + static_cast<long>(last));
      const auto& occ = reservations.occupancy();
      const std::vector<std::vector<OccupancyChange>> occupancy(
          occ.begin() + static_cast<long>(std::min(occ.size(), first)),
          occ.begin() + static_cast<long>(std::min(occ.size(), last)));
      apply_placement(specs[i], sc.cluster, mine, all, occupancy, sc.execution.colocation_slowdown,
                      prepared[i].engine);
      // Failover: this service's replica outages from the cluster run (replica = demand - first).
      std::vector<long> events;
      for (const auto& o : reservations.outages()) {
        const auto d = static_cast<std::size_t>(o.demand);
        if (d < first || d >= first + n) continue;
        prepared[i].engine.outages.push_back({static_cast<int>(d - first), o.down_s, o.up_s});
        events.push_back(o.event);
      }
      ServiceRun run = run_service(specs[i], std::move(prepared[i]));
      run.summary["gpu_energy_kwh"] = service_gpu_energy_kwh(specs[i], run, sc.power);
      long rerouted = 0;
      for (std::size_t k = 0; k < events.size() && k < run.result.rerouted.size(); ++k) {
        if (failures) failures->add_rerouted(events[k], run.result.rerouted[k]);
        rerouted += run.result.rerouted[k];
      }
      write_requests_rows(f, specs[i], run);
      write_serving_series_rows(series_file, specs[i], run);
      block[specs[i].name] = run.summary;
      if (failures) {
        block[specs[i].name]["replicas_hit"] = static_cast<long>(events.size());
        block[specs[i].name]["requests_rerouted"] = rerouted;
      }
      first += n;
    }
    services = std::move(block);
  }
  if (failures) {
    if (!failures->mapping_note().empty())
      std::fprintf(stderr, "warning: %s\n", failures->mapping_note().c_str());
    {
      auto f = staging.open("failures.csv");
      failures->write_csv(f);
    }
    {
      auto f = staging.open("failure_jobs.csv");
      failures->write_jobs_csv(f);
    }
    out.summary["failures"] = failures->summary();
  }
  if (!specs.empty()) {
    out.summary["services"] = std::move(services);
    out.summary["services_gpus_held"] = reservations.gpus_held();
  }
  {
    auto f = staging.open("summary.json");
    f << out.summary.dump(2) << '\n';
  }
  staging.commit({"jobs.csv", "skipped.csv", "timeseries.csv", "summary.json", "links.csv", "link_tiers.csv",
                  "failures.csv", "failure_jobs.csv", "requests.csv", "serving_timeseries.csv"});
  out.out_dir = sc.output.dir;
  return out;
}

}  // namespace fleetsim
