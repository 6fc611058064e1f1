#pragma once
// NetworkFidelity: the execution hook of [execution] fidelity = "network" (see network_fidelity.hpp
// for the model and its error). Attached to the engine through ExecutionHook: a multi-GPU job's
// work is cut into chunks, each a compute phase the engine times followed by its all-reduce as a
// SimGrid ptask on the fabric; the engine knows nothing of chunks or ptasks.
#include <cstdint>
#include <string>
#include <vector>

#include <simgrid/forward.h>

#include "sim/engine/hooks.hpp"
#include "sim/network/network_fidelity.hpp"
#include "sim/platform/cluster_spec.hpp"

#include <optional>

#include "models/collective/max_min.hpp"
#include "workloads/base/options.hpp"

namespace fleetsim {

struct NetworkFidelityConfig {
  double grad_bytes = 1e9;           ///< bytes all-reduced per iteration (job models without a shape)
  double iteration_compute_s = 0.5;  ///< compute per iteration, s (likewise)
  int chunks_shared = 16;            ///< chunks per job while it shares links
  double chunk_jitter = 0.5;         ///< shared chunks' lengths spread uniformly by +- this share
  IdleShare sharing = IdleShare::kJointCycle;  ///< fabric: how sharers' idle time is shared
  double fabric_overlap = 0;  ///< fabric: extra overlap of all-reduces (from(): the sharing's default)
  int fabric_draws = MaxMinSolver::kDraws;  ///< fabric, joint sharing: draws of sharers' presences a solve
  FabricAllocation allocation = FabricAllocation::kFairBottleneck;  ///< fabric: the all-talking allocation
  Headroom headroom =
      Headroom::kDistribution;  ///< fabric: how a link's room above a ring's alone rate counts

  /// From the [execution] keys (declared in network_hook.cpp); nullopt unless fidelity = `fidelity`
  /// ("network" or "fabric", which share these keys).
  static std::optional<NetworkFidelityConfig> from(const Options& execution,
                                                   const std::string& fidelity = "network");
};

/// A node the network fidelity switched off in SimGrid (failure or drain) and back on.
struct NodeSwitch {
  int node = 0;
  double off_s = 0;
  double on_s = -1;       ///< -1: still off at the end
  bool seen_off = false;  ///< SimGrid reported every host of the node off after turn_off()
};

/// A leaf switch the network fidelity switched off (a domain failure) and back on: its uplinks.
struct LeafSwitch {
  int leaf = 0;
  double off_s = 0;
  double on_s = -1;       ///< -1: still off at the end
  int links = 0;          ///< uplink directions switched off (leaf-spine: 2; rail-optimized: 2 per rail)
  bool seen_off = false;  ///< SimGrid reported every one of them off after turn_off()
};

/// As a NodeTenant of the failure hook, it turns a failed or drained node's SimGrid GPU hosts and NIC
/// links off (Host::turn_off, Link::turn_off) when the node leaves service, after its jobs were
/// interrupted (their ptasks cancelled in on_leave), and on again when it is healthy. The node's CPU
/// host stays on (it carries no ptasks, and node 0's runs the controller actor).
class NetworkFidelity final : public ExecutionHook, public NodeTenant {
 public:
  NetworkFidelity(const ClusterSpec& cluster, NetworkFidelityConfig config);

  bool needs_ptasks() const override { return true; }
  void attach(JobClock& clock, const Platform& platform, std::size_t jobs) override;
  void on_start(JobId id, const PlacementSummary& where) override;
  bool on_phase_end(JobId id) override;
  void on_leave(JobId id) override;
  double held_progress(JobId id) const override;
  const std::vector<simgrid::s4u::ExecPtr>* activities() const override { return &rings_.ptasks(); }
  JobId activity_done(std::size_t k) override { return static_cast<JobId>(rings_.complete(k)); }
  void resume(JobId id) override;
  void on_end(double time_s) override { end_s_ = time_s; }
  int node_lost(int node, long event) override;
  void capacity_back() override {}
  void node_back(int node) override;
  /// A leaf domain failed: its uplinks to the spine (both directions) are switched off
  /// (Link::turn_off) until the first of its nodes comes back. Fat-trees: none (no leaf uplink).
  void domain_lost(int leaf) override;
  /// Every node switched off and on in SimGrid, in order.
  const std::vector<NodeSwitch>& node_switches() const { return switches_; }
  /// Every leaf whose uplinks were switched off and on, in order.
  const std::vector<LeafSwitch>& leaf_switches() const { return leaf_switches_; }

  /// Link utilization over the run (after it ended).
  NetworkReport report() const { return rings_.report(end_s_, 200); }

 private:
  /// A job's chunk state: its work is a share phi of compute, progressing in the engine, and 1 - phi
  /// of all-reduce, credited when a chunk's ptask finishes.
  struct Chunks {
    bool active = false;        ///< the job's ring is on the fabric
    double phi = 1;             ///< compute share of the work
    double iteration = 1;       ///< one iteration, as a fraction of the work
    double chunk_from = 0;      ///< `done` when the current chunk began
    double comm = 0;            ///< work fraction the in-flight all-reduce credits
    double comm_since = 0;      ///< its start
    double owed = 0;            ///< all-reduce work left by a preemption, paid with the next chunk
    double left_done = 0;       ///< `done` when it last left the fabric
    double shared_len = 0;      ///< the current chunk's length while shared (jittered)
    std::uint64_t planned = 0;  ///< chunks planned so far (the jitter's stream)
  };
  void plan_chunk(JobId id);
  /// Draws the job's next shared chunk length (advances its jitter stream, Chunks::planned).
  double draw_shared_length(JobId id);
  void cut_chunk(JobId id);
  void next_chunk(JobId id);
  Chunks& of(JobId id) { return jobs_[static_cast<std::size_t>(id)]; }

  const ClusterSpec& cluster_;
  NetworkFidelityConfig config_;
  JobClock* clock_ = nullptr;
  const Platform* platform_ = nullptr;
  RingPtasks rings_;
  std::vector<Chunks> jobs_;
  double end_s_ = 0;
  std::vector<NodeSwitch> switches_;
  std::vector<int> open_switch_;  ///< per node: its switch in progress (-1: on)
  std::vector<LeafSwitch> leaf_switches_;
  std::vector<int> open_leaf_;  ///< per leaf: its switch in progress (-1: on)
  /// Leaf `leaf`'s uplinks, both directions (leaf-spine: one link; rail-optimized: one per rail).
  std::vector<simgrid::s4u::Link*> uplinks(int leaf) const;
};

}  // namespace fleetsim
