// GPU catalog, part 2: NVIDIA Blackwell (B200, GB200) and AMD MI300X (gpu_catalog_extra.hpp).
// Tensor peaks are dense (the datasheets' "with sparsity" figures halved), as in gpu_catalog.cpp.
#include "models/hardware/gpu_catalog_extra.hpp"

namespace fleetsim::detail {

void add_blackwell_and_mi300(std::vector<GpuSpec>& c) {
  // B200 (HGX B200 / DGX B200 SXM module). NVIDIA "HGX B200" / "DGX B200" datasheets (2024): per GPU
  // 2.25 PFLOP/s dense FP16/BF16 (4.5 with sparsity), 1.1 PFLOP/s dense TF32, 180 GB HBM3e (DGX B200:
  // 1,440 GB for 8; marketed 192 GB) at 8 TB/s, NVLink 5 = 1.8 TB/s, up to 1,000 W. FP32 (75), SMs
  // (148, two dies), boost clock and L2 are not on the datasheet: from public architecture reports,
  // hence estimated = true.
  c.push_back({.name = "B200",
               .aliases = {"B200-SXM", "B200-180GB", "HGX-B200"},
               .vendor = "NVIDIA",
               .fp32_tflops = 75,
               .tf32_tflops = 1100,
               .fp16_tflops = 2250,
               .bf16_tflops = 2250,
               .memory_gib = 167.6,  // 180 GB
               .memory_bw_gbs = 8000,
               .sms = 148,
               .boost_clock_mhz = 1965,
               .l2_mib = 126,
               .tdp_w = 1000,
               .idle_w = 120,
               .nvlink_gen = 5,
               .nvlink_gbs = 1800,
               .estimated = true});

  // GB200, one Blackwell GPU of a Grace-Blackwell superchip. NVIDIA "GB200 NVL72" datasheet (2024),
  // rack figures / 72 GPUs: 180 PFLOP/s dense FP16/BF16 -> 2.5 PF, 90 PF dense TF32 -> 1.25 PF,
  // 13.4 TB HBM3e -> 186 GB at 8 TB/s, NVLink 5 = 1.8 TB/s per GPU. Per-GPU power (~1,200 W), FP32,
  // SMs, clock and L2 are not on the datasheet: estimated = true.
  c.push_back({.name = "GB200",
               .aliases = {"GB200-NVL72", "B200-GB200"},
               .vendor = "NVIDIA",
               .fp32_tflops = 80,
               .tf32_tflops = 1250,
               .fp16_tflops = 2500,
               .bf16_tflops = 2500,
               .memory_gib = 173.2,  // 186 GB
               .memory_bw_gbs = 8000,
               .sms = 148,
               .boost_clock_mhz = 2100,
               .l2_mib = 126,
               .tdp_w = 1200,
               .idle_w = 140,
               .nvlink_gen = 5,
               .nvlink_gbs = 1800,
               .estimated = true});

  // AMD Instinct MI300X (OAM). AMD "Instinct MI300X Accelerator" datasheet (2023): 81.7 TFLOP/s FP32
  // vector (163.4 matrix), 653.7 TF32 and 1,307.4 FP16/BF16 dense matrix TFLOP/s, 192 GB HBM3 at
  // 5.3 TB/s, 304 CUs at 2,100 MHz peak, 256 MB AMD Infinity Cache (listed as l2_mib: the last-level
  // cache), 750 W, 7 Infinity Fabric links of 128 GB/s = 896 GB/s peak (nvlink_gen 0: not NVLink).
  // Idle power is not on the datasheet (an assumption, as for the other entries).
  c.push_back({.name = "MI300X",
               .aliases = {"MI300X-192GB", "Instinct-MI300X"},
               .vendor = "AMD",
               .fp32_tflops = 81.7,
               .tf32_tflops = 653.7,
               .fp16_tflops = 1307.4,
               .bf16_tflops = 1307.4,
               .memory_gib = 178.8,  // 192 GB
               .memory_bw_gbs = 5300,
               .sms = 304,
               .boost_clock_mhz = 2100,
               .l2_mib = 256,
               .tdp_w = 750,
               .idle_w = 90,
               .nvlink_gen = 0,
               .nvlink_gbs = 896});
}

}  // namespace fleetsim::detail
