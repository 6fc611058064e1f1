#pragma once
// Internal hooks of the GPU catalog (gpu_catalog.cpp calls them): the 2024-2025 accelerators
// (gpu_catalog_blackwell.cpp) and the workstation RTX GPUs (gpu_catalog_workstation.cpp), kept in
// their own files so the main catalog stays small.
#include <vector>

#include "models/hardware/gpu_catalog.hpp"

namespace fleetsim::detail {

/// Appends B200, GB200 (per GPU) and MI300X.
void add_blackwell_and_mi300(std::vector<GpuSpec>& c);
/// Appends RTX 4090 and RTX PRO 6000 Blackwell Server Edition (gpu_catalog_workstation.cpp).
void add_workstation_gpus(std::vector<GpuSpec>& c);

}  // namespace fleetsim::detail
