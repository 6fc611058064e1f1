// fleetsim profile --profiles FILE --gpu T[,T...] [--calibration CAL.json] [--gpus N] [--nodes M]
//                  [--nic-gbps X] [--kernel-model M] [--collective-model M] [--match TEXT]
//                  [--throughputs GAVEL.json] [--csv FILE]
// Iteration time of each training profile (models/job/training_profile.hpp) on each GPU type and
// placement, as the "kernels" job model predicts it: forward, backward, all-reduce, exposed
// communication, host (framework) overhead, total. With --throughputs (Gavel's measured table) it also
// prints the measured iteration time of the same job type and the error, per GPU type and as the
// speed-up between GPU types — the what-if a planner asks ("how much faster on V100 than on P100?").
// Gavel's rate for a job on N GPUs counts the steps of all N workers together (its scheduler splits
// a round's steps evenly over the workers and sums what they report), each worker running the
// job type's batch size: one worker's iteration, what the profile predicts, is N / rate.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>

#include "models/calibration/calibration.hpp"
#include "models/job/training_profile.hpp"
#include "sim/cli/cli_util.hpp"
#include "sim/cli/command.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"
#include "workloads/throughputs/throughput_table.hpp"

namespace fleetsim::cli {
namespace {

struct ProfileArgs {
  std::string profiles, calibration, throughputs, csv, match;
  std::string kernel_model = "calibrated", collective_model = "calibrated";
  std::vector<std::string> gpus;
  int ranks = 1, nodes = 1;
  double nic_gbps = 100;
};

struct Result {
  std::string profile, gpu;
  IterationTime it;
  double measured_s = 0;  ///< 0 = not measured
};

int run(const ProfileArgs& a) {
  if (a.ranks < 1) throw InputError("", 0, "--gpus", "must be at least 1");
  if (a.nodes < 1 || a.nodes > a.ranks) throw InputError("", 0, "--nodes", "must be in [1, --gpus]");
  const ProfileLibrary lib = read_profiles(a.profiles);
  auto cal = std::make_shared<Calibration>();
  if (!a.calibration.empty()) *cal = load_calibration(a.calibration);
  const auto kernels = kernel_models().create(a.kernel_model, cal->kernels, "", 0, "--kernel-model");
  CollectiveModelParams cp;
  cp.calibration = std::shared_ptr<const CollectiveCalibration>(cal, &cal->collectives);
  const auto collectives = collective_models().create(a.collective_model, cp, "", 0, "--collective-model");
  std::vector<const GpuSpec*> gpus;
  for (const auto& g : a.gpus)
    for (const auto& part : split(g, ',')) gpus.push_back(&gpu_spec(trim(part), "", 0, "--gpu"));
  ThroughputTable table;
  if (!a.throughputs.empty()) table = ThroughputTable::load(a.throughputs);

  std::vector<Result> results;
  for (const auto& p : lib.profiles) {
    if (!a.match.empty() && lower(p.name).find(lower(a.match)) == std::string::npos) continue;
    for (const GpuSpec* g : gpus) {
      Result r{p.name, g->name,
               iteration_time(p, *g, a.ranks, a.nodes, *kernels, *collectives, fabric_for(*g, a.nic_gbps)),
               0};
      if (!a.throughputs.empty())
        if (auto rate = table.rate(lower(g->name), p.name, a.ranks, a.nodes == 1); rate && *rate > 0)
          r.measured_s = a.ranks / *rate;
      results.push_back(std::move(r));
    }
  }
  if (results.empty()) throw InputError(a.profiles, 0, "--match", "no profile matches '" + a.match + "'");

  std::printf("%-34s %-15s %9s %9s %9s %9s %9s %9s %10s %7s  %s\n", "profile", "gpu", "fwd_ms", "bwd_ms",
              "comm_ms", "exposed", "host_ms", "iter_ms", "measured", "err%", "label");
  std::map<std::string, std::vector<double>> ape;
  for (const auto& r : results) {
    std::printf("%-34s %-15s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f", r.profile.c_str(), r.gpu.c_str(),
                r.it.forward_s * 1e3, r.it.backward_s * 1e3, r.it.comm_s * 1e3, r.it.exposed_comm_s * 1e3,
                r.it.host_s * 1e3, r.it.total_s * 1e3);
    if (r.measured_s > 0) {
      const double err = 100 * (r.it.total_s / r.measured_s - 1);
      ape[r.gpu].push_back(std::abs(err));
      std::printf(" %10.3f %+7.1f", r.measured_s * 1e3, err);
    } else {
      std::printf(" %10s %7s", "-", "-");
    }
    std::printf("  %s\n", std::string(to_string(r.it.label)).c_str());
  }
  for (const auto& [gpu, v] : ape) {
    double s = 0;
    for (double x : v) s += x;
    std::printf("%s: iteration-time MAPE %.1f%% over %zu measured job types\n", gpu.c_str(),
                s / static_cast<double>(v.size()), v.size());
  }
  // Speed-up between GPU types (first --gpu against each other one), predicted vs measured.
  if (gpus.size() > 1 && !ape.empty()) {
    for (std::size_t j = 1; j < gpus.size(); ++j) {
      std::vector<double> errs;
      for (std::size_t i = 0; i + gpus.size() <= results.size(); i += gpus.size()) {
        const Result& base = results[i];
        const Result& other = results[i + j];
        if (base.measured_s <= 0 || other.measured_s <= 0) continue;
        const double predicted = other.it.total_s / base.it.total_s;
        const double measured = other.measured_s / base.measured_s;
        errs.push_back(std::abs(predicted / measured - 1) * 100);
      }
      if (errs.empty()) continue;
      double s = 0;
      for (double x : errs) s += x;
      std::printf("speed-up %s vs %s: mean error %.1f%% over %zu job types\n", gpus[j]->name.c_str(),
                  gpus[0]->name.c_str(), s / static_cast<double>(errs.size()), errs.size());
    }
  }
  if (!a.csv.empty())
    write_atomically(
        a.csv,
        [&](std::ostream& f) {
          f << "profile,gpu,gpus,nodes,forward_ms,backward_ms,comm_ms,exposed_comm_ms,host_ms,iteration_ms,"
               "measured_ms,label\n";
          for (const auto& r : results)
            f << csv_quote(r.profile) << ',' << r.gpu << ',' << a.ranks << ',' << a.nodes << ','
              << fmt(r.it.forward_s * 1e3) << ',' << fmt(r.it.backward_s * 1e3) << ','
              << fmt(r.it.comm_s * 1e3) << ',' << fmt(r.it.exposed_comm_s * 1e3) << ','
              << fmt(r.it.host_s * 1e3) << ',' << fmt(r.it.total_s * 1e3) << ','
              << (r.measured_s > 0 ? fmt(r.measured_s * 1e3) : std::string()) << ',' << to_string(r.it.label)
              << '\n';
        },
        "--csv");
  return 0;
}

Runner setup(CLI::App& sub) {
  auto a = std::make_shared<ProfileArgs>();
  sub.add_option("--profiles", a->profiles, "training-profile TOML (e.g. scenarios/profiles/gavel.toml)")
      ->required();
  sub.add_option("--gpu", a->gpus, "GPU types, comma-separated or repeated (catalog names)")->required();
  sub.add_option("--calibration", a->calibration, "calibration JSON (default: spec-only models)");
  sub.add_option("--gpus", a->ranks, "GPUs of the job (default 1)");
  sub.add_option("--nodes", a->nodes, "nodes they span (default 1)");
  sub.add_option("--nic-gbps", a->nic_gbps, "per-node NIC bandwidth, Gbit/s (default 100)");
  sub.add_option("--kernel-model", a->kernel_model, "calibrated | table | roofline (default calibrated)");
  sub.add_option("--collective-model", a->collective_model, "calibrated | nccl-default (default calibrated)");
  sub.add_option("--match", a->match, "only profiles whose name contains this text");
  sub.add_option("--throughputs", a->throughputs, "Gavel throughput JSON: compare with measured rates");
  sub.add_option("--csv", a->csv, "also write the table as CSV");
  return [a] { return run(*a); };
}

const CommandRegistrar kRegistrar{"profile", "iteration time of training profiles on GPU types (what-if)",
                                  setup};

}  // namespace
}  // namespace fleetsim::cli
