#pragma once
// Placer: chooses GPUs for a job on the current cluster state. One file per policy, registered
// by name (scenario key scheduler.placement). Placement never changes state: the simulation
// allocates what the placer returns.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "sim/core/cluster_state.hpp"
#include "workloads/options.hpp"
#include "workloads/registry.hpp"

namespace fleetsim {

class Placer {
 public:
  virtual ~Placer() = default;
  /// An allocation satisfying `r` (all GPUs, types, CPU/memory), or nullopt if none now.
  virtual std::optional<Allocation> place(const Request& r, const ClusterState& state) = 0;
  /// Called once before any placement with every request of the workload (trace order), for
  /// policies that optimise against the workload's request distribution (e.g. fgd).
  virtual void observe_workload(const std::vector<Request>& /*requests*/) {}
};

struct PlacerParams {
  std::uint64_t seed = 1;
  const Options* options = nullptr;  ///< [scheduler.placement_options]; may be null
  const Options& opts() const {
    static const Options kEmpty;
    return options != nullptr ? *options : kEmpty;
  }
};

using PlacerRegistry = Registry<Placer, const PlacerParams&>;
PlacerRegistry& placers();

struct PlacerRegistrar {
  PlacerRegistrar(std::string name, std::string description, PlacerRegistry::Factory f) {
    placers().add(std::move(name), std::move(description), std::move(f));
  }
};

/// Shared building block: greedy spread over nodes in the given order, taking as many usable
/// whole GPUs per node as possible. Returns nullopt if the order cannot supply r.gpus.
std::optional<Allocation> spread_in_order(const Request& r, const ClusterState& state,
                                          const std::vector<int>& order);

}  // namespace fleetsim
