// fleetsim size SCENARIO --service NAME --slo-attainment 0.99: the fewest replicas of a service that
// meet its SLO at the trace's load and at x2 and x4 (--loads), with the attainment curve in
// sizing.csv (output folder: --out, else the scenario's output.dir). With --gpus and --layouts it sizes
// every GPU type x replica layout (tp<N>, mig:<profile>) and names the cheapest per load (by
// --usd-per-gpu-hour when every type has a price, else by GPUs); a layout a type cannot run (TP not
// profiled, model too large, no such MIG profile) is listed as unavailable.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "models/hardware/gpu_catalog.hpp"
#include "sim/app/scenario.hpp"
#include "sim/cli/command.hpp"
#include "sim/serving/sizing.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::cli {
namespace {

struct SizeArgs {
  std::string scenario, service, out;
  double target = 0.99;
  std::vector<double> loads{1, 2, 4};
  int max_replicas = 64;
  std::vector<std::string> sets;
  std::vector<std::string> gpus;     ///< GPU types to compare (default: the service's)
  std::vector<std::string> prices;   ///< TYPE=USD per GPU-hour
  std::vector<std::string> layouts;  ///< tp<N> / mig:<profile> (default: the service's)
  bool quiet = false;
};

/// One GPU type x layout sized.
struct Candidate {
  std::string gpu, layout;
  SizingResult result;
  std::string unavailable;  ///< why it could not run ("" if it did)
};

/// GPUs held by `n` replicas at `load` (from the curve).
double gpus_at(const SizingResult& r, double load, int n) {
  for (const auto& p : r.curve)
    if (p.load == load && p.replicas == n) return p.gpus;
  return 0;
}

/// TYPE=PRICE pairs -> canonical type -> USD per GPU-hour.
std::map<std::string, double> parse_prices(const std::vector<std::string>& items) {
  std::map<std::string, double> out;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      throw InputError("--usd-per-gpu-hour", 0, item, "expected TYPE=PRICE, e.g. H100=2.5");
    const std::string type = gpu_spec(item.substr(0, eq), "--usd-per-gpu-hour", 0, item).name;
    out[type] = parse_double(item.substr(eq + 1), "--usd-per-gpu-hour", 0, item);
    if (!(out[type] >= 0)) throw InputError("--usd-per-gpu-hour", 0, item, "must be >= 0");
  }
  return out;
}

int run(const SizeArgs& a) {
  const Scenario sc = load_scenario(a.scenario, a.sets);
  check_input_paths(sc);  // a mistyped path: named by its key and line
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
    std::vector<std::string> types = a.gpus.empty() ? std::vector<std::string>{spec.gpu} : a.gpus;
    for (auto& t : types) t = gpu_spec(t, "--gpus", 0, t).name;
    const auto prices = parse_prices(a.prices);
    const std::string dir = a.out.empty() ? sc.output.dir : a.out;
    std::vector<ReplicaLayout> layouts;
    for (const auto& l : a.layouts) layouts.push_back(parse_layout(l, "--layouts"));
    const std::string own_layout = !spec.mig.empty()    ? "mig:" + spec.mig
                                   : spec.mps_share > 0 ? "mps:" + fmt(spec.mps_share)
                                                        : "tp" + std::to_string(spec.tensor_parallel);
    std::vector<Candidate> cands;
    for (const auto& type : types) {
      if (layouts.empty()) {
        ServiceSpec s = spec;
        s.gpu = type;
        cands.push_back({type, own_layout, size_service(s, a.target, a.loads, a.max_replicas), ""});
        continue;
      }
      for (const auto& l : layouts) {
        Candidate c{type, l.name(), {}, ""};
        try {
          c.result = size_service(with_layout(spec, type, l), a.target, a.loads, a.max_replicas);
        } catch (const InputError& e) {
          c.unavailable = e.what();
        }
        cands.push_back(std::move(c));
      }
    }
    for (const auto& c : cands)
      if (!c.result.rejected_note.empty())
        std::fprintf(stderr, "warning: %s %s: %s\n", c.gpu.c_str(), c.layout.c_str(),
                     c.result.rejected_note.c_str());
    std::filesystem::create_directories(dir);
    {
      std::ofstream f(dir + "/sizing.csv");
      f << "gpu,layout,";
      write_sizing_csv_header(f);
      for (const auto& c : cands) write_sizing_csv_rows(f, c.result, c.gpu + "," + c.layout + ",");
    }
    if (!a.quiet) {
      std::printf("fleetsim size: service %s, SLO TTFT %.0f ms / TPOT %.0f ms, target attainment %.3f\n",
                  spec.name.c_str(), spec.slo_ttft_s * 1e3, spec.slo_tpot_s * 1e3, a.target);
      for (const auto& c : cands) {
        const std::string label = c.gpu + (a.layouts.empty() ? "" : " " + c.layout);
        if (!c.unavailable.empty()) {
          std::printf("  %-12s unavailable: %s\n", label.c_str(), c.unavailable.c_str());
          continue;
        }
        const auto price = prices.find(c.gpu);
        for (std::size_t k = 0; k < a.loads.size(); ++k) {
          const int n = c.result.fewest[k];
          if (n <= 0) {
            std::printf("  %-12s load x%-5g not met with up to %d replicas\n", label.c_str(), a.loads[k],
                        a.max_replicas);
            continue;
          }
          const double gpus = gpus_at(c.result, a.loads[k], n);
          std::printf("  %-12s load x%-5g fewest replicas %3d (%s GPUs)", label.c_str(), a.loads[k], n,
                      fmt(gpus, 3).c_str());
          if (price != prices.end()) std::printf("  %.2f USD/h", gpus * price->second);
          std::printf("\n");
        }
      }
      if (cands.size() > 1) {
        const bool priced = std::all_of(types.begin(), types.end(),
                                        [&](const std::string& t) { return prices.count(t) > 0; });
        for (std::size_t k = 0; k < a.loads.size(); ++k) {
          const Candidate* best = nullptr;
          double best_cost = 0;
          for (const auto& c : cands) {
            if (!c.unavailable.empty() || c.result.fewest[k] <= 0) continue;
            const double gpus = gpus_at(c.result, a.loads[k], c.result.fewest[k]);
            const double cost = priced ? gpus * prices.at(c.gpu) : gpus;
            if (best == nullptr || cost < best_cost - 1e-12) {
              best = &c;
              best_cost = cost;
            }
          }
          if (best == nullptr) continue;
          std::printf("  cheapest at load x%-5g %s %s, %d replicas, %s %s\n", a.loads[k], best->gpu.c_str(),
                      best->layout.c_str(), best->result.fewest[k], fmt(best_cost, 3).c_str(),
                      priced ? "USD/h" : "GPUs");
        }
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
  sub.add_option("--gpus", a->gpus,
                 "GPU types to compare (comma-separated; unprofiled ones are extrapolated)")
      ->delimiter(',');
  sub.add_option("--usd-per-gpu-hour", a->prices, "prices for the cost column: TYPE=USD (comma-separated)")
      ->delimiter(',');
  sub.add_option("--layouts", a->layouts,
                 "replica layouts to compare on every GPU type: tp<N>, mig:<profile> (comma-separated)")
      ->delimiter(',');
  sub.add_flag("--quiet,-q", a->quiet, "no table on stdout");
  return [a] { return run(*a); };
}

const CommandRegistrar kRegistrar{"size", "fewest replicas of a service that meet its SLO at 1x, 2x, 4x load",
                                  setup};

}  // namespace
}  // namespace fleetsim::cli
