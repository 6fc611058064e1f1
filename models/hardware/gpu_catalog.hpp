#pragma once
// GPU catalog: datasheet figures for common datacenter GPUs (sources cited per entry in gpu_catalog.cpp).
// Lookup is case-insensitive and accepts aliases used by traces (e.g. openb "V100M16", Gavel "v100").
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fleetsim {

struct GpuSpec {
  std::string name;                  ///< canonical catalog name, e.g. "A100-80GB"
  std::vector<std::string> aliases;  ///< other spellings accepted in traces and scenarios
  std::string vendor;                ///< "NVIDIA", "AMD", "Alibaba (unpublished)"
  double fp32_tflops = 0;            ///< dense FP32 peak, TFLOP/s
  double tf32_tflops = 0;            ///< dense TF32 tensor peak, TFLOP/s (0 = not supported)
  double fp16_tflops = 0;            ///< dense FP16 (tensor where available) peak, TFLOP/s
  double bf16_tflops = 0;            ///< dense BF16 peak, TFLOP/s (0 = not supported)
  double memory_gib = 0;             ///< device memory, GiB
  double memory_bw_gbs = 0;          ///< HBM/GDDR bandwidth, GB/s
  int sms = 0;                       ///< streaming multiprocessors (compute units on AMD)
  double boost_clock_mhz = 0;        ///< boost clock, MHz
  double l2_mib = 0;                 ///< L2 cache, MiB
  double tdp_w = 0;                  ///< board power, W
  double idle_w = 0;                 ///< typical idle power, W
  int nvlink_gen = 0;                ///< NVLink generation (0 = none; AMD Infinity Fabric noted as 0)
  double nvlink_gbs = 0;             ///< total NVLink/xGMI bandwidth per GPU, GB/s (both directions summed)
  double pcie_gbs = 0;               ///< reachable GPU-to-GPU PCIe GB/s, one direction (0 = unknown)
  bool estimated = false;            ///< figures are estimates (no public datasheet)
  /// How a server's GPUs of this type are usually linked (models/collective/serving_links.hpp):
  /// "nvswitch", "nvlink-pair", "pcie-p2p", "pcie-host"; "" = nvswitch with NVLink, else pcie-p2p.
  std::string link{};
  int pcie_gen = 0;  ///< PCIe generation of the host link (0 = unknown)
};

/// All catalog entries, in a fixed order.
const std::vector<GpuSpec>& gpu_catalog();
/// A GPU name resolved against the catalog, and what was repaired to resolve it.
struct GpuMatch {
  const GpuSpec* gpu = nullptr;  ///< nullptr: unknown, or more than one GPU matches
  std::string repaired;          ///< "" when the name is a catalog name or alias as written
};
/// Resolves any spelling of a catalog name or alias (gpu_names.cpp): case, '_' or ' ' for '-', runs of
/// separators, and vendor prefixes as nvidia-smi, rocm-smi and tools write them ("NVIDIA ", "Tesla_",
/// "NVIDIA_GeForce_", "AMD Instinct "): NeuSight's folder "NVIDIA_H100_80GB_HBM3" is "H100",
/// "NVIDIA_A100_80GB_PCIe" is "A100-80GB-PCIe". `repaired` says which of these it took.
GpuMatch resolve_gpu(std::string_view name);
/// resolve_gpu(name).gpu.
const GpuSpec* find_gpu(std::string_view name);
/// Like find_gpu but raises InputError(file, line, key) listing valid names (and the closest) if unknown.
const GpuSpec& gpu_spec(std::string_view name, const std::string& file = "", long line = 0,
                        const std::string& key = "gpu");
/// Canonical names, for messages and `fleetsim policies`.
std::vector<std::string> gpu_names();

/// How work measured on one GPU scales to another when only spec figures are known.
enum class KernelScale {
  model,   ///< not by spec: it has a shape, the kernel model's ratio between the GPUs applies
  memory,  ///< memory bandwidth ratio (element-wise, reductions, device copies)
  fp32,    ///< FP32 peak ratio (SIMT GEMMs)
  tensor,  ///< FP16 tensor peak ratio (tensor-core GEMMs, attention); FP32 where either lacks one
  fixed,   ///< unchanged (host copies, fixed-latency work)
};
std::string_view to_string(KernelScale s);
/// The scale named `name` (as to_string writes it); nullopt if none.
std::optional<KernelScale> parse_kernel_scale(std::string_view name);
/// Duration on `dst` of work measured on `src`, as a multiplier (1 for model and fixed, and when a
/// spec figure is missing).
double spec_ratio(KernelScale s, const GpuSpec& src, const GpuSpec& dst);

/// Reads a device file in the NeuSight schema: `Device` (name as nvidia-smi prints it), `Dev_Mem` (GB),
/// `Mem_Bw` (GB/s), `Num_Sm`, `Core_Per_SM`, `Freq` (MHz), `SingleFLOPs` (FP32 GFLOP/s), `L2Cache` (MB).
/// The file's figures win; a device the catalog knows keeps its canonical name and the catalog's other
/// fields (tensor peaks, TDP, NVLink); an unknown one is named by its `Device` string, with tensor
/// peaks unknown (0) and FP16 at the FP32 rate. Errors (missing file, not JSON, missing or
/// non-numeric key) name the file and the key.
GpuSpec load_device_file(const std::string& path);
/// All `*.json` device files of a directory, sorted by file name.
std::vector<GpuSpec> load_device_dir(const std::string& dir);

}  // namespace fleetsim
