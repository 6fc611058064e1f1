#pragma once
// What an LLM iteration runs on: the GPU, servers of gpus_per_node, their network, and the host.
#include "models/collective/collective_model.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "models/llm/host.hpp"

namespace fleetsim::llm {

struct LlmPlatform {
  const GpuSpec* gpu = nullptr;
  int gpus_per_node = 8;
  CommFabric fabric;
  /// Fixed time per iteration outside the GPU work (data loader, logging), s.
  double host_overhead_s = 0;
  /// The CPU issuing kernels (host.hpp); launch_s = 0 times kernels as the kernel model does.
  HostModel host;
};

}  // namespace fleetsim::llm
