#pragma once
// GPU kernel performance models: how long one GEMM/BMM or memory-bound kernel takes on a GPU.
// Fitted from microbenchmarks in the NeuSight CSV schema (../shared/data/microbench/neusight) or our
// own CUDA suite (same schema plus an optional `Dtype` column). Three models, registered by name:
//   roofline   max(flops / peak(dtype), bytes / bandwidth) from the spec sheet alone;
//   calibrated per (device, op, dtype) least-squares fit of a wave-quantized cost model;
//   table      measured shapes looked up exactly, others interpolated from measured neighbours.
// A device or dtype without measurements reuses the fit of the most similar calibrated device
// (features are computed from the target's own spec, so the fit scales by spec ratios) and the
// prediction is labelled `extrapolated`.
#include <array>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "models/hardware/gpu_catalog.hpp"
#include "models/kernel/memory_curve.hpp"
#include "workloads/base/registry.hpp"

namespace fleetsim {

enum class DType { fp32, tf32, fp16, bf16 };
std::string_view to_string(DType t);
/// Parses fp32/tf32/fp16/bf16 (case-insensitive; also float32, float16, bfloat16, half).
/// Throws InputError(file, line, field) on anything else.
DType parse_dtype(std::string_view text, const std::string& file = "", long line = 0,
                  const std::string& field = "Dtype");
/// Bytes per element: 4 for fp32/tf32, 2 for fp16/bf16.
int dtype_bytes(DType t);
/// Peak dense rate of `gpu` for `t`, FLOP/s (falls back to the FP32 peak where the spec has 0).
double peak_flops(const GpuSpec& gpu, DType t);

/// One kernel invocation. `op` is the NeuSight OPName: GEMMs `linear` ((b*m x k)(k x n), weight
/// shared across b) and `bmm` (b x (m x k)(k x n)); memory-bound ops add, addu, div, divu, gelu, mul,
/// mulu, pow, powu, relu, tanh, ln, softmax over b rows of h elements.
struct KernelDesc {
  std::string op;
  DType dtype = DType::fp32;
  long b = 1, m = 0, n = 0, k = 0, h = 0;
  bool is_gemm() const { return op == "linear" || op == "bmm"; }
  double flops() const;
  /// Minimum DRAM traffic: inputs read once, output written once.
  double bytes() const;
  /// Printable shape, e.g. "B=1 M=512 N=768 K=768" or "B=32 H=4096".
  std::string shape() const;
};
/// Is `op` one of the op names above?
bool known_kernel_op(std::string_view op);

enum class PredictionLabel { measured, interpolated, extrapolated };
std::string_view to_string(PredictionLabel l);

struct KernelPrediction {
  double seconds = 0;
  PredictionLabel label = PredictionLabel::extrapolated;
  /// The part of `seconds` that does not grow with the kernel's work: for a calibrated GEMM fit, its
  /// time for an empty kernel of the same batch (the intercept). On NeuSight's sweeps it is 30-65 us,
  /// the benchmark harness's host time per call rather than GPU time (a tiny cuBLAS kernel runs in a
  /// few us); a caller that accounts host time separately subtracts it. 0 for the other models.
  double fixed_s = 0;
};

/// One measured row of a microbenchmark CSV.
struct KernelSample {
  std::string file;
  long line = 0;
  std::string device;  ///< as written in the file (e.g. "Tesla V100-PCIE-32GB")
  KernelDesc kernel;
  double seconds = 0;  ///< per call (the CSV's Latency is in ms)
  std::string kernel_name;
};

/// Reads a NeuSight-schema CSV: OPName, Latency (ms), Device, Kernel Name (optional), B and either
/// M, N, K (GEMMs) or H (memory-bound ops); optional Dtype (default fp32). Errors name file, line and
/// column; a file without these columns is rejected as "not a kernel microbenchmark CSV".
std::vector<KernelSample> read_kernel_csv(const std::string& path);

/// Number of coefficients of the calibrated GEMM model (see gemm_features).
inline constexpr int kGemmFeatures = 8;
/// Features (seconds-like) of the calibrated GEMM model for `k` on `gpu`:
/// [1e-6, wave-quantized compute time with 128x64 tiles, bytes/bw, flops/peak, waves*1e-6, b*1e-6,
///  flops/peak if n > 8192, flops/peak * log2(n/8192) if n > 8192] (seconds; coef[0] is the launch
/// latency in us, coef[4] the per-wave overhead in us; the last two capture the slower wide-output
/// regime every NeuSight device shows for n > 8192).
std::array<double, kGemmFeatures> gemm_features(const KernelDesc& k, const GpuSpec& gpu);

/// Calibrated GEMM fit for one (op, dtype): seconds = coef . gemm_features.
struct GemmFit {
  std::string op;
  DType dtype = DType::fp32;
  std::array<double, kGemmFeatures> coef{};
  long samples = 0;
  double train_mape = 0;  ///< mean |pred/measured - 1| on the fitted rows
};

/// Memory-bound op fit for one (op, dtype): a bandwidth-vs-size curve of KernelDesc::bytes(), with
/// the row length h as the curve's row_len.
struct MemoryFit {
  std::string op;
  DType dtype = DType::fp32;
  MemoryCurve curve;
  long samples = 0;
  double train_mape = 0;
};

/// Measured shapes of one (op, dtype), kept for the `table` model.
struct MeasuredRow {
  long b = 1, m = 0, n = 0, k = 0, h = 0;
  double seconds = 0;
};
struct MeasuredTable {
  std::string op;
  DType dtype = DType::fp32;
  std::vector<MeasuredRow> rows;
};

/// Everything fitted for one device. The spec figures used for the features are stored so a
/// calibration predicts the same after the catalog changes.
struct DeviceKernelCalibration {
  std::string device;  ///< catalog canonical name (or the raw name if the catalog lacks it)
  GpuSpec spec;        ///< spec used when fitting (name, peaks, memory_bw_gbs, sms)
  std::vector<GemmFit> gemm;
  std::vector<MemoryFit> memory;
  std::vector<MeasuredTable> tables;
};

struct KernelCalibration {
  std::vector<DeviceKernelCalibration> devices;
  /// GEMMs in a dtype without a fit of their own (bf16 from fp32 sweeps) run at the roofline
  /// efficiency of the fit's GPU work (without fixed_s) times this factor (JSON
  /// "tensor_core_efficiency", optional, default 1; execution.llm_tensor_core_efficiency; README
  /// "LLM training": 0.7 with an 85 us launch floor fits vTrain's A100 fp16 iterations and is what
  /// the llm-fleet scenarios ship, 1 the published H100 figures).
  double tensor_core_efficiency = 1.0;
  const DeviceKernelCalibration* find(std::string_view device) const;
};

/// Fits every (device, op, dtype) present in `samples`. Devices are resolved with find_gpu; an
/// unknown device raises InputError naming the first sample's file and line.
KernelCalibration fit_kernels(const std::vector<KernelSample>& samples);
/// Fits one GEMM (op, dtype) on `gpu` from its samples (exposed for tests).
GemmFit fit_gemm(const std::vector<const KernelSample*>& rows, const GpuSpec& gpu);
/// JSON layout: {"format": "fleetsim-kernel-calibration", "version": 1, optional
/// "tensor_core_efficiency", "devices": [{"device",
/// "spec": {name, fp32_tflops, tf32_tflops, fp16_tflops, bf16_tflops, memory_bw_gbs, sms,
/// boost_clock_mhz}, "gemm": [{op, dtype, coef[8], samples, train_mape}], "memory": [{op, dtype,
/// curve: to_json(MemoryCurve), samples, train_mape}], "tables": [{op, dtype, rows: [[b,m,n,k,h,s],...]}]}]}
nlohmann::json to_json(const KernelCalibration& c);
KernelCalibration kernel_calibration_from_json(const nlohmann::json& j, const std::string& file);

class KernelModel {
 public:
  virtual ~KernelModel() = default;
  virtual KernelPrediction predict(const KernelDesc& k, const GpuSpec& gpu) const = 0;
};

using KernelModelRegistry = Registry<KernelModel, const KernelCalibration&>;
KernelModelRegistry& kernel_models();

struct KernelModelRegistrar {
  KernelModelRegistrar(std::string name, std::string description, KernelModelRegistry::Factory f) {
    kernel_models().add(std::move(name), std::move(description), std::move(f));
  }
};

/// Roofline time on the spec sheet: max(flops / peak(dtype), bytes / bandwidth).
double roofline_seconds(const KernelDesc& k, const GpuSpec& gpu);

}  // namespace fleetsim
