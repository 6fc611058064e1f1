#pragma once
// Internal hook of the GPU catalog (gpu_catalog.cpp calls it): the 2024-2025 accelerators, kept in
// their own file (gpu_catalog_blackwell.cpp) so the main catalog stays small.
#include <vector>

#include "models/hardware/gpu_catalog.hpp"

namespace fleetsim::detail {

/// Appends B200, GB200 (per GPU) and MI300X.
void add_blackwell_and_mi300(std::vector<GpuSpec>& c);

}  // namespace fleetsim::detail
