// Kernel-model accuracy on the NeuSight microbenchmarks (../shared/data/microbench/neusight):
// fitted on train/ only, evaluated on test/linear.csv and test/bmm.csv. Prints the per-device table
// (MAPE and p90 APE for calibrated, table and roofline) and asserts the bounds achieved.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include <doctest/doctest.h>
#include "models/kernel/kernel_model.hpp"
#include "models/kernel/memory_curve.hpp"
#include "tests/test_util.hpp"

namespace fs = std::filesystem;
using namespace fleetsim;

namespace {

const std::string kDir = fleetsim::test::shared_dir() + "/microbench/neusight";

std::vector<KernelSample> training_samples() {
  std::vector<KernelSample> all;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kDir + "/train"))
    if (e.path().extension() == ".csv") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    auto s = read_kernel_csv(f.string());
    all.insert(all.end(), std::make_move_iterator(s.begin()), std::make_move_iterator(s.end()));
  }
  return all;
}

const KernelCalibration& calibration() {
  static const KernelCalibration cal = fit_kernels(training_samples());
  return cal;
}

struct Errors {
  std::vector<double> ape;
  double mape() const {
    double s = 0;
    for (double e : ape) s += e;
    return ape.empty() ? 0 : s / static_cast<double>(ape.size());
  }
  double p90() const {
    if (ape.empty()) return 0;
    std::vector<double> v = ape;
    auto it = v.begin() + static_cast<long>(0.9 * static_cast<double>(v.size() - 1));
    std::nth_element(v.begin(), it, v.end());
    return *it;
  }
};

struct Row {
  Errors calibrated, table, roofline;
  bool extrapolated = false;
};

/// (device, op) -> errors of each model on test/<op>.csv.
std::map<std::pair<std::string, std::string>, Row> evaluate() {
  const auto cal_model = kernel_models().create("calibrated", calibration());
  const auto table_model = kernel_models().create("table", calibration());
  const auto roof = kernel_models().create("roofline", calibration());
  std::map<std::pair<std::string, std::string>, Row> out;
  for (const char* op : {"linear", "bmm"}) {
    for (const KernelSample& s : read_kernel_csv(kDir + "/test/" + op + ".csv")) {
      const GpuSpec& gpu = gpu_spec(s.device, s.file, s.line, "Device");
      Row& r = out[{gpu.name, op}];
      const KernelPrediction p = cal_model->predict(s.kernel, gpu);
      r.extrapolated = p.label == PredictionLabel::extrapolated;
      r.calibrated.ape.push_back(std::abs(p.seconds / s.seconds - 1));
      r.table.ape.push_back(std::abs(table_model->predict(s.kernel, gpu).seconds / s.seconds - 1));
      r.roofline.ape.push_back(std::abs(roof->predict(s.kernel, gpu).seconds / s.seconds - 1));
    }
  }
  std::printf("%-16s %-6s %5s  %-13s %8s %8s %8s %8s %8s\n", "device", "op", "rows", "label", "cal.MAPE",
              "cal.p90", "tab.MAPE", "roof.MAPE", "roof.p90");
  for (const auto& [key, r] : out)
    std::printf("%-16s %-6s %5zu  %-13s %7.1f%% %7.1f%% %7.1f%% %8.1f%% %7.1f%%\n", key.first.c_str(),
                key.second.c_str(), r.calibrated.ape.size(), r.extrapolated ? "extrapolated" : "interpolated",
                100 * r.calibrated.mape(), 100 * r.calibrated.p90(), 100 * r.table.mape(),
                100 * r.roofline.mape(), 100 * r.roofline.p90());
  return out;
}

}  // namespace

TEST_CASE("kernel accuracy: fitting all NeuSight training files takes under 10 s") {
  fleetsim::test::require_shared("microbench/neusight/train");
  fleetsim::test::require_shared("microbench/neusight/test/linear.csv");
  const auto t0 = std::chrono::steady_clock::now();
  const auto samples = training_samples();
  const auto t1 = std::chrono::steady_clock::now();
  const KernelCalibration cal = fit_kernels(samples);
  const auto t2 = std::chrono::steady_clock::now();
  const std::string json = to_json(cal).dump();
  std::printf("read %zu rows in %.2f s, fitted %zu devices in %.2f s, calibration JSON %.2f MB\n",
              samples.size(), std::chrono::duration<double>(t1 - t0).count(), cal.devices.size(),
              std::chrono::duration<double>(t2 - t1).count(), static_cast<double>(json.size()) / 1e6);
  CHECK(cal.devices.size() == 5);
  CHECK(std::chrono::duration<double>(t2 - t0).count() < 10.0);
  CHECK(json.size() < 5'000'000);
}

TEST_CASE("kernel accuracy: calibrated GEMM error on held-out NeuSight shapes") {
  fleetsim::test::require_shared("microbench/neusight/train");
  fleetsim::test::require_shared("microbench/neusight/test/linear.csv");
  const auto rows = evaluate();
  // Calibrated MAPE bounds actually achieved (fractions, measured 2026-12-02); the target is
  // 0.10. Only A100 linear meets it. P4 linear: NeuSight's P4 linear training sweep runs at 0.8-1.5
  // TFLOP/s on large shapes where the test rows reach 4-4.5 TFLOP/s (thermal throttling in the
  // training run, it seems), so a fit on train/ cannot predict test/. L4 is extrapolated from T4.
  const std::map<std::pair<std::string, std::string>, double> bound = {
      {{"A100-40GB", "linear"}, 0.06},   {{"A100-40GB", "bmm"}, 0.18}, {{"P100", "linear"}, 0.15},
      {{"P100", "bmm"}, 0.18},           {{"P4", "linear"}, 1.05},     {{"P4", "bmm"}, 0.21},
      {{"T4", "linear"}, 0.17},          {{"T4", "bmm"}, 0.23},        {{"V100-PCIE-32GB", "linear"}, 0.11},
      {{"V100-PCIE-32GB", "bmm"}, 0.27}, {{"L4", "linear"}, 0.25},     {{"L4", "bmm"}, 0.23}};
  CHECK(rows.size() == bound.size());
  for (const auto& [key, r] : rows) {
    INFO(key.first << " " << key.second);
    auto it = bound.find(key);
    REQUIRE(it != bound.end());
    CHECK(r.calibrated.mape() <= it->second);
    CHECK(r.extrapolated == (key.first == "L4"));
  }
}

TEST_CASE("kernel accuracy: memory-bound ops, fitted on half of the NeuSight test rows") {
  if (!fs::exists(kDir + "/test/elem.csv")) {
    MESSAGE("shared data missing: skipped");
    return;
  }
  // NeuSight has no training files for element-wise / layer-norm / softmax kernels: fit on a seeded
  // half of test/{elem,ln,softmax}.csv (half_split_order) and evaluate on the other half.
  std::vector<KernelSample> all;
  for (const char* f : {"elem", "ln", "softmax"}) {
    auto s = read_kernel_csv(kDir + "/test/" + f + ".csv");
    all.insert(all.end(), s.begin(), s.end());
  }
  const auto order = half_split_order(all.size());
  std::vector<KernelSample> fit_rows, held;
  for (std::size_t i = 0; i < order.size(); ++i)
    (i < order.size() / 2 ? fit_rows : held).push_back(all[order[i]]);
  const auto model = kernel_models().create("calibrated", fit_kernels(fit_rows));
  const auto roof = kernel_models().create("roofline", KernelCalibration{});
  std::map<std::string, Errors> cal_err, roof_err;
  for (const KernelSample& s : held) {
    const GpuSpec& gpu = gpu_spec(s.device, s.file, s.line, "Device");
    const std::string group = s.kernel.op == "ln" || s.kernel.op == "softmax" ? s.kernel.op : "elementwise";
    cal_err[gpu.name + " " + group].ape.push_back(
        std::abs(model->predict(s.kernel, gpu).seconds / s.seconds - 1));
    roof_err[gpu.name + " " + group].ape.push_back(
        std::abs(roof->predict(s.kernel, gpu).seconds / s.seconds - 1));
  }
  std::printf("%-28s %5s %8s %8s %9s\n", "device op", "rows", "cal.MAPE", "cal.p90", "roof.MAPE");
  for (const auto& [key, e] : cal_err) {
    std::printf("%-28s %5zu %7.1f%% %7.1f%% %8.1f%%\n", key.c_str(), e.ape.size(), 100 * e.mape(),
                100 * e.p90(), 100 * roof_err[key].mape());
    INFO(key);
    CHECK(e.mape() <= 0.06);
  }
}
