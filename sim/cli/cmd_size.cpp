// fleetsim size SCENARIO --service NAME --slo-attainment 0.99: the fewest replicas of a service that
// meet its SLO at the trace's load and at x2 and x4 (--loads), with the attainment curve in
// sizing.csv (output folder: --out, else the scenario's output.dir).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "sim/app/scenario.hpp"
#include "sim/cli/command.hpp"
#include "sim/serving/sizing.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim::cli {
namespace {

struct SizeArgs {
  std::string scenario, service, out;
  double target = 0.99;
  std::vector<double> loads{1, 2, 4};
  int max_replicas = 64;
  std::vector<std::string> sets;
  bool quiet = false;
};

int run(const SizeArgs& a) {
  const Scenario sc = load_scenario(a.scenario, a.sets);
  if (!(a.target > 0 && a.target <= 1)) throw InputError("--slo-attainment", 0, "", "must be in (0, 1]");
  if (a.max_replicas < 1) throw InputError("--max-replicas", 0, "", "must be >= 1");
  for (double l : a.loads)
    if (!(l > 0)) throw InputError("--loads", 0, "", "load multiples must be > 0");
  std::vector<std::string> names;
  for (std::size_t i = 0; i < sc.services.size(); ++i) {
    const ServiceSpec spec =
        service_spec(sc.services[i].service, sc.services[i].requests, static_cast<int>(i), sc.seed, sc.file);
    names.push_back(spec.name);
    if (spec.name != a.service && !(a.service.empty() && sc.services.size() == 1)) continue;
    if (spec.slo_ttft_s <= 0 && spec.slo_tpot_s <= 0)
      throw spec.options.error("slo_ttft_ms", "sizing needs an SLO: slo_ttft_ms and/or slo_tpot_ms");
    const SizingResult r = size_service(spec, a.target, a.loads, a.max_replicas);
    const std::string dir = a.out.empty() ? sc.output.dir : a.out;
    std::filesystem::create_directories(dir);
    {
      std::ofstream f(dir + "/sizing.csv");
      write_sizing_csv(f, r);
    }
    if (!a.quiet) {
      std::printf("fleetsim size: service %s, SLO TTFT %.0f ms / TPOT %.0f ms, target attainment %.3f\n",
                  spec.name.c_str(), spec.slo_ttft_s * 1e3, spec.slo_tpot_s * 1e3, a.target);
      for (std::size_t k = 0; k < a.loads.size(); ++k) {
        if (r.fewest[k] > 0)
          std::printf("  load x%-5g fewest replicas %3d (%d x %d GPUs of %s)\n", a.loads[k], r.fewest[k],
                      r.fewest[k], spec.tensor_parallel, spec.gpu.c_str());
        else
          std::printf("  load x%-5g not met with up to %d replicas\n", a.loads[k], a.max_replicas);
      }
      std::printf("  curve in      %s/sizing.csv\n", dir.c_str());
    }
    return 0;
  }
  std::string valid;
  for (const auto& n : names) valid += (valid.empty() ? "" : ", ") + n;
  throw InputError(sc.file, 0, "service", "no service '" + a.service + "' (services: " + valid + ")");
}

Runner setup(CLI::App& sub) {
  auto a = std::make_shared<SizeArgs>();
  sub.add_option("scenario", a->scenario, "scenario TOML file with [[service]] tables")->required();
  sub.add_option("--service", a->service, "service name (optional when there is one)");
  sub.add_option("--slo-attainment", a->target, "share of requests meeting the SLO (default 0.99)");
  sub.add_option("--loads", a->loads, "load multiples of the trace (default 1 2 4)")->delimiter(',');
  sub.add_option("--max-replicas", a->max_replicas, "largest replica count tried (default 64)");
  sub.add_option("--out", a->out, "output folder (default: the scenario's output.dir)");
  sub.add_option("--set", a->sets, "override a scenario key: KEY=VALUE (repeatable)");
  sub.add_flag("--quiet,-q", a->quiet, "no table on stdout");
  return [a] { return run(*a); };
}

const CommandRegistrar kRegistrar{"size", "fewest replicas of a service that meet its SLO at 1x, 2x, 4x load",
                                  setup};

}  // namespace
}  // namespace fleetsim::cli
