// fleetsim: command-line entry point. Exit codes: 0 success, 2 bad input or usage, 1 internal error.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

#include "models/gpu_catalog.hpp"
#include "models/job_model.hpp"
#include "sim/config/scenario.hpp"
#include "sim/core/runner.hpp"
#include "sim/metrics/summary.hpp"
#include "sim/scheduling/placer.hpp"
#include "sim/scheduling/scheduler.hpp"
#include "workloads/input_error.hpp"
#include "workloads/trace_reader.hpp"
#include "workloads/trace_stats.hpp"

namespace {

using fleetsim::InputError;

template <typename R>
void list_registry(const R& registry, const char* title) {
  std::printf("%s:\n", title);
  for (const auto& e : registry.entries()) std::printf("  %-14s %s\n", e.name.c_str(), e.description.c_str());
}

int cmd_policies() {
  list_registry(fleetsim::schedulers(), "scheduling policies (scheduler.policy)");
  list_registry(fleetsim::placers(), "placement policies (scheduler.placement)");
  list_registry(fleetsim::job_models(), "job models (execution.job_model; also: auto)");
  list_registry(fleetsim::trace_readers(), "trace formats (workload.format)");
  std::printf("GPU models (cluster.pool.gpu):\n ");
  for (const auto& g : fleetsim::gpu_catalog()) std::printf(" %s", g.name.c_str());
  std::printf("\n");
  return 0;
}

int cmd_run(const std::string& scenario_path, const std::vector<std::string>& sets, const std::string& out,
            bool quiet) {
  fleetsim::Scenario sc = fleetsim::load_scenario(scenario_path, sets);
  if (!out.empty()) sc.output.dir = out;
  fleetsim::RunOptions opt;
  opt.quiet = quiet;
  const auto outcome = fleetsim::run_scenario(sc, opt);
  if (!quiet) {
    std::printf("fleetsim: %s\n%s", scenario_path.c_str(), fleetsim::format_summary(outcome.summary).c_str());
    std::printf("  outputs in    %s/ (jobs.csv, timeseries.csv, summary.json, skipped.csv)\n",
                outcome.out_dir.c_str());
  }
  return 0;
}

int cmd_trace_stats(const std::string& format, const std::string& path, const std::string& throughputs,
                    const std::string& gpu_type) {
  fleetsim::WorkloadConfig wc;
  wc.format = format;
  wc.path = path;
  wc.throughputs = throughputs;
  wc.gpu_type = gpu_type;
  wc.scenario_file = "--format";
  const auto jobs = fleetsim::read_trace(wc);
  const auto stats = fleetsim::compute_stats(jobs);
  std::printf("%s", fleetsim::format_stats(stats, path).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fleetsim: discrete-event simulator of GPU clusters on SimGrid"};
  app.require_subcommand(1);

  auto* run = app.add_subcommand("run", "simulate a scenario");
  std::string scenario, out;
  std::vector<std::string> sets;
  bool quiet = false;
  run->add_option("scenario", scenario, "scenario TOML file")->required();
  run->add_option("--set", sets,
                  "override a scenario key: KEY=VALUE (repeatable), e.g. cluster.pool.0.nodes=64");
  run->add_option("--out", out, "output folder (overrides output.dir)");
  run->add_flag("--quiet,-q", quiet, "no progress line and no summary table (errors still go to stderr)");

  auto* pol = app.add_subcommand("policies", "list registered policies, job models, trace formats, GPUs");
  auto* keys = app.add_subcommand("keys", "list every scenario key with its unit and default");

  auto* trace = app.add_subcommand("trace", "inspect traces");
  trace->require_subcommand(1);
  auto* stats = trace->add_subcommand("stats", "job count, span, GPU-demand histogram, duration percentiles");
  std::string format, path, throughputs, gpu_type = "v100";
  stats->add_option("--format", format, "trace format (openb, philly-gavel, csv, synthetic)")->required();
  stats->add_option("path", path, "trace file")->required();
  stats->add_option("--throughputs", throughputs, "philly-gavel: Gavel throughput JSON for durations");
  stats->add_option("--gpu-type", gpu_type, "philly-gavel: GPU type for durations (default v100)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }

  try {
    if (*run) return cmd_run(scenario, sets, out, quiet);
    if (*pol) return cmd_policies();
    if (*keys) {
      std::printf("%s", fleetsim::describe_scenario_keys().c_str());
      return 0;
    }
    if (*stats) return cmd_trace_stats(format, path, throughputs, gpu_type);
  } catch (const InputError& e) {
    std::fprintf(stderr, "fleetsim: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fleetsim: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
