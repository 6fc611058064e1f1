#include "models/calibration/evaluation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {
namespace fs = std::filesystem;

FileKind kind_of(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "", "cannot open measurement file");
  std::string first;
  std::getline(in, first);
  if (first.starts_with("\xEF\xBB\xBF")) first = first.substr(3);
  if (first.starts_with("OPName")) return FileKind::kernels;
  if (first.starts_with("comm_type")) return FileKind::aicb;
  if (first.find("time_stats.") != std::string::npos && first.find("num_workers") != std::string::npos)
    return FileKind::vidur;
  // scripts/calibrate's launch_*.csv and copy_*.csv (launch latency, copy bandwidth): not fitted yet.
  if (first.starts_with("op,grid,block,") || first.starts_with("op,bytes,seconds,"))
    return FileKind::suite_other;
  return FileKind::nccl;  // its reader says clearly if it is not nccl-tests output either
}

std::vector<std::string> expand_measurement_files(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const auto& a : args) {
    std::error_code ec;
    if (!fs::is_directory(a, ec)) {
      out.push_back(a);
      continue;
    }
    std::vector<std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(a, ec))
      if (e.is_regular_file() && !e.path().filename().string().starts_with(".") &&
          e.path().extension() != ".json" && e.path().extension() != ".md")
        files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw InputError(a, 0, "", "directory holds no measurement files");
    out.insert(out.end(), files.begin(), files.end());
  }
  return out;
}

Measurements read_measurements(const std::vector<std::string>& files) {
  Measurements m;
  for (const auto& f : files) {
    switch (kind_of(f)) {
      case FileKind::kernels: {
        auto rows = read_kernel_csv(f);
        m.kernels.insert(m.kernels.end(), std::make_move_iterator(rows.begin()),
                         std::make_move_iterator(rows.end()));
        break;
      }
      case FileKind::aicb: {
        auto rows = read_aicb_csv(f);
        m.collectives.insert(m.collectives.end(), rows.begin(), rows.end());
        break;
      }
      case FileKind::suite_other:
        std::fprintf(stderr, "fleetsim: note: %s: launch/copy measurements are recorded but not fitted\n",
                     f.c_str());
        break;
      case FileKind::vidur: {
        auto rows = read_vidur_network(f);
        m.collectives.insert(m.collectives.end(), rows.begin(), rows.end());
        break;
      }
      case FileKind::nccl: {
        auto rows = read_nccl_tests(f);
        m.collectives.insert(m.collectives.end(), rows.begin(), rows.end());
        break;
      }
    }
  }
  return m;
}

namespace {

/// Element-wise ops are reported one by one and also as the group "elementwise".
std::string op_group(const std::string& op) {
  static const char* kElementwise[] = {"add",  "addu", "div",  "divu", "gelu", "mul",
                                       "mulu", "pow",  "powu", "relu", "tanh"};
  for (const char* e : kElementwise)
    if (op == e) return "elementwise";
  return "";
}

class DeviceSpecs {
 public:
  explicit DeviceSpecs(const std::string& dir) {
    if (dir.empty()) return;
    for (auto& g : load_device_dir(dir)) specs_.push_back(std::move(g));
  }
  /// The --devices file's spec for `device` if there is one, else the catalog's.
  const GpuSpec& get(const std::string& device, const std::string& file, long line) const {
    const GpuSpec* known = find_gpu(device);
    for (const auto& g : specs_)
      if (lower(g.name) == lower(device) || (known != nullptr && g.name == known->name)) return g;
    return gpu_spec(device, file, line, "Device");
  }

 private:
  std::vector<GpuSpec> specs_;
};

}  // namespace

std::vector<EvalRow> predict_rows(const Measurements& m, const Calibration& cal, const EvalModels& a) {
  const DeviceSpecs specs(a.devices);
  const auto kernels = kernel_models().create(a.kernel_model, cal.kernels, "", 0, "--kernel-model");
  CollectiveModelParams cp;
  cp.calibration = std::make_shared<const CollectiveCalibration>(cal.collectives);
  const auto collectives = collective_models().create(a.collective_model, cp, "", 0, "--collective-model");
  std::vector<EvalRow> rows;
  rows.reserve(m.kernels.size() + m.collectives.size());
  for (const auto& s : m.kernels) {
    const GpuSpec& gpu = specs.get(s.device, s.file, s.line);
    const KernelPrediction p = kernels->predict(s.kernel, gpu);
    rows.push_back({gpu.name, s.kernel.op, s.kernel.shape(), s.seconds, p.seconds,
                    roofline_seconds(s.kernel, gpu), p.label});
  }
  for (const auto& s : m.collectives) {
    const GpuSpec* gpu = find_gpu(s.system);
    CommFabric fabric = gpu != nullptr ? fabric_for(*gpu) : CommFabric{};
    fabric.system = s.system;
    fabric.link = s.link;
    const CollectivePrediction p = collectives->predict({s.op, s.bytes, s.ranks, s.nodes}, fabric);
    const CollectivePrediction analytic = predict_analytic({s.op, s.bytes, s.ranks, s.nodes}, fabric);
    const bool fitted = !cal.collectives.match_system(s.system).empty();
    rows.push_back({s.link.empty() ? s.system : s.system + "/" + s.link, to_string(s.op),
                    "ranks=" + std::to_string(s.ranks) + " nodes=" + std::to_string(s.nodes) +
                        " bytes=" + fmt(s.bytes, 12),
                    s.seconds, p.seconds, analytic.seconds,
                    fitted ? PredictionLabel::interpolated : PredictionLabel::extrapolated});
  }
  return rows;
}

std::vector<EvalStats> summarize(const std::vector<EvalRow>& rows) {
  std::map<std::pair<std::string, std::string>, EvalStats> by;
  auto add = [&](const EvalRow& r, const std::string& op) {
    EvalStats& s = by[{r.device, op}];
    s.device = r.device;
    s.op = op;
    s.ape.push_back(r.ape());
    s.roofline_ape.push_back(r.roofline_ape());
    if (static_cast<int>(r.label) > static_cast<int>(s.label)) s.label = r.label;
  };
  for (const auto& r : rows) {
    add(r, r.op);
    if (const std::string g = op_group(r.op); !g.empty()) add(r, g);
  }
  std::vector<EvalStats> out;
  for (auto& [k, s] : by) out.push_back(std::move(s));
  return out;
}

}  // namespace fleetsim
