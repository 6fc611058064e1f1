#pragma once
// Placer: chooses GPUs for a job on the current cluster state. One file per policy, registered
// by name (scenario key scheduler.placement). Placement never changes state: the simulation
// allocates what the placer returns.
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "sim/cluster/cluster_state.hpp"
#include "workloads/base/options.hpp"
#include "workloads/base/registry.hpp"

namespace fleetsim {

class Placer {
 public:
  virtual ~Placer() = default;
  /// An allocation satisfying `r` (all GPUs, types, CPU/memory), or nullopt if none now.
  virtual std::optional<Allocation> place(const Request& r, const ClusterState& state) = 0;
  /// Called once before any placement with every request of the workload (trace order), for
  /// policies that optimise against the workload's request distribution (e.g. fgd).
  virtual void observe_workload(const std::vector<Request>& /*requests*/) {}
  /// Whether observe_workload matters to this placer: a streamed trace (TraceJobs) makes every
  /// request again only for placers that want them.
  virtual bool wants_workload() const { return false; }
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

/// The fitting node with the smallest score(n) (ties: lowest index) and its score, or {-1, {}}.
/// Only nodes that fit the whole request are scored (visited through the segment tree).
template <typename Score>
auto best_node(const Request& r, const ClusterState& s, Score score) -> std::pair<int, decltype(score(0))> {
  std::pair<int, decltype(score(0))> best{-1, {}};
  for (int n = s.first_fit_node(r); n >= 0; n = s.first_fit_node(r, n + 1)) {
    auto key = score(n);
    if (best.first < 0 || key < best.second) best = {n, std::move(key)};
  }
  return best;
}

/// All of r on node n (GPUs chosen by ClusterState::pick_on_node). Precondition: fits_node(n, r).
Allocation on_node(const Request& r, const ClusterState& s, int n);
/// r's single share on GPU g of node n (a placer that chose the GPU itself).
Allocation on_gpu(const Request& r, const ClusterState& s, int n, int g);

/// Fallback for whole-GPU jobs that may span nodes and fit no single node: spread over the nodes
/// with the most usable GPUs first. nullopt for single-node, fractional or 1-GPU requests.
std::optional<Allocation> spread_most_free_first(const Request& r, const ClusterState& s);

/// Shared building block: greedy spread over nodes in the given order, taking as many usable
/// whole GPUs per node as possible. Returns nullopt if the order cannot supply r.gpus.
std::optional<Allocation> spread_in_order(const Request& r, const ClusterState& state,
                                          const std::vector<int>& order);

}  // namespace fleetsim
