#include "models/hardware/mig.hpp"

#include <map>

namespace fleetsim {
namespace {

/// The five profiles of a 7-slice GPU with these instance memories (GB as NVIDIA names them).
std::vector<MigProfile> seven(double g1, double g2, double g3, double g4, double g7) {
  return {{"1g." + std::to_string(static_cast<int>(g1)) + "gb", 1, 7, g1},
          {"2g." + std::to_string(static_cast<int>(g2)) + "gb", 2, 7, g2},
          {"3g." + std::to_string(static_cast<int>(g3)) + "gb", 3, 7, g3},
          {"4g." + std::to_string(static_cast<int>(g4)) + "gb", 4, 7, g4},
          {"7g." + std::to_string(static_cast<int>(g7)) + "gb", 7, 7, g7}};
}

const std::map<std::string, std::vector<MigProfile>, std::less<>>& table() {
  static const std::map<std::string, std::vector<MigProfile>, std::less<>> t = {
      {"A100-40GB", seven(5, 10, 20, 20, 40)},
      {"A100-SXM4-40GB", seven(5, 10, 20, 20, 40)},
      {"A100-80GB", seven(10, 20, 40, 40, 80)},
      {"A100-80GB-PCIe", seven(10, 20, 40, 40, 80)},
      {"H100", seven(10, 20, 40, 40, 80)},
      {"H200", seven(18, 35, 71, 71, 141)},
      {"RTXPRO6000", {{"1g.24gb", 1, 4, 24}, {"2g.48gb", 2, 4, 48}, {"4g.96gb", 4, 4, 96}}},
  };
  return t;
}

}  // namespace

const std::vector<MigProfile>& mig_profiles(std::string_view gpu) {
  static const std::vector<MigProfile> kNone;
  const auto it = table().find(gpu);
  return it == table().end() ? kNone : it->second;
}

const MigProfile* find_mig(std::string_view gpu, std::string_view name) {
  for (const auto& p : mig_profiles(gpu))
    if (p.name == name || p.name.substr(0, p.name.find('.')) == name) return &p;
  return nullptr;
}

}  // namespace fleetsim
