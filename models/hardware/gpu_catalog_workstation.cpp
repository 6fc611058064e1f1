// Workstation and server-edition RTX GPUs of the catalog (the serving profiles' GPUs), kept apart so
// gpu_catalog.cpp stays small.
#include "models/hardware/gpu_catalog_extra.hpp"

namespace fleetsim::detail {

void add_workstation_gpus(std::vector<GpuSpec>& c) {
  // GeForce RTX 4090 (Ada AD102): NVIDIA Ada architecture whitepaper: 82.6 TFLOP/s FP32, 165.2 dense
  // FP16/BF16 tensor (FP32 accumulate), 24 GB GDDR6X at 1008 GB/s, 128 SMs, 2520 MHz, 72 MB L2, 450 W.
  c.push_back({.name = "RTX4090",
               .aliases = {"RTX-4090", "GeForce-RTX-4090"},
               .vendor = "NVIDIA",
               .fp32_tflops = 82.6,
               .fp16_tflops = 165.2,
               .bf16_tflops = 165.2,
               .memory_gib = 24,
               .memory_bw_gbs = 1008,
               .sms = 128,
               .boost_clock_mhz = 2520,
               .l2_mib = 72,
               .tdp_w = 450,
               .idle_w = 20,
               .pcie_gbs = 24,       // PCIe 4.0 x16 (32 GB/s a direction)
               .link = "pcie-host",  // GeForce: the driver refuses P2P, NCCL stages through host memory
               .pcie_gen = 4});
  // RTX PRO 6000 Blackwell Server Edition (GB202): 96 GB GDDR7 at 1597 GB/s, 188 SMs, 128 MB L2, up to
  // 600 W (NVIDIA product brief); FP32 and BF16 peaks are ESTIMATES from 188 SMs at ~2.6 GHz.
  c.push_back({.name = "RTXPRO6000",
               .aliases = {"RTX-PRO-6000", "RTX-PRO-6000-Blackwell"},
               .vendor = "NVIDIA",
               .fp32_tflops = 120,
               .fp16_tflops = 500,
               .bf16_tflops = 500,
               .memory_gib = 96,
               .memory_bw_gbs = 1597,
               .sms = 188,
               .boost_clock_mhz = 2617,
               .l2_mib = 128,
               .tdp_w = 600,
               .idle_w = 30,
               // PCIe 5.0 x16 (63 GB/s a direction); P2P writes measured at 53-56 GB/s on 6000 Pro
               // servers (voipmonitor/rtx6kpro, hardware/pcie-bandwidth.md); NCCL reaches less.
               .pcie_gbs = 48,
               .estimated = true,
               // P2P works on bare-metal hosts with the IOMMU off, a full BAR1 and the UVM HMM off
               // (voipmonitor/rtx6kpro); stock and virtualised servers run without it, where vLLM's
               // P2P check disables its custom all-reduce and NCCL stages through host memory. A
               // tuned host: tp_link = "pcie-p2p".
               .link = "pcie-host",
               .pcie_gen = 5});
}

}  // namespace fleetsim::detail
