#pragma once
// The platform a Kineto replay runs on, and its collectives' data transfers as SimGrid parallel
// tasks on it (needs --cfg=host/model:ptask_L07, set by simulate()).
//
// Platform: fleetsim::build_platform() of a ClusterSpec. By default the traces imply it: world size
// W -> ceil(W / g) nodes of g = min(W, 8) GPUs of the traced type (catalog; A100-80GB when the
// device is unknown), intra-node links of the GPU's NVLink bandwidth per direction (PCIe 4.0 x16,
// 256 Gbit/s, without NVLink), one 200 Gbit/s NIC per node (not in the trace: assumed), leaf-spine.
// `--scenario FILE` takes the [cluster] section of a scenario file instead. Rank r runs on the r-th
// GPU host in node order (homogeneous nodes: node r / g, GPU r % g).
//
// Collectives: the kernels of one collective call (one per traced rank, matched by process group
// and sequence) form a group; its transfer is ONE ptask over the process group's GPU hosts in ring
// order (bytes[i][i+1]) that starts when the last traced rank arrives. Its bytes are calibrated so
// that alone on the *as-traced* idle platform it takes the traced transfer time D (the shortest
// matched duration, or the kernel's duration when unmatched): bytes = (D - route latency) /
// s_per_byte (sim/platform/ring.hpp). A what-if network (network.nic_gbps, intra_node_gbps) then
// re-rates the platform's links, and concurrent collectives share links: SimGrid re-times the
// transfers. Each rank's kernel ends `tail` after the transfer (its measured end minus the last
// arrival plus D: what clock skew and the kernel's own epilogue add), so the baseline replays
// every collective exactly. Where the ranks' clocks disagree (a kernel ended before the last rank's
// started) each kernel moves the data on its own from its own start, with the same D. Single-rank groups and
// transfers not longer than the route latency are timed delays.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <simgrid/s4u/Exec.hpp>

#include "sim/platform/cluster_spec.hpp"
#include "sim/replay/exec_graph.hpp"

namespace simgrid::s4u {
class Host;
}

namespace fleetsim::replay {

struct WhatIf;

/// The modelled cluster of a replay.
struct ReplayCluster {
  ClusterSpec traced;   ///< as traced: implied by the traces, or a scenario's [cluster]
  ClusterSpec cluster;  ///< simulated: `traced` with the what-if network.* values
  std::string source;   ///< "trace" or the scenario file
  int ranks = 1;        ///< GPUs used (world size)
  std::vector<std::string> notes;
};

/// The platform for the graph's world size: from the traces (`source_gpu`: the traced GPU's catalog
/// name, "" if unknown) or, when w.scenario is set, from that file. Throws InputError naming the
/// scenario file, line and key on a bad scenario, or when it has fewer GPUs than the world size.
ReplayCluster replay_cluster(const ExecGraph& g, const std::string& source_gpu, const WhatIf& w);

/// Builds the platform into the running engine and plans the collective transfers.
class ReplayNetwork {
 public:
  /// `factor`: per-vertex duration multipliers (Retiming::factor; scales D and the tails).
  ReplayNetwork(const ExecGraph& g, const ReplayCluster& c, const std::vector<double>& factor);

  simgrid::s4u::Host* controller() const { return controller_; }
  /// Group of collective vertex v (-1: not a collective). A collective's end waits for its group's
  /// transfer (plus its tail) instead of its own body and its collective edges' lags.
  long group_of(std::size_t v) const { return group_of_[v]; }
  bool waits(std::size_t v) const { return group_of_[v] >= 0; }

  struct Arrival {
    bool last = false;                ///< the transfer starts now
    simgrid::s4u::ExecPtr ptask;      ///< the transfer's ptask, or null when timed
    std::optional<double> timed_end;  ///< end of a timed transfer
  };
  /// Member v of group k started at t.
  Arrival arrive(long k, std::size_t v, double t);
  /// Members of group k with the lower bound of their end when the transfer ended at t.
  std::vector<std::pair<std::size_t, double>> transfer_done(long k, double t) const;
  /// The member whose arrival started group k's transfer.
  std::size_t last_arrival(long k) const { return groups_[static_cast<std::size_t>(k)].last; }
  long groups() const { return static_cast<long>(groups_.size()); }
  long ptasks() const { return ptasks_; }
  std::vector<std::string> notes() const;

 private:
  struct Group {
    std::vector<std::size_t> members;
    std::vector<double> tail;  ///< per member, s (scaled by factor)
    double transfer = 0;       ///< traced transfer time x factor, s
    long ring = -1;            ///< index into rings_
    double bytes = 0;          ///< per ring flow (0: timed)
    int pending = 0;           ///< members not arrived yet
    std::size_t last = 0;
  };
  struct Ring {
    std::vector<simgrid::s4u::Host*> hosts;
    double s_per_byte = 0, latency = 0;
  };
  void add_group(std::vector<std::size_t> members, double t_last, double d,
                 const std::vector<double>& factor);
  long ring_for(const std::vector<int>& ranks);
  std::vector<int> group_ranks(const Node& n) const;

  const ExecGraph& g_;
  std::vector<std::vector<simgrid::s4u::Host*>> hosts_;  ///< per node, its GPUs
  std::vector<simgrid::s4u::Host*> gpu_of_rank_;
  std::vector<std::pair<int, int>> where_;  ///< rank -> (node, local GPU)
  simgrid::s4u::Host* controller_ = nullptr;
  std::vector<long> group_of_;
  std::vector<Group> groups_;
  std::vector<Ring> rings_;
  std::map<std::vector<int>, long> ring_index_;  ///< sorted ranks -> ring
  long ptasks_ = 0, timed_ = 0, network_groups_ = 0, split_ = 0;
};

}  // namespace fleetsim::replay
