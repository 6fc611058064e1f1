#pragma once
// FailureProcess: the stream of node failures and repairs, independent of the jobs (so two runs
// that differ only in policy see the same failures). Either generated — a renewal process per node
// (the next failure is drawn after the repair; exponential or Weibull inter-failure times at the
// node's rate, lemons at a multiple of it, the component drawn by its share of the rate) and per
// correlated domain (a leaf: all nodes under it), repairs log-normal or empirical with an optional
// manual second stage — or replayed from a fault trace mapped onto the cluster's nodes. Seeded:
// one random stream consumed in event order.
#include <cstdint>
#include <queue>
#include <string>
#include <vector>

#include "sim/failures/failure_config.hpp"
#include "workloads/faults/fault_trace.hpp"

namespace fleetsim {

class ClusterState;

/// One failure as it happens: nodes go down at `time_s` until `repaired_s`.
struct FailureEvent {
  double time_s = 0;
  double repaired_s = 0;
  std::vector<int> nodes;  ///< one node, or every node of a domain
  std::string component;
  int domain = -1;  ///< leaf of a domain failure (-1: a node failure)
};

class FailureProcess {
 public:
  /// Generated from `config`, or replayed from `trace` (non-null) mapped onto the cluster.
  FailureProcess(const FailureConfig& config, const ClusterState& cluster, const FaultTrace* trace);

  /// Time of the next failure (inf: none).
  double next_s() const;
  /// The next failure; draws the failing unit's next one when it is a generated process.
  FailureEvent pop();

  /// A node's mean failure rate, 1/s (incl. lemons on average and its share of domain failures): the
  /// rate a job's MTTF is computed from (M = 1 / (nodes x rate)).
  double node_rate_per_s() const { return mean_node_rate_; }
  /// How trace nodes were mapped (empty for a generated process).
  const std::string& mapping_note() const { return mapping_note_; }
  /// Trace faults replayed so far.
  long replayed() const { return replayed_; }

 private:
  struct Pending {
    double time_s;
    long seq;
    int unit;  ///< node index, or nodes + domain index, or trace fault index
    bool operator>(const Pending& o) const { return time_s != o.time_s ? time_s > o.time_s : seq > o.seq; }
  };
  double uniform();
  double normal();
  double interarrival(double rate);
  double repair(const RepairConfig& r);
  int pick_component(int node);
  void arm(int unit, double from_s);

  const FailureConfig& config_;
  const FaultTrace* trace_;
  std::uint64_t state_;
  std::vector<std::vector<int>> domain_nodes_;
  std::vector<double> node_factor_;  ///< 1, or the lemon multiplier
  std::vector<int> trace_node_;      ///< trace node index -> cluster node
  std::vector<int> fault_node_;      ///< trace fault index -> cluster node
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> queue_;
  long seq_ = 0;
  long replayed_ = 0;
  int nodes_ = 0;
  double mean_node_rate_ = 0;
  std::string mapping_note_;
};

}  // namespace fleetsim
