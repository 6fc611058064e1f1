#pragma once
// A multi-GPU job's ring and its iteration split, as both fabric-sharing fidelities (network,
// fabric) see it: its GPU hosts in NCCL ring order, and the compute share phi of an iteration (the
// job model's iteration shape, or the [execution] defaults timed by the collective model).
#include <optional>
#include <vector>

#include "sim/engine/hooks.hpp"
#include "sim/platform/cluster_spec.hpp"

namespace simgrid::s4u {
class Host;
}  // namespace simgrid::s4u

namespace fleetsim {

struct NetworkFidelityConfig;

struct JobRing {
  std::vector<simgrid::s4u::Host*> hosts;  ///< ring order
  double phi = 1;                          ///< compute share of an iteration
  double iteration_s = 0;                  ///< one iteration alone, s (compute + exposed all-reduce)
};

/// The ring of job `id` on its allocation; nullopt when it has no all-reduce to model (fewer than
/// two GPUs, an unknown GPU, no run time, or no communication).
std::optional<JobRing> job_ring(JobClock& clock, const Platform& platform, const ClusterSpec& cluster,
                                const NetworkFidelityConfig& config, JobId id, const PlacementSummary& where);

}  // namespace fleetsim
