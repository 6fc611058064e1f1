#pragma once
// Multi-Instance GPU (MIG) profiles: the GPU instances a catalog GPU can be split into, with their
// share of compute (streaming-multiprocessor slices) and their memory. Sources: NVIDIA "Multi-Instance
// GPU User Guide" (r580), supported profiles for A100-40GB, A100-80GB, H100-80GB, H200 and RTX PRO 6000
// Blackwell (the GPU instance names, e.g. "3g.40gb"). Pure data.
#include <string>
#include <string_view>
#include <vector>

namespace fleetsim {

struct MigProfile {
  std::string name;        ///< e.g. "3g.40gb"
  int compute_slices = 1;  ///< the "g" count
  int total_slices = 7;    ///< compute slices of the whole GPU (7, or 4 on the RTX PRO 6000)
  double memory_gib = 0;   ///< memory of the instance
  double compute_share() const { return static_cast<double>(compute_slices) / total_slices; }
};

/// The MIG profiles of a catalog GPU (canonical name); empty when it has no MIG.
const std::vector<MigProfile>& mig_profiles(std::string_view gpu);
/// A profile by name ("3g.40gb", or just "3g"), or nullptr.
const MigProfile* find_mig(std::string_view gpu, std::string_view name);

}  // namespace fleetsim
