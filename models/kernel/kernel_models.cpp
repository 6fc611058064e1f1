// The kernel models: roofline, calibrated (fitted cost model) and table (measured shapes).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <unordered_map>

#include "models/kernel/kernel_model.hpp"

namespace fleetsim {

KernelModelRegistry& kernel_models() {
  static KernelModelRegistry registry("kernel model");
  return registry;
}

namespace {

/// Spec distance used to pick the calibrated device a fit is transferred from.
double spec_distance(const GpuSpec& a, const GpuSpec& b) {
  auto term = [](double x, double y) { return (x > 0 && y > 0) ? std::abs(std::log(x / y)) : 1.0; };
  return term(a.fp32_tflops, b.fp32_tflops) + term(a.memory_bw_gbs, b.memory_bw_gbs) +
         0.5 * term(a.sms, b.sms);
}

int op_index(std::string_view op) {
  static const std::array<std::string_view, 15> ops{"linear", "bmm",  "add",  "addu", "div",
                                                    "divu",   "gelu", "mul",  "mulu", "pow",
                                                    "powu",   "relu", "tanh", "ln",   "softmax"};
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i] == op) return static_cast<int>(i);
  return -1;
}

class RooflineModel : public KernelModel {
 public:
  KernelPrediction predict(const KernelDesc& k, const GpuSpec& gpu) const override {
    return {roofline_seconds(k, gpu), PredictionLabel::extrapolated};
  }
};

/// Per-device fits indexed by (op, dtype) for constant-time lookup.
struct DeviceFits {
  const DeviceKernelCalibration* cal = nullptr;
  // [op_index][dtype] -> index into cal->gemm / cal->memory, -1 if none.
  std::array<std::array<int, 4>, 15> fit{};
};

/// Lowest roofline efficiency a transferred GEMM is given (a fit's tiny shapes can be far below).
constexpr double kMinTransferEfficiency = 0.02;

/// A GEMM fit's time for one kernel, split into the part that grows with the work and the fixed
/// per-call part (the constant and per-batch terms: the empty kernel's time, which for the shipped
/// calibrations is mostly the benchmark harness's host time per call).
struct GemmParts {
  double work_s = 0;
  double fixed_s = 0;
};

GemmParts gemm_fit_parts(const GemmFit& g, const KernelDesc& k, const GpuSpec& spec) {
  const auto x = gemm_features(k, spec);
  GemmParts p;
  for (std::size_t j = 0; j < x.size(); ++j) p.work_s += g.coef[j] * x[j];
  p.fixed_s = g.coef[0] * x[0] + g.coef[5] * x[5];
  p.work_s -= p.fixed_s;
  return p;
}

/// GEMM `k` whose dtype the fit `g` was not measured in (a bf16 GEMM from an fp32 sweep). The work
/// part runs at the fraction of its own roofline that the fit's work part (without the fixed
/// per-call part) attains for this shape on the device it was measured on (`home`, in the fit's
/// dtype), applied to the roofline of the target (`spec`) in the kernel's dtype: tensor-core peak
/// (peak_flops) and 2-byte elements for fp16/bf16, scaled by `tensor_core_efficiency`
/// (KernelCalibration::tensor_core_efficiency). The fixed part is per-call time that does not shrink
/// with the tensor-core peak: it is carried over as it is (and, like an fp32 kernel's, left out of
/// the GPU time when a launch floor replaces it, LlmPlatform::launch_floor_s).
GemmParts transfer_dtype(const GemmFit& g, const KernelDesc& k, const GpuSpec& spec, const GpuSpec& home,
                         double tensor_core_efficiency) {
  KernelDesc measured = k;
  measured.dtype = g.dtype;
  const GpuSpec& at = home.memory_bw_gbs > 0 ? home : spec;
  const GemmParts fitted = gemm_fit_parts(g, measured, at);
  const double ideal = roofline_seconds(measured, at);
  // No work left beyond the fixed part: the work runs at the roofline.
  const double efficiency =
      fitted.work_s > 0 ? std::clamp(ideal / fitted.work_s, kMinTransferEfficiency, 1.0) : 1.0;
  return {roofline_seconds(k, spec) / (efficiency * tensor_core_efficiency), std::max(fitted.fixed_s, 0.0)};
}

class CalibratedModel : public KernelModel {
 public:
  explicit CalibratedModel(const KernelCalibration& c) : cal_(c) {
    for (const auto& d : cal_.devices) {
      DeviceFits f;
      f.cal = &d;
      for (auto& row : f.fit) row.fill(-1);
      for (std::size_t i = 0; i < d.gemm.size(); ++i)
        f.fit[static_cast<std::size_t>(op_index(d.gemm[i].op))][static_cast<std::size_t>(d.gemm[i].dtype)] =
            static_cast<int>(i);
      for (std::size_t i = 0; i < d.memory.size(); ++i)
        f.fit[static_cast<std::size_t>(op_index(d.memory[i].op))]
             [static_cast<std::size_t>(d.memory[i].dtype)] = static_cast<int>(i);
      devices_.push_back(f);
    }
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      by_name_[devices_[i].cal->device] = i;
      if (devices_[i].cal->spec.name != devices_[i].cal->device) by_name_[devices_[i].cal->spec.name] = i;
    }
  }

  KernelPrediction predict(const KernelDesc& k, const GpuSpec& gpu) const override {
    const int op = op_index(k.op);
    if (op < 0) return {roofline_seconds(k, gpu), PredictionLabel::extrapolated};
    auto it = by_name_.find(gpu.name);
    if (it != by_name_.end()) {
      const DeviceFits& d = devices_[it->second];
      const int exact = d.fit[static_cast<std::size_t>(op)][static_cast<std::size_t>(k.dtype)];
      if (exact >= 0) return evaluate(d, exact, k, d.cal->spec, PredictionLabel::interpolated);
      if (const int other = any_fit(d, op); other >= 0)
        return evaluate(d, other, k, d.cal->spec, PredictionLabel::extrapolated, d.cal->spec);
    }
    // No fit for this device: the most similar calibrated device's fit, on this device's spec.
    const DeviceFits* best = nullptr;
    double best_distance = std::numeric_limits<double>::infinity();
    for (const DeviceFits& d : devices_) {
      if (any_fit(d, op) < 0) continue;
      const double dist = spec_distance(d.cal->spec, gpu);
      if (dist < best_distance) best_distance = dist, best = &d;
    }
    if (best == nullptr) return {roofline_seconds(k, gpu), PredictionLabel::extrapolated};
    const int exact = best->fit[static_cast<std::size_t>(op)][static_cast<std::size_t>(k.dtype)];
    const int idx = exact >= 0 ? exact : any_fit(*best, op);
    // GEMM features use the target's spec; a memory curve's bandwidth is scaled by the spec ratio.
    const double ratio = best->cal->spec.memory_bw_gbs > 0 && gpu.memory_bw_gbs > 0
                             ? gpu.memory_bw_gbs / best->cal->spec.memory_bw_gbs
                             : 1.0;
    return evaluate(*best, idx, k, gpu, PredictionLabel::extrapolated, best->cal->spec, ratio);
  }

 private:
  /// A fit of `op` in any dtype (fp32 first), or of the other GEMM op; -1 if none.
  static int any_fit(const DeviceFits& d, int op) {
    for (int t = 0; t < 4; ++t)
      if (d.fit[static_cast<std::size_t>(op)][static_cast<std::size_t>(t)] >= 0)
        return d.fit[static_cast<std::size_t>(op)][static_cast<std::size_t>(t)];
    return -1;
  }

  /// `spec` is the target's spec; `home` the spec of the device the fit was measured on (used when
  /// the kernel's dtype differs from the fit's, see transfer_dtype).
  KernelPrediction evaluate(const DeviceFits& d, int idx, const KernelDesc& k, const GpuSpec& spec,
                            PredictionLabel label, const GpuSpec& home = GpuSpec{},
                            double bw_ratio = 1.0) const {
    const double floor = 0.5 * roofline_seconds(k, spec);
    if (k.is_gemm()) {
      const GemmFit& g = d.cal->gemm[static_cast<std::size_t>(idx)];
      if (g.dtype != k.dtype) {
        const GemmParts t =
            transfer_dtype(g, k, spec, home, k.dtype == DType::fp32 ? 1.0 : cal_.tensor_core_efficiency);
        const double seconds = std::max(t.work_s + t.fixed_s, 1e-6);
        return {seconds, label, std::min(t.fixed_s, seconds)};
      }
      const GemmParts p = gemm_fit_parts(g, k, spec);
      const double seconds = std::max({p.work_s + p.fixed_s, floor, 1e-6});
      return {seconds, label, std::clamp(p.fixed_s, 0.0, seconds)};
    }
    const MemoryFit& m = d.cal->memory[static_cast<std::size_t>(idx)];
    const double row = static_cast<double>(k.h);
    const double t =
        bw_ratio == 1.0 ? m.curve.seconds(k.bytes(), row) : scaled(m.curve, bw_ratio).seconds(k.bytes(), row);
    return {std::max({t, floor, 1e-6}), label, 0.0};
  }

  KernelCalibration cal_;
  std::vector<DeviceFits> devices_;
  std::unordered_map<std::string, std::size_t> by_name_;
};

/// Calibrated prediction corrected by the measured residual of the shape's neighbourhood (a cell of
/// half an octave in each dimension); exact measured shapes are returned as measured.
class TableModel : public KernelModel {
 public:
  explicit TableModel(const KernelCalibration& c) : base_(c) {
    for (const auto& d : c.devices) {
      GpuSpec spec = d.spec;
      spec.name = d.device;
      Device& dev = devices_[d.device];
      std::unordered_map<std::uint64_t, std::pair<double, int>> cells;
      for (const auto& t : d.tables) {
        for (const auto& r : t.rows) {
          KernelDesc k{t.op, t.dtype, r.b, r.m, r.n, r.k, r.h};
          auto& e = dev.exact[exact_key(k)];
          e.first += r.seconds, e.second += 1;
          const double predicted = base_.predict(k, spec).seconds;
          auto& cell = cells[cell_key(k)];
          cell.first += std::log(r.seconds / predicted), cell.second += 1;
        }
      }
      for (auto& [key, e] : dev.exact) e.first /= e.second;
      for (auto& [key, e] : cells) dev.cells[key] = std::exp(e.first / e.second);
    }
  }

  KernelPrediction predict(const KernelDesc& k, const GpuSpec& gpu) const override {
    auto it = devices_.find(gpu.name);
    if (it == devices_.end()) return base_.predict(k, gpu);
    if (auto e = it->second.exact.find(exact_key(k)); e != it->second.exact.end())
      return {e->second.first, PredictionLabel::measured};
    KernelPrediction p = base_.predict(k, gpu);
    if (auto c = it->second.cells.find(cell_key(k)); c != it->second.cells.end()) p.seconds *= c->second;
    return p;
  }

 private:
  struct Device {
    std::unordered_map<std::uint64_t, std::pair<double, int>> exact;
    std::unordered_map<std::uint64_t, double> cells;
  };

  static std::uint64_t exact_key(const KernelDesc& k) {
    std::uint64_t h = static_cast<std::uint64_t>(op_index(k.op)) * 4 + static_cast<std::uint64_t>(k.dtype);
    for (long v : {k.b, k.m, k.n, k.k, k.h})
      h = h * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(v) + 1;
    return h;
  }

  static std::uint64_t cell_key(const KernelDesc& k) {
    std::uint64_t h = static_cast<std::uint64_t>(op_index(k.op)) * 4 + static_cast<std::uint64_t>(k.dtype);
    for (long v : {k.b, k.m, k.n, k.k, k.h}) {
      const auto bin = v > 0 ? static_cast<std::uint64_t>(std::floor(2.0 * std::log2(static_cast<double>(v))))
                             : std::uint64_t{127};
      h = (h << 7) | (bin & 127U);
    }
    return h;
  }

  CalibratedModel base_;
  std::unordered_map<std::string, Device> devices_;
};

const KernelModelRegistrar reg_roofline("roofline",
                                        "spec-sheet roofline: max(flops / peak(dtype), bytes / bandwidth)",
                                        [](const KernelCalibration&) {
                                          return std::make_unique<RooflineModel>();
                                        });
const KernelModelRegistrar reg_calibrated(
    "calibrated", "wave-quantized GEMM cost and latency+bandwidth memory model fitted per device",
    [](const KernelCalibration& c) { return std::make_unique<CalibratedModel>(c); });
const KernelModelRegistrar reg_table(
    "table", "measured shapes exactly; others calibrated, corrected by their measured neighbourhood",
    [](const KernelCalibration& c) { return std::make_unique<TableModel>(c); });

}  // namespace

}  // namespace fleetsim
