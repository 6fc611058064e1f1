#include "sim/engine/colocation.hpp"

#include <algorithm>

namespace fleetsim {

Colocation::Colocation(const ClusterState& state) {
  int total = 0;
  offset_.reserve(static_cast<std::size_t>(state.node_count()));
  for (int n = 0; n < state.node_count(); ++n) {
    offset_.push_back(total);
    total += state.node_gpus(n);
  }
  occupants_.resize(static_cast<std::size_t>(total));
}

std::vector<JobId> Colocation::add(JobId id, const Allocation& a) {
  std::vector<JobId> touched;
  for (const auto& s : a.slots) {
    if (s.gpu < 0 || s.milli >= 1000) continue;  // a whole GPU is never shared
    auto& occ = occupants_[index(s)];
    touched.insert(touched.end(), occ.begin(), occ.end());
    occ.push_back(id);
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  return touched;
}

std::vector<JobId> Colocation::remove(JobId id, const Allocation& a) {
  std::vector<JobId> touched;
  for (const auto& s : a.slots) {
    if (s.gpu < 0 || s.milli >= 1000) continue;
    auto& occ = occupants_[index(s)];
    occ.erase(std::remove(occ.begin(), occ.end(), id), occ.end());
    touched.insert(touched.end(), occ.begin(), occ.end());
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  return touched;
}

}  // namespace fleetsim
