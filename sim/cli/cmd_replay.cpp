// fleetsim replay TRACE... --out DIR [--gpu TYPE] [--set KEY=VALUE ...]
// fleetsim replay --summary TRACE... [--out DIR]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "sim/app/scenario.hpp"
#include "sim/app/staging.hpp"
#include "sim/cli/command.hpp"
#include "sim/metrics/recorders.hpp"
#include "sim/replay/report.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/profiler/kineto_trace.hpp"

namespace fleetsim::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct ReplayArgs {
  std::vector<std::string> traces, sets;
  std::string out, gpu, source_gpu, scenario;
  bool summary = false, quiet = false;
};

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

int run_summary(const ReplayArgs& a) {
  nlohmann::json rows = nlohmann::json::array();
  std::vector<double> idle, exposed;
  std::printf("%-60s %6s %12s %8s %10s\n", "trace", "steps", "step_ms", "idle_%", "exp_comm_%");
  long skipped = 0;
  for (const auto& path : a.traces) {
    try {
      const KinetoTrace t = read_kineto_trace(path);
      const replay::ExecGraph g = replay::build_exec_graph({&t});
      const replay::Times m = replay::measured_times(g);
      const auto steps = replay::analyse(g, m, m);
      double span = 0, id = 0, ex = 0;
      for (const auto& s : steps) {
        span += s.measured_breakdown.span;
        id += s.measured_breakdown.idle;
        ex += s.measured_breakdown.exposed_communication;
      }
      const double idle_share = span > 0 ? id / span : 0, exp_share = span > 0 ? ex / span : 0;
      idle.push_back(idle_share);
      exposed.push_back(exp_share);
      const std::string name = fs::path(path).filename().string();
      std::printf("%-60s %6zu %12.3f %8.1f %10.1f\n", name.substr(0, 60).c_str(), steps.size(),
                  steps.empty() ? 0.0 : 1e3 * span / static_cast<double>(steps.size()), 100 * idle_share,
                  100 * exp_share);
      rows.push_back({{"trace", path},
                      {"steps", steps.size()},
                      {"mean_step_s", steps.empty() ? 0.0 : span / static_cast<double>(steps.size())},
                      {"gpu_idle_share", idle_share},
                      {"exposed_communication_share", exp_share}});
    } catch (const InputError& e) {
      ++skipped;
      std::fprintf(stderr, "fleetsim replay --summary: skipped: %s\n", e.what());
    }
  }
  if (idle.empty()) throw InputError("", 0, "TRACE", "no usable trace among the ones given");
  std::printf("\nfleet (%zu traces%s): %-22s %8s %8s %8s %8s %8s\n", idle.size(),
              skipped > 0 ? (", " + std::to_string(skipped) + " skipped").c_str() : "", "", "min", "p50",
              "p90", "max", "mean");
  auto line = [](const char* what, const std::vector<double>& v) {
    double mean = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(v.size());
    std::printf("  %-40s %7.1f%% %7.1f%% %7.1f%% %7.1f%% %7.1f%%\n", what, 100 * percentile(v, 0),
                100 * percentile(v, 50), 100 * percentile(v, 90), 100 * percentile(v, 100), 100 * mean);
  };
  line("GPU idle share of step time", idle);
  line("exposed communication share", exposed);
  if (!a.out.empty()) {
    nlohmann::json j;
    j["traces"] = rows;
    j["skipped"] = skipped;
    j["gpu_idle_share"] = {{"p50", percentile(idle, 50)}, {"p90", percentile(idle, 90)}};
    j["exposed_communication_share"] = {{"p50", percentile(exposed, 50)}, {"p90", percentile(exposed, 90)}};
    fs::create_directories(a.out);
    std::FILE* f = std::fopen((fs::path(a.out) / "fleet_summary.json").c_str(), "wb");
    if (f == nullptr) throw InputError(a.out, 0, "--out", "cannot write fleet_summary.json");
    const std::string text = j.dump(2) + "\n";
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  return 0;
}

int run_replay(const ReplayArgs& a) {
  if (a.out.empty()) throw InputError("", 0, "--out", "replay needs --out DIR (or --summary)");
  replay::WhatIf w;
  w.gpu = a.gpu;
  w.source_gpu = a.source_gpu;
  w.scenario = a.scenario;
  if (!a.scenario.empty()) w.cluster = load_cluster(a.scenario);
  for (const auto& s : a.sets) w.set(s);

  const auto t0 = Clock::now();
  std::vector<std::unique_ptr<KinetoTrace>> traces;
  std::vector<const KinetoTrace*> ptrs;
  for (const auto& p : a.traces) {
    traces.push_back(std::make_unique<KinetoTrace>(read_kineto_trace(p)));
    ptrs.push_back(traces.back().get());
  }
  const double parse_s = since(t0);
  const auto t1 = Clock::now();
  const replay::ExecGraph g = replay::build_exec_graph(ptrs);
  const replay::Retiming rt = replay::retime(g, w);
  const replay::Times measured = replay::measured_times(g);
  const replay::ReplayCluster cluster = replay::replay_cluster(g, rt.source_gpu, w);
  const double build_s = since(t1);
  const auto t2 = Clock::now();
  const replay::ReplayRun run = replay::simulate(g, rt, w, cluster);
  const double sim_s = since(t2);

  replay::ReplayReport rep;
  rep.graph = &g;
  rep.what_if = &w;
  rep.retiming = &rt;
  rep.measured = &measured;
  rep.predicted = &run.times;
  rep.cluster = &cluster;
  rep.steps = replay::analyse(g, measured, run.times);
  rep.parse_s = parse_s;
  rep.build_s = build_s;
  rep.simulate_s = sim_s;
  rep.executions = run.executions;
  rep.notes = g.notes;
  for (const auto& n : rt.notes) rep.notes.push_back(n);
  for (const auto& n : run.notes) rep.notes.push_back(n);
  if (g.world_size > static_cast<int>(g.ranks.size())) {
    long unmatched = 0, joined = 0;
    for (std::size_t v = 0; v < boost::num_vertices(g.g); ++v) {
      if (g.g[v].kind != replay::NodeKind::collective) continue;
      (g.g[v].matched_ranks < 2 ? unmatched : joined) += 1;
    }
    rep.notes.push_back(
        "world size " + std::to_string(g.world_size) + ", " + std::to_string(g.ranks.size()) +
        " rank trace(s) given: " + std::to_string(unmatched) +
        " collective kernel(s) without a matching kernel in another given trace take their measured "
        "duration as their transfer time (it includes waiting for the absent ranks, which are assumed "
        "ready)" +
        (joined > 0 ? "; " + std::to_string(joined) +
                          " joined across the given ranks take the shortest of their measured "
                          "durations once the last given rank arrives (absent ranks' waits are "
                          "in it)"
                    : std::string()));
  }
  for (const auto* t : ptrs)
    for (const auto& [cat, count] : t->unknown_categories)
      rep.notes.push_back(t->file + ": ignored " + std::to_string(count) + " event(s) of unknown category '" +
                          cat + "'");

  Staging staging(a.out, "--out");
  replay::write_replay_json(rep, staging.path("replay.json"));
  replay::write_kernel_classes_csv(rep, staging.path("kernel_classes.csv"));
  replay::write_timeline(rep, staging.path("timeline.json"));
  staging.commit();
  if (!a.quiet) {
    std::printf("fleetsim replay: %zu trace(s), world size %d, %zu nodes, %s\n", ptrs.size(), g.world_size,
                boost::num_vertices(g.g), w.baseline() ? "baseline (durations from the trace)" : "what-if");
    for (const auto& [k, v] : w.describe()) std::printf("  %s = %s\n", k.c_str(), v.c_str());
    std::printf("%s", replay::format_table(rep).c_str());
    for (const auto& n : rep.notes) std::printf("  note: %s\n", n.c_str());
    std::printf(
        "  outputs in %s/ (replay.json, kernel_classes.csv, timeline.json); %.2f s parse, %.2f s build, "
        "%.2f s simulate\n",
        a.out.c_str(), parse_s, build_s, sim_s);
  }
  return 0;
}

Runner setup(CLI::App& sub) {
  auto a = std::make_shared<ReplayArgs>();
  sub.add_option("traces", a->traces, "Kineto trace files (.json or .json.gz), one per rank of one job")
      ->required();
  sub.add_option("--out", a->out, "output folder (replay.json, kernel_classes.csv, timeline.json)");
  sub.add_option("--gpu", a->gpu, "what-if: replay on this GPU type (catalog name)");
  sub.add_option("--source-gpu", a->source_gpu,
                 "the traced GPU type, when the trace's device name is unknown");
  sub.add_option("--scenario", a->scenario,
                 "scenario TOML whose [cluster] is the platform (default: implied by the traces' GPU "
                 "and world size, 200 Gbit/s NICs)");
  sub.add_option("--set", a->sets,
                 "what-if KEY=VALUE (repeatable): network.nic_gbps, network.intra_node_gbps, "
                 "speedup.<gemm|attention|elementwise|communication|memcpy|other> (inf removes), "
                 "launch_overhead_scale");
  sub.add_flag("--summary", a->summary,
               "fleet view: one trace per job; distribution of GPU idle and exposed communication");
  sub.add_flag("--quiet,-q", a->quiet, "no table");
  return [a] { return a->summary ? run_summary(*a) : run_replay(*a); };
}

const CommandRegistrar kRegistrar{
    "replay", "replay a job from its PyTorch profiler (Kineto) traces, with what-ifs", setup};

}  // namespace
}  // namespace fleetsim::cli
