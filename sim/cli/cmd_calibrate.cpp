// fleetsim calibrate fit   --out CAL.json FILE|DIR...
// fleetsim calibrate eval  --calibration CAL.json [--devices DIR] [--kernel-model M]
//                          [--collective-model M] --out DIR [--no-plot] FILE|DIR...
// fleetsim calibrate split --out DIR [--seed S] [--fraction F] FILE...
//
// Measurement files are recognised by their header: kernel sweeps in the NeuSight CSV schema
// (`OPName,Latency,...`, also written by scripts/calibrate), aicb collective logs (`comm_type,...`),
// Vidur collective profiles (`,time_stats.<op>.min,...,num_workers,size,...`) and nccl-tests results
// (the LUT CSV or the stdout table). A directory stands for the files in it.
//  - fit writes one calibration file (models/calibration/calibration.hpp) from all of them.
//  - eval predicts every measured row with the calibration: DIR/predictions.csv
//    (device,op,shape,measured_ms,predicted_ms,ape_pct,label), DIR/summary.json (MAPE and p90 APE per
//    device and op, with the roofline's MAPE on the same rows), the table on stdout and
//    DIR/predicted_vs_measured.png. Devices the calibration lacks are predicted from their spec (the
//    catalog's, or the --devices file's) and labelled extrapolated.
//  - split divides each kernel CSV into a fitting half and a held-out half per (device, op), with a
//    seeded shuffle: DIR/<name>.fit.csv and DIR/<name>.holdout.csv (for ops with no training sweep).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "models/calibration/evaluation.hpp"
#include "sim/cli/cli_util.hpp"
#include "sim/cli/command.hpp"
#include "sim/metrics/recorders.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::cli {
namespace {
namespace fs = std::filesystem;

// ---- fit ----------------------------------------------------------------------------------------

struct FitArgs {
  std::string out;
  std::vector<std::string> files;
  bool quiet = false;
  bool coefficients_only = false;            ///< drop the measured rows kept for the `table` model
  std::vector<std::string> node_topologies;  ///< SYSTEM=TOPOLOGY
  std::string collective_fit = "octaves";    ///< octaves | regimes
};

int run_fit(const FitArgs& a) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto files = expand_measurement_files(a.files);
  const Measurements m = read_measurements(files);
  if (m.kernels.empty() && m.collectives.empty())
    throw InputError(files.front(), 0, "", "no measured rows in the given files");
  Calibration cal;
  cal.sources = files;
  if (!m.kernels.empty()) cal.kernels = fit_kernels(m.kernels);
  if (a.coefficients_only)
    for (auto& d : cal.kernels.devices) d.tables.clear();
  if (a.collective_fit != "octaves" && a.collective_fit != "regimes")
    throw InputError("", 0, "--collective-fit",
                     "unknown fit '" + a.collective_fit + "' (valid: octaves, regimes)");
  if (!m.collectives.empty())
    cal.collectives = fit_collectives(
        m.collectives, a.collective_fit == "regimes" ? CollectiveFit::regimes : CollectiveFit::octaves);
  for (const auto& st : a.node_topologies) {
    const auto eq = st.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError("", 0, "--node-topology",
                       "expected SYSTEM=TOPOLOGY (e.g. V100=dgx1), got '" + st + "'");
    const std::string system = cal.collectives.match_system(st.substr(0, eq));
    if (system.empty())
      throw InputError("", 0, "--node-topology",
                       "no collective measurements of system '" + st.substr(0, eq) + "'");
    cal.collectives.node_topology[system] = &node_topology(st.substr(eq + 1), "", 0, "--node-topology");
  }
  write_atomically(a.out, [&](std::ostream& f) { f << to_json(cal).dump(1) << '\n'; });
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!a.quiet) {
    std::printf("fleetsim calibrate fit: %zu files, %zu kernel rows, %zu collective rows in %.2f s\n",
                files.size(), m.kernels.size(), m.collectives.size(), secs);
    for (const auto& d : cal.kernels.devices) {
      std::printf("  %-16s", d.device.c_str());
      for (const auto& g : d.gemm)
        std::printf(" %s/%s (%ld rows, fit %.1f%%)", g.op.c_str(), std::string(to_string(g.dtype)).c_str(),
                    g.samples, 100 * g.train_mape);
      for (const auto& g : d.memory)
        std::printf(" %s (%ld rows, fit %.1f%%)", g.op.c_str(), g.samples, 100 * g.train_mape);
      std::printf("\n");
    }
    if (!cal.collectives.curves.empty())
      std::printf("  collectives: %zu fitted curves (system x op x GPUs)\n", cal.collectives.curves.size());
    std::printf("  wrote %s\n", a.out.c_str());
  }
  return 0;
}

// ---- eval ---------------------------------------------------------------------------------------

struct EvalArgs {
  std::string calibration, devices, out, kernel_model = "calibrated", collective_model = "calibrated";
  std::vector<std::string> files;
  bool no_plot = false, quiet = false;
};

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

void write_predictions(std::ostream& f, const std::vector<EvalRow>& rows) {
  f << "device,op,shape,measured_ms,predicted_ms,ape_pct,label\n";
  for (const auto& r : rows)
    f << csv_quote(r.device) << ',' << r.op << ',' << csv_quote(r.shape) << ',' << fmt(r.measured_s * 1e3, 9)
      << ',' << fmt(r.predicted_s * 1e3, 9) << ',' << fmt(r.ape(), 6) << ',' << to_string(r.label) << '\n';
}

nlohmann::ordered_json summary_json(const std::vector<EvalStats>& stats, const EvalArgs& a) {
  nlohmann::ordered_json j;
  j["calibration"] = a.calibration;
  j["kernel_model"] = a.kernel_model;
  j["collective_model"] = a.collective_model;
  j["groups"] = nlohmann::ordered_json::array();
  for (const auto& s : stats) {
    nlohmann::ordered_json g;
    g["device"] = s.device;
    g["op"] = s.op;
    g["rows"] = s.ape.size();
    g["mape_pct"] = mean(s.ape);
    g["p90_ape_pct"] = percentile(s.ape, 90);
    g["roofline_mape_pct"] = mean(s.roofline_ape);
    g["label"] = std::string(to_string(s.label));
    j["groups"].push_back(g);
  }
  return j;
}

void print_table(const std::vector<EvalStats>& stats) {
  std::printf("  %-16s %-14s %6s %8s %8s %10s  %s\n", "device", "op", "rows", "MAPE%", "p90%", "roofline%",
              "label");
  for (const auto& s : stats)
    std::printf("  %-16s %-14s %6zu %8.2f %8.2f %10.2f  %s\n", s.device.c_str(), s.op.c_str(), s.ape.size(),
                mean(s.ape), percentile(s.ape, 90), mean(s.roofline_ape),
                std::string(to_string(s.label)).c_str());
}

int run_eval(const EvalArgs& a) {
  const Calibration cal = load_calibration(a.calibration);
  const auto files = expand_measurement_files(a.files);
  const Measurements m = read_measurements(files);
  if (m.kernels.empty() && m.collectives.empty())
    throw InputError(files.front(), 0, "", "no measured rows in the given files");
  const std::vector<EvalRow> rows =
      predict_rows(m, cal, EvalModels{a.devices, a.kernel_model, a.collective_model});
  const std::vector<EvalStats> stats = summarize(rows);
  const fs::path dir = a.out;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(a.out, 0, "--out", "cannot create folder: " + ec.message());
  write_atomically(dir / "predictions.csv", [&](std::ostream& f) { write_predictions(f, rows); });
  write_atomically(dir / "summary.json",
                   [&](std::ostream& f) { f << summary_json(stats, a).dump(1) << '\n'; });
  if (!a.quiet) {
    std::printf("fleetsim calibrate eval: %zu rows from %zu files, %s kernels, %s collectives\n", rows.size(),
                files.size(), a.kernel_model.c_str(), a.collective_model.c_str());
    print_table(stats);
    std::printf("  outputs in    %s/ (predictions.csv, summary.json)\n", a.out.c_str());
  }
  if (!a.no_plot &&
      run_plot_script("plot_calibration.py", "FLEETSIM_PLOT_CALIBRATION",
                      {(dir / "predictions.csv").string(), (dir / "predicted_vs_measured.png").string()},
                      "predictions.csv") &&
      !a.quiet)
    std::printf("  plot          %s\n", (dir / "predicted_vs_measured.png").c_str());
  return 0;
}

// ---- split --------------------------------------------------------------------------------------

struct SplitArgs {
  std::string out;
  std::vector<std::string> files;
  std::uint64_t seed = 42;
  double fraction = 0.5;
};

int run_split(const SplitArgs& a) {
  if (!(a.fraction > 0 && a.fraction < 1)) throw InputError("", 0, "--fraction", "must be in (0, 1)");
  std::error_code ec;
  fs::create_directories(a.out, ec);
  if (ec) throw InputError(a.out, 0, "--out", "cannot create folder: " + ec.message());
  for (const auto& f : a.files) {
    const auto samples = read_kernel_csv(f);  // validates the file; gives device and op per line
    std::vector<std::string> lines;
    {
      std::ifstream in(f);
      for (std::string l; std::getline(in, l);) lines.push_back(l);
    }
    std::map<std::pair<std::string, std::string>, std::vector<long>> groups;
    for (const auto& s : samples) groups[{s.device, s.kernel.op}].push_back(s.line);
    std::vector<bool> fit(lines.size() + 1, false);
    std::mt19937_64 rng(a.seed);
    for (auto& [key, group] : groups) {
      std::shuffle(group.begin(), group.end(), rng);
      const auto n_fit = static_cast<std::size_t>(std::ceil(a.fraction * static_cast<double>(group.size())));
      for (std::size_t i = 0; i < n_fit; ++i) fit[static_cast<std::size_t>(group[i])] = true;
    }
    const std::string stem = fs::path(f).stem().string();
    auto write_part = [&](bool want_fit) {
      return [&, want_fit](std::ostream& o) {
        o << lines.front() << '\n';
        for (const auto& s : samples)
          if (fit[static_cast<std::size_t>(s.line)] == want_fit)
            o << lines[static_cast<std::size_t>(s.line - 1)] << '\n';
      };
    };
    write_atomically(fs::path(a.out) / (stem + ".fit.csv"), write_part(true));
    write_atomically(fs::path(a.out) / (stem + ".holdout.csv"), write_part(false));
    std::printf("  %s: %zu rows in %zu (device, op) groups -> %s/%s.{fit,holdout}.csv\n", f.c_str(),
                samples.size(), groups.size(), a.out.c_str(), stem.c_str());
  }
  return 0;
}

Runner setup(CLI::App& sub) {
  sub.require_subcommand(1);
  auto* fit = sub.add_subcommand("fit", "fit kernel and collective models to measurements");
  auto f = std::make_shared<FitArgs>();
  fit->add_option("--out", f->out, "calibration JSON to write")->required();
  fit->add_option("files", f->files,
                  "kernel CSVs, nccl-tests results, aicb logs, Vidur collective profiles (or folders)")
      ->required();
  fit->add_flag("--quiet,-q", f->quiet, "print nothing on success");
  fit->add_flag("--coefficients-only", f->coefficients_only,
                "keep only fitted parameters, not the measured rows the `table` model looks up");
  fit->add_option("--node-topology", f->node_topologies,
                  "SYSTEM=TOPOLOGY (repeatable): the servers' NVLink wiring (nvswitch, pcie, dgx1), so that "
                  "GPU counts between measured ones are interpolated per NVLink ring");
  fit->add_option("--collective-fit", f->collective_fit,
                  "octaves (a latency + bandwidth line per octave of sizes, the default) | regimes (at most "
                  "three lines, one per NCCL protocol regime, split where the curve kinks)");
  auto* eval = sub.add_subcommand("eval", "predict measured rows with a calibration and report the error");
  auto e = std::make_shared<EvalArgs>();
  eval->add_option("--calibration", e->calibration, "calibration JSON (fleetsim calibrate fit)")->required();
  eval->add_option("--devices", e->devices, "folder of device JSON files (NeuSight schema) for spec figures");
  eval->add_option("--kernel-model", e->kernel_model, "calibrated | table | roofline (default calibrated)");
  eval->add_option("--collective-model", e->collective_model,
                   "calibrated | nccl-default (default calibrated)");
  eval->add_option("--out", e->out, "output folder")->required();
  eval->add_option("files", e->files, "measurement files to predict (or folders)")->required();
  eval->add_flag("--no-plot", e->no_plot, "do not draw predicted_vs_measured.png");
  eval->add_flag("--quiet,-q", e->quiet, "print nothing on success");
  auto* split =
      sub.add_subcommand("split", "split kernel CSVs into fit and held-out halves per (device, op)");
  auto s = std::make_shared<SplitArgs>();
  split->add_option("--out", s->out, "output folder")->required();
  split->add_option("--seed", s->seed, "shuffle seed (default 42)");
  split->add_option("--fraction", s->fraction, "share of each group used for fitting (default 0.5)");
  split->add_option("files", s->files, "kernel CSV files")->required();
  return [&sub, fit, eval, f, e, s] {
    if (sub.got_subcommand(fit)) return run_fit(*f);
    if (sub.got_subcommand(eval)) return run_eval(*e);
    return run_split(*s);
  };
}

const CommandRegistrar kRegistrar{
    "calibrate", "fit and evaluate kernel/collective models (calibrate fit|eval|split)", setup};

}  // namespace
}  // namespace fleetsim::cli
