// fleetsim policies | keys | trace stats: what is registered, what a scenario may say, what a
// trace holds.
#include <cstdio>
#include <memory>

#include "models/collective/collective_model.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "models/job/job_model.hpp"
#include "models/kernel/kernel_model.hpp"
#include "sim/app/reference.hpp"
#include "sim/app/scenario.hpp"
#include "sim/cli/command.hpp"
#include "sim/serving/router.hpp"
#include "workloads/base/keys.hpp"
#include "workloads/base/text.hpp"
#include "workloads/jobs/trace_reader.hpp"
#include "workloads/jobs/trace_stats.hpp"

namespace fleetsim::cli {
namespace {

template <typename R>
void list_registry(const R& registry, const char* title) {
  std::printf("%s:\n", title);
  for (const auto& e : registry.entries()) std::printf("  %-16s %s\n", e.name.c_str(), e.description.c_str());
}

/// Each policy with the knobs it reads (built on empty options, which records them with their
/// defaults and docs).
void list_policies(const std::vector<RegisteredName>& names, const char* title) {
  std::printf("%s:\n", title);
  for (const auto& n : names) {
    std::printf("  %-16s %s\n", n.name.c_str(), n.description.c_str());
    for (const auto& knob : n.knobs) std::printf("      %s\n", knob.c_str());
  }
}

Runner setup_policies(CLI::App&) {
  return [] {
    list_policies(scheduler_names(), "scheduling policies (scheduler.policy)");
    list_policies(placer_names(), "placement policies (scheduler.placement)");
    list_registry(routers(), "serving routers ([[service]] routing)");
    list_registry(job_models(), "job models (execution.job_model; also: auto)");
    list_registry(trace_readers(), "trace formats (workload.format)");
    list_registry(kernel_models(), "kernel models (execution.kernel_model)");
    list_registry(collective_models(), "collective models (execution.collective_model)");
    std::printf("GPU models (cluster.pool.gpu):\n ");
    for (const auto& g : gpu_catalog()) std::printf(" %s", g.name.c_str());
    std::printf("\n");
    return 0;
  };
}

Runner setup_keys(CLI::App& sub) {
  auto markdown = std::make_shared<bool>(false);
  sub.add_flag("--markdown", *markdown, "print the Markdown table of scenario keys (as in sim/REFERENCE.md)");
  return [markdown] {
    std::printf("%s", *markdown ? describe_keys_markdown().c_str() : describe_scenario_keys().c_str());
    return 0;
  };
}

struct StatsArgs {
  std::string format, path, throughputs, gpu_type = "v100";
};

Runner setup_trace(CLI::App& sub) {
  sub.require_subcommand(1);
  auto* stats = sub.add_subcommand("stats", "job count, span, GPU-demand histogram, duration percentiles");
  auto a = std::make_shared<StatsArgs>();
  stats->add_option("--format", a->format, "trace format (openb, philly-gavel, csv, pollux, synthetic)")
      ->required();
  stats->add_option("path", a->path, "trace file")->required();
  stats->add_option("--throughputs", a->throughputs, "philly-gavel: Gavel throughput JSON for durations");
  stats->add_option("--gpu-type", a->gpu_type, "philly-gavel: GPU type for durations (default v100)");
  return [a] {
    WorkloadConfig wc;
    wc.format = a->format;
    wc.path = a->path;
    wc.settings.set("throughputs", a->throughputs);
    wc.settings.set("gpu_type", a->gpu_type);
    wc.scenario_file = "--format";
    const auto jobs = read_trace(wc);
    std::printf("%s", format_stats(compute_stats(jobs), a->path).c_str());
    return 0;
  };
}

const CommandRegistrar kPolicies{"policies", "list registered policies, job models, trace formats, GPUs",
                                 setup_policies};
const CommandRegistrar kKeys{"keys", "list every scenario key with its unit and default", setup_keys};
const CommandRegistrar kTrace{"trace", "inspect traces (trace stats --format F PATH)", setup_trace};

}  // namespace
}  // namespace fleetsim::cli
