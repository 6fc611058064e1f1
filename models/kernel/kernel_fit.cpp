// Fitting the calibrated kernel models (Eigen least squares) and their JSON form.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "models/kernel/kernel_model.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {

namespace {

constexpr double kTileM = 128, kTileN = 64;
constexpr double kWideN = 8192;  ///< output width above which cuBLAS SGEMM slows down (all NeuSight GPUs)

double ceil_div(double a, double b) {
  return std::ceil(a / b);
}

/// Relative-error least squares: minimises sum ((X c - y) / y)^2.
Eigen::VectorXd relative_lstsq(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) {
  Eigen::MatrixXd a = x;
  for (Eigen::Index i = 0; i < a.rows(); ++i) a.row(i) /= y(i);
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(a.rows());
  // Column scaling keeps the QR well conditioned whatever the feature units.
  Eigen::VectorXd scale(a.cols());
  for (Eigen::Index j = 0; j < a.cols(); ++j) {
    const double norm = a.col(j).norm();
    scale(j) = norm > 0 ? norm : 1.0;
    a.col(j) /= scale(j);
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
  qr.setThreshold(1e-10);
  Eigen::VectorXd c = qr.solve(ones);
  for (Eigen::Index j = 0; j < c.size(); ++j) c(j) /= scale(j);
  return c;
}

double round_sig(double v, int digits) {
  if (v == 0 || !std::isfinite(v)) return v;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return std::strtod(buf, nullptr);
}

MemoryFit fit_memory(const std::vector<const KernelSample*>& rows) {
  MemoryFit f;
  f.op = rows.front()->kernel.op;
  f.dtype = rows.front()->kernel.dtype;
  f.samples = static_cast<long>(rows.size());
  std::vector<double> bytes, seconds, row_lens;
  for (const KernelSample* s : rows) {
    bytes.push_back(s->kernel.bytes());
    seconds.push_back(s->seconds);
    row_lens.push_back(static_cast<double>(s->kernel.h));
  }
  try {
    // Layer-norm and softmax speed depends on the row length too: a row-length table when possible.
    const bool rows_matter = f.op == "ln" || f.op == "softmax";
    try {
      f.curve = rows_matter ? fit_memory_curve(bytes, seconds, row_lens) : fit_memory_curve(bytes, seconds);
    } catch (const std::invalid_argument&) {
      if (!rows_matter) throw;
      f.curve = fit_memory_curve(bytes, seconds);
    }
  } catch (const std::invalid_argument&) {
    // One size only (or too few rows): pure bandwidth through the origin.
    double sum = 0;
    for (std::size_t i = 0; i < bytes.size(); ++i) sum += bytes[i] / seconds[i];
    f.curve = MemoryCurve{};
    f.curve.launch_s = 0;
    f.curve.bw_bytes_per_s = sum / static_cast<double>(bytes.size());
  }
  double err = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i)
    err += std::abs(f.curve.seconds(bytes[i], row_lens[i]) / seconds[i] - 1);
  f.train_mape = err / static_cast<double>(bytes.size());
  return f;
}

}  // namespace

std::array<double, kGemmFeatures> gemm_features(const KernelDesc& k, const GpuSpec& gpu) {
  const double peak = std::max(peak_flops(gpu, k.dtype), 1.0);
  const double bw = std::max(gpu.memory_bw_gbs * 1e9, 1.0);
  const double sms = std::max(gpu.sms, 1);
  const double b = static_cast<double>(k.b), m = static_cast<double>(k.m), n = static_cast<double>(k.n),
               kk = static_cast<double>(k.k);
  const double tiles = ceil_div(m, kTileM) * ceil_div(n, kTileN) * b;
  const double waves = ceil_div(tiles, sms);
  const double tc = k.flops() / peak;
  const double wide = n > kWideN ? tc : 0.0;
  return {1e-6, waves * sms * kTileM * kTileN * 2.0 * kk / peak, k.bytes() / bw, tc, waves * 1e-6, b * 1e-6,
          wide, wide * std::log2(std::max(n, kWideN) / kWideN)};
}

GemmFit fit_gemm(const std::vector<const KernelSample*>& rows, const GpuSpec& gpu) {
  GemmFit f;
  f.op = rows.front()->kernel.op;
  f.dtype = rows.front()->kernel.dtype;
  f.samples = static_cast<long>(rows.size());
  const auto n = static_cast<Eigen::Index>(rows.size());
  Eigen::MatrixXd x(n, kGemmFeatures);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const KernelSample& s = *rows[static_cast<std::size_t>(i)];
    const auto feat = gemm_features(s.kernel, gpu);
    for (int j = 0; j < kGemmFeatures; ++j) x(i, j) = feat[static_cast<std::size_t>(j)];
    y(i) = s.seconds;
  }
  if (n >= 2 * kGemmFeatures) {
    const Eigen::VectorXd c = relative_lstsq(x, y);
    for (int j = 0; j < kGemmFeatures; ++j) f.coef[static_cast<std::size_t>(j)] = c(j);
  } else {
    // Too few rows for the full model: scale the ideal compute time only (median ratio).
    std::vector<double> r;
    for (Eigen::Index i = 0; i < n; ++i) r.push_back(y(i) / std::max(x(i, 3), 1e-12));
    std::nth_element(r.begin(), r.begin() + static_cast<long>(r.size() / 2), r.end());
    f.coef[3] = r[r.size() / 2];
  }
  double err = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    double p = 0;
    for (int j = 0; j < kGemmFeatures; ++j) p += f.coef[static_cast<std::size_t>(j)] * x(i, j);
    err += std::abs(p / y(i) - 1);
  }
  f.train_mape = err / static_cast<double>(n);
  return f;
}

const DeviceKernelCalibration* KernelCalibration::find(std::string_view device) const {
  for (const auto& d : devices)
    if (d.device == device) return &d;
  return nullptr;
}

KernelCalibration fit_kernels(const std::vector<KernelSample>& samples) {
  // device -> (op, dtype) -> rows, in a deterministic order.
  std::map<std::string, GpuSpec> specs;
  std::map<std::string, std::map<std::pair<std::string, int>, std::vector<const KernelSample*>>> groups;
  for (const KernelSample& s : samples) {
    const GpuSpec* g = find_gpu(s.device);
    if (g == nullptr)
      throw InputError(s.file, s.line, "Device",
                       "unknown GPU '" + s.device + "' (not in the catalog; add it or an alias)");
    specs.emplace(g->name, *g);
    groups[g->name][{s.kernel.op, static_cast<int>(s.kernel.dtype)}].push_back(&s);
  }
  KernelCalibration cal;
  for (auto& [device, ops] : groups) {
    DeviceKernelCalibration d;
    d.device = device;
    d.spec = specs.at(device);
    for (auto& [key, rows] : ops) {
      if (rows.front()->kernel.is_gemm())
        d.gemm.push_back(fit_gemm(rows, d.spec));
      else
        d.memory.push_back(fit_memory(rows));
      MeasuredTable t;
      t.op = key.first;
      t.dtype = static_cast<DType>(key.second);
      t.rows.reserve(rows.size());
      for (const KernelSample* s : rows)
        t.rows.push_back(
            {s->kernel.b, s->kernel.m, s->kernel.n, s->kernel.k, s->kernel.h, round_sig(s->seconds, 5)});
      d.tables.push_back(std::move(t));
    }
    cal.devices.push_back(std::move(d));
  }
  return cal;
}

// ---- JSON ---------------------------------------------------------------------------------------

nlohmann::json to_json(const KernelCalibration& c) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : c.devices) {
    nlohmann::json gemm = nlohmann::json::array(), memory = nlohmann::json::array(),
                   tables = nlohmann::json::array();
    for (const auto& g : d.gemm)
      gemm.push_back({{"op", g.op},
                      {"dtype", to_string(g.dtype)},
                      {"coef", g.coef},
                      {"samples", g.samples},
                      {"train_mape", g.train_mape}});
    for (const auto& m : d.memory)
      memory.push_back({{"op", m.op},
                        {"dtype", to_string(m.dtype)},
                        {"curve", to_json(m.curve)},
                        {"samples", m.samples},
                        {"train_mape", m.train_mape}});
    for (const auto& t : d.tables) {
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& r : t.rows) rows.push_back({r.b, r.m, r.n, r.k, r.h, r.seconds});
      tables.push_back({{"op", t.op}, {"dtype", to_string(t.dtype)}, {"rows", std::move(rows)}});
    }
    const GpuSpec& s = d.spec;
    devices.push_back({{"device", d.device},
                       {"spec",
                        {{"name", s.name},
                         {"fp32_tflops", s.fp32_tflops},
                         {"tf32_tflops", s.tf32_tflops},
                         {"fp16_tflops", s.fp16_tflops},
                         {"bf16_tflops", s.bf16_tflops},
                         {"memory_bw_gbs", s.memory_bw_gbs},
                         {"sms", s.sms},
                         {"boost_clock_mhz", s.boost_clock_mhz}}},
                       {"gemm", std::move(gemm)},
                       {"memory", std::move(memory)},
                       {"tables", std::move(tables)}});
  }
  nlohmann::json out = {
      {"format", "fleetsim-kernel-calibration"}, {"version", 1}, {"devices", std::move(devices)}};
  if (c.tensor_core_efficiency != 1.0) out["tensor_core_efficiency"] = c.tensor_core_efficiency;
  return out;
}

namespace {

struct JsonReader {
  const std::string& file;

  const nlohmann::json& get(const nlohmann::json& j, const char* key, const std::string& where) const {
    if (!j.is_object()) throw InputError(file, 0, where, "expected an object");
    auto it = j.find(key);
    if (it == j.end()) throw InputError(file, 0, where + "." + key, "missing");
    return *it;
  }
  double num(const nlohmann::json& j, const char* key, const std::string& where) const {
    const auto& v = get(j, key, where);
    if (!v.is_number()) throw InputError(file, 0, where + "." + key, "expected a number, got " + v.dump());
    return v.get<double>();
  }
  std::string str(const nlohmann::json& j, const char* key, const std::string& where) const {
    const auto& v = get(j, key, where);
    if (!v.is_string()) throw InputError(file, 0, where + "." + key, "expected a string, got " + v.dump());
    return v.get<std::string>();
  }
  const nlohmann::json& arr(const nlohmann::json& j, const char* key, const std::string& where) const {
    const auto& v = get(j, key, where);
    if (!v.is_array()) throw InputError(file, 0, where + "." + key, "expected an array");
    return v;
  }
  std::string op(const nlohmann::json& j, const std::string& where) const {
    std::string o = str(j, "op", where);
    if (!known_kernel_op(o)) throw InputError(file, 0, where + ".op", "unknown kernel op '" + o + "'");
    return o;
  }
};

}  // namespace

KernelCalibration kernel_calibration_from_json(const nlohmann::json& j, const std::string& file) {
  const JsonReader r{file};
  if (!j.is_object() || j.value("format", "") != "fleetsim-kernel-calibration")
    throw InputError(file, 0, "format",
                     "not a kernel calibration (expected format 'fleetsim-kernel-calibration')");
  if (r.num(j, "version", "") != 1) throw InputError(file, 0, "version", "unsupported version (expected 1)");
  KernelCalibration c;
  if (j.contains("tensor_core_efficiency")) {
    const auto& e = j["tensor_core_efficiency"];
    if (!e.is_number() || !(e.get<double>() > 0) || e.get<double>() > 1)
      throw InputError(file, 0, "tensor_core_efficiency", "must be a number in (0, 1]");
    c.tensor_core_efficiency = e.get<double>();
  }
  const auto& devs = r.arr(j, "devices", "");
  for (std::size_t i = 0; i < devs.size(); ++i) {
    const std::string w = "devices[" + std::to_string(i) + "]";
    DeviceKernelCalibration d;
    d.device = r.str(devs[i], "device", w);
    const auto& s = r.get(devs[i], "spec", w);
    const std::string ws = w + ".spec";
    d.spec.name = r.str(s, "name", ws);
    d.spec.fp32_tflops = r.num(s, "fp32_tflops", ws);
    d.spec.tf32_tflops = r.num(s, "tf32_tflops", ws);
    d.spec.fp16_tflops = r.num(s, "fp16_tflops", ws);
    d.spec.bf16_tflops = r.num(s, "bf16_tflops", ws);
    d.spec.memory_bw_gbs = r.num(s, "memory_bw_gbs", ws);
    d.spec.sms = static_cast<int>(r.num(s, "sms", ws));
    d.spec.boost_clock_mhz = r.num(s, "boost_clock_mhz", ws);
    const auto& gemm = r.arr(devs[i], "gemm", w);
    for (std::size_t g = 0; g < gemm.size(); ++g) {
      const std::string wg = w + ".gemm[" + std::to_string(g) + "]";
      GemmFit f;
      f.op = r.op(gemm[g], wg);
      f.dtype = parse_dtype(r.str(gemm[g], "dtype", wg), file, 0, wg + ".dtype");
      const auto& coef = r.arr(gemm[g], "coef", wg);
      if (coef.size() != kGemmFeatures)
        throw InputError(file, 0, wg + ".coef", "expected " + std::to_string(kGemmFeatures) + " numbers");
      for (std::size_t k = 0; k < coef.size(); ++k) {
        if (!coef[k].is_number()) throw InputError(file, 0, wg + ".coef", "expected numbers");
        f.coef[k] = coef[k].get<double>();
      }
      f.samples = static_cast<long>(r.num(gemm[g], "samples", wg));
      f.train_mape = r.num(gemm[g], "train_mape", wg);
      d.gemm.push_back(std::move(f));
    }
    const auto& mem = r.arr(devs[i], "memory", w);
    for (std::size_t g = 0; g < mem.size(); ++g) {
      const std::string wm = w + ".memory[" + std::to_string(g) + "]";
      MemoryFit f;
      f.op = r.op(mem[g], wm);
      f.dtype = parse_dtype(r.str(mem[g], "dtype", wm), file, 0, wm + ".dtype");
      try {
        f.curve = memory_curve_from_json(r.get(mem[g], "curve", wm));
      } catch (const std::invalid_argument& e) {
        throw InputError(file, 0, wm + ".curve", e.what());
      }
      f.samples = static_cast<long>(r.num(mem[g], "samples", wm));
      f.train_mape = r.num(mem[g], "train_mape", wm);
      d.memory.push_back(std::move(f));
    }
    const auto& tables = r.arr(devs[i], "tables", w);
    for (std::size_t g = 0; g < tables.size(); ++g) {
      const std::string wt = w + ".tables[" + std::to_string(g) + "]";
      MeasuredTable t;
      t.op = r.op(tables[g], wt);
      t.dtype = parse_dtype(r.str(tables[g], "dtype", wt), file, 0, wt + ".dtype");
      const auto& rows = r.arr(tables[g], "rows", wt);
      t.rows.reserve(rows.size());
      for (std::size_t k = 0; k < rows.size(); ++k) {
        const auto& row = rows[k];
        if (!row.is_array() || row.size() != 6 ||
            !std::all_of(row.begin(), row.end(), [](const nlohmann::json& v) { return v.is_number(); }))
          throw InputError(file, 0, wt + ".rows[" + std::to_string(k) + "]",
                           "expected [b, m, n, k, h, seconds]");
        t.rows.push_back({row[0].get<long>(), row[1].get<long>(), row[2].get<long>(), row[3].get<long>(),
                          row[4].get<long>(), row[5].get<double>()});
      }
      d.tables.push_back(std::move(t));
    }
    c.devices.push_back(std::move(d));
  }
  return c;
}

}  // namespace fleetsim
