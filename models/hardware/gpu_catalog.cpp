#include "models/hardware/gpu_catalog.hpp"
#include "models/hardware/gpu_catalog_extra.hpp"

#include <string>
#include <utility>

#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

// Figures are the vendors' datasheet peaks (dense, i.e. without 2:4 sparsity, at boost clock).
// Conventions:
//  - One entry = one device as CUDA/ROCm schedulers and traces count it, except where noted (MI250).
//  - fp16_tflops: tensor-core FP16 where the part has tensor cores; parts without fast FP16 math
//    (K80, P4) list their FP32 rate, which is what FP16-storage/FP32-math kernels get.
//  - memory_gib: the nominal capacity (HBM/GDDR capacities are binary, so "80 GB" = 80 GiB).
//  - idle_w is not a datasheet figure: typical `nvidia-smi`/`rocm-smi` idle readings (P8 state, no
//    context); power models should treat it as an estimate.
//  - nvlink_gbs: NVLink (or AMD Infinity Fabric/xGMI) bandwidth per GPU, both directions summed, as
//    NVIDIA quotes it (e.g. "NVLink: 600 GB/s" for A100).
//  - Lookup is case-insensitive, so Gavel's lower-case names (k80, p100, v100) match directly.

namespace fleetsim {

namespace {

std::vector<GpuSpec> make_catalog() {
  std::vector<GpuSpec> c;

  // Tesla K80 (GK210 x2 per board). NVIDIA "Tesla K80 GPU Accelerator" board spec (BD-07317) and
  // https://www.nvidia.com/en-gb/data-center/tesla-k80/: board = 8.73 TFLOP/s FP32 (boost),
  // 24 GB GDDR5, 480 GB/s, 300 W, 2x13 SMX, 875 MHz boost, 1.5 MB L2 per GK210.
  // Listed per GK210 device (half a board): CUDA, AWS p2, GCP and Gavel count each GK210 as one GPU.
  c.push_back({.name = "K80",
               .aliases = {"Tesla-K80"},
               .vendor = "NVIDIA",
               .fp32_tflops = 4.365,
               .fp16_tflops = 4.365,
               .memory_gib = 12,
               .memory_bw_gbs = 240,
               .sms = 13,
               .boost_clock_mhz = 875,
               .l2_mib = 1.5,
               .tdp_w = 150,
               .idle_w = 25});

  // Tesla P4. NVIDIA "Tesla P4 Inference Accelerator" datasheet (PB-08449):
  // 5.5 TFLOP/s FP32, 8 GB GDDR5, 192 GB/s, 50/75 W (75 W board max), 2560 cores = 20 SMs,
  // 1063 MHz boost, 2 MB L2 (GP104). No fast FP16 (1/64 rate on GP104).
  c.push_back({.name = "P4",
               .aliases = {"Tesla-P4"},
               .vendor = "NVIDIA",
               .fp32_tflops = 5.5,
               .fp16_tflops = 5.5,
               .memory_gib = 8,
               .memory_bw_gbs = 192,
               .sms = 20,
               .boost_clock_mhz = 1063,
               .l2_mib = 2,
               .tdp_w = 75,
               .idle_w = 7});

  // Tesla P100 PCIe 16 GB. NVIDIA "Tesla P100 PCIe" datasheet (nvidia.com/object/tesla-p100.html):
  // 9.3 TFLOP/s FP32, 18.7 FP16, 16 GB CoWoS HBM2 at 732 GB/s, 250 W, 56 SMs, 1303 MHz boost, 4 MB L2.
  // The openb (Alibaba) nodes hold 1-2 P100 per node and GCP/Gavel offer the PCIe card.
  c.push_back({.name = "P100",
               .aliases = {"P100-PCIE-16GB", "Tesla-P100"},
               .vendor = "NVIDIA",
               .fp32_tflops = 9.3,
               .fp16_tflops = 18.7,
               .memory_gib = 16,
               .memory_bw_gbs = 732,
               .sms = 56,
               .boost_clock_mhz = 1303,
               .l2_mib = 4,
               .tdp_w = 250,
               .idle_w = 28});

  // Tesla P100 SXM2 (DGX-1 P100). Same datasheet, NVLink version: 10.6 TFLOP/s FP32, 21.2 FP16,
  // 732 GB/s, 300 W, 1480 MHz boost, NVLink 1: 4 links x 40 GB/s = 160 GB/s.
  c.push_back({.name = "P100-SXM2",
               .aliases = {"P100-SXM2-16GB"},
               .vendor = "NVIDIA",
               .fp32_tflops = 10.6,
               .fp16_tflops = 21.2,
               .memory_gib = 16,
               .memory_bw_gbs = 732,
               .sms = 56,
               .boost_clock_mhz = 1480,
               .l2_mib = 4,
               .tdp_w = 300,
               .idle_w = 30,
               .nvlink_gen = 1,
               .nvlink_gbs = 160});

  // Tesla V100 SXM2 16 GB. NVIDIA "Tesla V100 GPU Accelerator" datasheet (Jan 2020, Volta):
  // 15.7 TFLOP/s FP32, 125 tensor FP16, 16 GB HBM2 at 900 GB/s, 300 W, NVLink 2 = 300 GB/s,
  // 80 SMs, 1530 MHz boost, 6 MB L2. openb calls it "V100M16".
  c.push_back({.name = "V100-16GB",
               .aliases = {"V100M16", "V100-SXM2-16GB"},
               .vendor = "NVIDIA",
               .fp32_tflops = 15.7,
               .fp16_tflops = 125,
               .memory_gib = 16,
               .memory_bw_gbs = 900,
               .sms = 80,
               .boost_clock_mhz = 1530,
               .l2_mib = 6,
               .tdp_w = 300,
               .idle_w = 40,
               .nvlink_gen = 2,
               .nvlink_gbs = 300});

  // Tesla V100 SXM2 32 GB. Same datasheet: identical compute, 32 GB HBM2 at 900 GB/s, 300 W.
  // openb calls it "V100M32"; Gavel's "v100" maps here.
  c.push_back({.name = "V100",
               .aliases = {"V100M32", "V100-32GB", "V100-SXM2-32GB"},
               .vendor = "NVIDIA",
               .fp32_tflops = 15.7,
               .fp16_tflops = 125,
               .memory_gib = 32,
               .memory_bw_gbs = 900,
               .sms = 80,
               .boost_clock_mhz = 1530,
               .l2_mib = 6,
               .tdp_w = 300,
               .idle_w = 40,
               .nvlink_gen = 2,
               .nvlink_gbs = 300});

  // Tesla V100 PCIe 32 GB. NVIDIA "Tesla V100 GPU Accelerator" datasheet (V100 PCIe column):
  // 14 TFLOP/s FP32, 112 FP16 tensor, 32 GB HBM2 at 900 GB/s, 250 W, no NVLink; 80 SMs, 1380 MHz
  // boost, 6 MB L2. nvidia-smi: "Tesla V100-PCIE-32GB" (the NeuSight microbenchmarks' V100).
  c.push_back({.name = "V100-PCIE-32GB",
               .aliases = {"V100-PCIe", "V100-PCIE-16GB"},
               .vendor = "NVIDIA",
               .fp32_tflops = 14,
               .fp16_tflops = 112,
               .memory_gib = 32,
               .memory_bw_gbs = 900,
               .sms = 80,
               .boost_clock_mhz = 1380,
               .l2_mib = 6,
               .tdp_w = 250,
               .idle_w = 30});

  // Tesla T4. NVIDIA "T4 Tensor Core GPU" datasheet (Turing): 8.1 TFLOP/s FP32, 65 FP16 tensor,
  // 16 GB GDDR6 at 320 GB/s, 70 W, 40 SMs, 1590 MHz boost, 4 MB L2.
  c.push_back({.name = "T4",
               .aliases = {"Tesla-T4"},
               .vendor = "NVIDIA",
               .fp32_tflops = 8.1,
               .fp16_tflops = 65,
               .memory_gib = 16,
               .memory_bw_gbs = 320,
               .sms = 40,
               .boost_clock_mhz = 1590,
               .l2_mib = 4,
               .tdp_w = 70,
               .idle_w = 10});

  // A10. NVIDIA "A10 Tensor Core GPU" datasheet (Ampere GA102): 31.2 TFLOP/s FP32, TF32 62.5,
  // BF16/FP16 125 (dense), 24 GB GDDR6 at 600 GB/s, 150 W, 72 SMs, 1695 MHz boost, 6 MB L2.
  c.push_back({.name = "A10",
               .aliases = {},
               .vendor = "NVIDIA",
               .fp32_tflops = 31.2,
               .tf32_tflops = 62.5,
               .fp16_tflops = 125,
               .bf16_tflops = 125,
               .memory_gib = 24,
               .memory_bw_gbs = 600,
               .sms = 72,
               .boost_clock_mhz = 1695,
               .l2_mib = 6,
               .tdp_w = 150,
               .idle_w = 18});

  // A100 PCIe 40 GB. NVIDIA "A100 Tensor Core GPU" datasheet (2020/2021): 19.5 TFLOP/s FP32,
  // TF32 156, BF16/FP16 312 (dense), 40 GB HBM2 at 1,555 GB/s, PCIe card 250 W, NVLink bridge for
  // two GPUs 600 GB/s (NVLink 3), 108 SMs, 1410 MHz boost, 40 MB L2.
  c.push_back({.name = "A100-40GB",
               .aliases = {"A100-PCIE-40GB", "A100"},
               .vendor = "NVIDIA",
               .fp32_tflops = 19.5,
               .tf32_tflops = 156,
               .fp16_tflops = 312,
               .bf16_tflops = 312,
               .memory_gib = 40,
               .memory_bw_gbs = 1555,
               .sms = 108,
               .boost_clock_mhz = 1410,
               .l2_mib = 40,
               .tdp_w = 250,
               .idle_w = 35,
               .nvlink_gen = 3,
               .nvlink_gbs = 600,
               .link = "nvlink-pair",  // PCIe card: NVLink bridges join pairs
               .pcie_gen = 4});

  // A100 SXM4 40 GB (DGX A100 320GB). Same datasheet: compute and memory as above, 400 W, NVLink 3
  // 12 links = 600 GB/s.
  c.push_back({.name = "A100-SXM4-40GB",
               .aliases = {},
               .vendor = "NVIDIA",
               .fp32_tflops = 19.5,
               .tf32_tflops = 156,
               .fp16_tflops = 312,
               .bf16_tflops = 312,
               .memory_gib = 40,
               .memory_bw_gbs = 1555,
               .sms = 108,
               .boost_clock_mhz = 1410,
               .l2_mib = 40,
               .tdp_w = 400,
               .idle_w = 50,
               .nvlink_gen = 3,
               .nvlink_gbs = 600});

  // A100 SXM4 80 GB. NVIDIA "A100 Tensor Core GPU" datasheet (A100 80GB SXM column): 19.5 TFLOP/s
  // FP32, TF32 156, BF16/FP16 312, 80 GB HBM2e at 2,039 GB/s, 400 W, NVLink 3 = 600 GB/s.
  c.push_back({.name = "A100-80GB",
               .aliases = {"A100-SXM4-80GB", "A100-SXM-80GB"},
               .vendor = "NVIDIA",
               .fp32_tflops = 19.5,
               .tf32_tflops = 156,
               .fp16_tflops = 312,
               .bf16_tflops = 312,
               .memory_gib = 80,
               .memory_bw_gbs = 2039,
               .sms = 108,
               .boost_clock_mhz = 1410,
               .l2_mib = 40,
               .tdp_w = 400,
               .idle_w = 50,
               .nvlink_gen = 3,
               .nvlink_gbs = 600});

  // A100 PCIe 80 GB. NVIDIA "A100 Tensor Core GPU" datasheet (A100 80GB PCIe column): compute as
  // above, 80 GB HBM2e at 1,935 GB/s, 300 W, NVLink bridge for two GPUs 600 GB/s.
  // nvidia-smi: "NVIDIA A100 80GB PCIe".
  c.push_back({.name = "A100-80GB-PCIe",
               .aliases = {"A100 80GB PCIe", "A100-PCIE-80GB"},
               .vendor = "NVIDIA",
               .fp32_tflops = 19.5,
               .tf32_tflops = 156,
               .fp16_tflops = 312,
               .bf16_tflops = 312,
               .memory_gib = 80,
               .memory_bw_gbs = 1935,
               .sms = 108,
               .boost_clock_mhz = 1410,
               .l2_mib = 40,
               .tdp_w = 300,
               .idle_w = 40,
               .nvlink_gen = 3,
               .nvlink_gbs = 600,
               .link = "nvlink-pair",  // PCIe card: NVLink bridges join pairs
               .pcie_gen = 4});

  // H100 SXM5 80 GB. NVIDIA "H100 Tensor Core GPU" datasheet (H100 SXM column): 67 TFLOP/s FP32,
  // TF32 989 / BF16 1,979 / FP16 1,979 with sparsity (halved here for dense), 80 GB HBM3 at
  // 3.35 TB/s, up to 700 W, NVLink 4 = 900 GB/s; 132 SMs, 1980 MHz boost, 50 MB L2 (Hopper whitepaper).
  c.push_back({.name = "H100",
               .aliases = {"H100-SXM", "H100-SXM5-80GB", "H100-80GB", "H100 80GB HBM3"},
               .vendor = "NVIDIA",
               .fp32_tflops = 67,
               .tf32_tflops = 494.5,
               .fp16_tflops = 989.5,
               .bf16_tflops = 989.5,
               .memory_gib = 80,
               .memory_bw_gbs = 3350,
               .sms = 132,
               .boost_clock_mhz = 1980,
               .l2_mib = 50,
               .tdp_w = 700,
               .idle_w = 70,
               .nvlink_gen = 4,
               .nvlink_gbs = 900});

  // H200 SXM 141 GB. NVIDIA "H200 Tensor Core GPU" datasheet (H200 SXM column): same Hopper compute
  // as H100 SXM (67 FP32; 989 TF32 / 1,979 FP16/BF16 with sparsity), 141 GB HBM3e at 4.8 TB/s,
  // up to 700 W, NVLink 4 = 900 GB/s. nvidia-smi reports 143,771 MiB = 140.4 GiB.
  c.push_back({.name = "H200",
               .aliases = {"H200-SXM", "H200-141GB"},
               .vendor = "NVIDIA",
               .fp32_tflops = 67,
               .tf32_tflops = 494.5,
               .fp16_tflops = 989.5,
               .bf16_tflops = 989.5,
               .memory_gib = 140.4,
               .memory_bw_gbs = 4800,
               .sms = 132,
               .boost_clock_mhz = 1980,
               .l2_mib = 50,
               .tdp_w = 700,
               .idle_w = 75,
               .nvlink_gen = 4,
               .nvlink_gbs = 900});

  // L4. NVIDIA "L4 Tensor Core GPU" datasheet (Ada AD104): 30.3 TFLOP/s FP32, TF32 120 / BF16 242 /
  // FP16 242 with sparsity (halved here), 24 GB GDDR6 at 300 GB/s, 72 W, 58 SMs, 2040 MHz boost,
  // 48 MB L2.
  c.push_back({.name = "L4",
               .aliases = {},
               .vendor = "NVIDIA",
               .fp32_tflops = 30.3,
               .tf32_tflops = 60,
               .fp16_tflops = 121,
               .bf16_tflops = 121,
               .memory_gib = 24,
               .memory_bw_gbs = 300,
               .sms = 58,
               .boost_clock_mhz = 2040,
               .l2_mib = 48,
               .tdp_w = 72,
               .idle_w = 16});

  // AMD Instinct MI250 (OAM). AMD "Instinct MI250 Accelerator" datasheet / amd.com product page:
  // 45.3 TFLOP/s FP32 vector (90.5 FP32 matrix), FP16/BF16 matrix 362.1, 128 GB HBM2e at 3.2 TB/s,
  // 500 W, 208 CUs, 1700 MHz peak engine clock, 16 MB L2 (8 MB per GCD), 6 Infinity Fabric links
  // x 100 GB/s = 600 GB/s. Listed per package (two GCDs; ROCm shows each GCD as a device).
  // No TF32 format on CDNA2.
  c.push_back({.name = "MI250",
               .aliases = {"Instinct-MI250"},
               .vendor = "AMD",
               .fp32_tflops = 45.3,
               .fp16_tflops = 362.1,
               .bf16_tflops = 362.1,
               .memory_gib = 128,
               .memory_bw_gbs = 3276.8,
               .sms = 208,
               .boost_clock_mhz = 1700,
               .l2_mib = 16,
               .tdp_w = 500,
               .idle_w = 90,
               .nvlink_gbs = 600});

  // Alibaba openb "G2": the model's specs are NOT public (Weng et al., "Beware of Fragmentation",
  // ATC'23, anonymise it). Nodes hold 8 per node with 96 cores / 384 GiB. ASSUMPTION: a T4-class
  // part, so the T4 datasheet figures are used. estimated = true.
  c.push_back({.name = "G2",
               .aliases = {},
               .vendor = "Alibaba (unpublished)",
               .fp32_tflops = 8.1,
               .fp16_tflops = 65,
               .memory_gib = 16,
               .memory_bw_gbs = 320,
               .sms = 40,
               .boost_clock_mhz = 1590,
               .l2_mib = 4,
               .tdp_w = 70,
               .idle_w = 10,
               .estimated = true});

  detail::add_workstation_gpus(c);  // gpu_catalog_workstation.cpp: RTX 4090, RTX PRO 6000

  // Alibaba openb "G3": specs NOT public either. Nodes hold 8 per node with 128 cores / 768 GiB.
  // ASSUMPTION: a V100-class part (V100 SXM2 32 GB datasheet figures). estimated = true.
  c.push_back({.name = "G3",
               .aliases = {},
               .vendor = "Alibaba (unpublished)",
               .fp32_tflops = 15.7,
               .fp16_tflops = 125,
               .memory_gib = 32,
               .memory_bw_gbs = 900,
               .sms = 80,
               .boost_clock_mhz = 1530,
               .l2_mib = 6,
               .tdp_w = 300,
               .idle_w = 40,
               .nvlink_gen = 2,
               .nvlink_gbs = 300,
               .estimated = true});

  detail::add_blackwell_and_mi300(c);  // gpu_catalog_blackwell.cpp
  return c;
}

}  // namespace

const std::vector<GpuSpec>& gpu_catalog() {
  static const std::vector<GpuSpec> catalog = make_catalog();
  return catalog;
}

namespace {

constexpr std::pair<KernelScale, std::string_view> kScaleNames[] = {{KernelScale::model, "model"},
                                                                    {KernelScale::memory, "memory"},
                                                                    {KernelScale::fp32, "fp32"},
                                                                    {KernelScale::tensor, "tensor"},
                                                                    {KernelScale::fixed, "fixed"}};

double ratio(double src, double dst) {
  return src > 0 && dst > 0 ? src / dst : 1.0;
}

}  // namespace

std::string_view to_string(KernelScale s) {
  for (const auto& [scale, name] : kScaleNames)
    if (scale == s) return name;
  return "model";
}

std::optional<KernelScale> parse_kernel_scale(std::string_view name) {
  for (const auto& [scale, n] : kScaleNames)
    if (n == name) return scale;
  return std::nullopt;
}

double spec_ratio(KernelScale s, const GpuSpec& src, const GpuSpec& dst) {
  switch (s) {
    case KernelScale::memory:
      return ratio(src.memory_bw_gbs, dst.memory_bw_gbs);
    case KernelScale::fp32:
      return ratio(src.fp32_tflops, dst.fp32_tflops);
    case KernelScale::tensor:
      return src.fp16_tflops > 0 && dst.fp16_tflops > 0 ? ratio(src.fp16_tflops, dst.fp16_tflops)
                                                        : ratio(src.fp32_tflops, dst.fp32_tflops);
    case KernelScale::model:
    case KernelScale::fixed:
      return 1.0;
  }
  return 1.0;
}

}  // namespace fleetsim
