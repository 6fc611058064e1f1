#pragma once
// GPU fragmentation measure of FGD (Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing
// Workloads with Fragmentation Gradient Descent", USENIX ATC'23), as pure functions on
// free resources. No SimGrid.
//
// For a node n and a task class m, F_n(m) is the free GPU capacity (thousandths) of n that m
// cannot use:
//   - m cannot run on n at all (GPU type not allowed, CPU or memory short, fewer than m.gpus GPUs
//     with at least m.milli free): every free thousandth of n's GPUs;
//   - m can run on n: the free thousandths of each GPU whose free share is below m's share per
//     GPU (for a whole-GPU task: every partially used GPU);
//   - m asks for no GPU: every free thousandth (m uses none of it), as in the authors' simulator.
// The node's expected fragmentation is F_n(M) = sum_m p_m F_n(m), p_m the popularity of class m
// in the target workload; the cluster's is the sum over nodes, also given as a share of the free
// GPU capacity (the paper's "fragmentation rate").
//
// Classes: the workload's GPU requests grouped by (GPUs, share per GPU, allowed GPU types); a
// class's CPU and memory request is the mean of its members' (the paper's simulator also keys on
// CPU; averaging keeps the class count at the trace's handful of GPU shapes). Weights are kept as
// integer counts so that sums are exact and comparisons between nodes never depend on rounding.
#include <vector>

#include "sim/cluster/cluster_state.hpp"

namespace fleetsim {

struct TaskClass {
  int gpus = 1;
  int milli = 1000;
  TypeMask types = ~TypeMask{0};
  double cpu_milli = 0;   ///< mean CPU request of the class
  double memory_mib = 0;  ///< mean memory request of the class
  long long count = 0;    ///< members in the workload (popularity p_m = count / total)
};

struct WorkloadDistribution {
  std::vector<TaskClass> classes;  ///< most popular first (ties: fewer GPUs, smaller share)
  long long total = 0;             ///< sum of counts
  bool empty() const { return total == 0; }
  /// Classes of the GPU requests among `requests` (CPU-only requests are left out).
  static WorkloadDistribution from_requests(const std::vector<Request>& requests);
};

/// A node's free resources, copied so that a hypothetical placement can be evaluated on it.
struct NodeFree {
  int type = -1;              ///< GPU type index (-1: no GPUs)
  std::vector<int> gpu_free;  ///< free thousandths per GPU
  double cpu_free = 0;
  double mem_free = 0;
  bool operator==(const NodeFree&) const = default;
};

NodeFree node_free(const ClusterState& state, int n);

/// F_n(m) in thousandths of a GPU.
long long task_fragmentation(const NodeFree& node, const TaskClass& m);
/// sum_m count_m * F_n(m) = total * F_n(M): exact, for comparing nodes and placements.
long long weighted_node_fragmentation(const NodeFree& node, const WorkloadDistribution& dist);
/// F_n(M) in thousandths of a GPU (0 for an empty distribution).
double node_fragmentation(const NodeFree& node, const WorkloadDistribution& dist);

struct ClusterFragmentation {
  double milli = 0;          ///< sum over nodes of F_n(M), thousandths of a GPU
  long long free_milli = 0;  ///< free GPU capacity, thousandths
  /// Fragmented share of the free GPU capacity, in [0, 1] (0 when nothing is free).
  double share() const { return free_milli > 0 ? milli / static_cast<double>(free_milli) : 0.0; }
};

ClusterFragmentation cluster_fragmentation(const ClusterState& state, const WorkloadDistribution& dist);

}  // namespace fleetsim
