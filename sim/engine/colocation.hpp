#pragma once
// Colocation: which running jobs share each GPU (fractional gpu_milli requests, or policies that
// pack jobs), so the core can slow co-located jobs down. A job's co-location speed is the minimum
// over its GPUs of the product, over the other jobs on that GPU, of the pairwise speed factor
// (from the job model's measured pair rates, e.g. Gavel's table, or a configured factor).
// Occupants with negative ids are not jobs but holders of reserved shares (ClusterControl::
// reserve_shared, e.g. an MPS inference replica): they slow the jobs beside them and are never re-timed.
#include <vector>

#include "sim/cluster/cluster_state.hpp"
#include "sim/engine/policy.hpp"

namespace fleetsim {

class Colocation {
 public:
  explicit Colocation(const ClusterState& state);

  /// Register a started job's GPUs. Returns the other jobs that now share a GPU with it.
  std::vector<JobId> add(JobId id, const Allocation& a);
  /// Unregister a job leaving its GPUs. Returns the jobs that shared a GPU with it.
  std::vector<JobId> remove(JobId id, const Allocation& a);

  /// Co-location speed of job `id` on allocation `a`; pair(id, other) gives one pair's factor.
  template <typename Pair>
  double speed(JobId id, const Allocation& a, Pair pair) const {
    double worst = 1.0;
    for (const auto& s : a.slots) {
      if (s.gpu < 0) continue;
      double on_gpu = 1.0;
      for (JobId other : occupants_[index(s)])
        if (other != id) on_gpu *= pair(id, other);
      worst = std::min(worst, on_gpu);
    }
    return worst;
  }

 private:
  std::size_t index(const Slot& s) const { return static_cast<std::size_t>(offset_[s.node] + s.gpu); }
  std::vector<int> offset_;                    ///< first global GPU index of each node
  std::vector<std::vector<JobId>> occupants_;  ///< jobs on each GPU
};

}  // namespace fleetsim
