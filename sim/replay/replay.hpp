#pragma once
// Replay of an execution graph on SimGrid, with what-if knobs, and the per-step analysis.
//
// One controller actor drives the graph in simulated time (sleep_until for timed starts, as
// sim/core does) on the modelled platform (sim/replay/replay_network.hpp: GPU hosts, NVLink, NICs, fabric
// built by fleetsim::build_platform). Kernels, memcpy/memset and CPU runtime calls are timed delays
// of their (re-timed) durations: streams of one GPU do not share it, as their measured durations
// already include any contention. Collectives move their data as SimGrid parallel tasks over their
// process group's GPU hosts (ring), so a what-if network and concurrent collectives re-time them
// through SimGrid's flows. A node starts when all its start constraints are met (dependency time +
// lag) and ends when its body is done and its end constraints are met. One engine per process.
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/platform/cluster_spec.hpp"
#include "sim/replay/exec_graph.hpp"

namespace fleetsim {
struct GpuSpec;
}
namespace fleetsim::replay {
struct ReplayCluster;
}

namespace fleetsim::replay {

struct WhatIf {
  std::string gpu;         ///< --gpu TYPE ("" = as traced)
  std::string source_gpu;  ///< the traced GPU when the trace's device name is not in the catalog
  std::string scenario;    ///< --scenario FILE: its [cluster] is the platform ("" = implied by the traces)
  std::optional<ClusterSpec> cluster;  ///< that [cluster], loaded by the caller (sim/app/scenario.hpp)
  double nic_gbps = 0;                 ///< network.nic_gbps (0 = as traced)
  double intra_node_gbps = 0;          ///< network.intra_node_gbps (0 = as traced)
  std::array<double, kKernelClasses> speedup{1, 1, 1, 1, 1, 1, 1, 1};  ///< duration / speedup; inf = removed
  double launch_overhead_scale = 1;  ///< scales CPU call durations and the gaps between them

  bool baseline() const;
  /// Apply one --set KEY=VALUE; throws InputError listing the valid keys.
  void set(const std::string& key_value);
  std::map<std::string, std::string> describe() const;
};

/// Per-node duration multipliers and what they were derived from.
struct Retiming {
  std::vector<double> factor;  ///< per vertex
  /// Per vertex (empty: all 1): scales the measured host gap before a CPU call (its binding
  /// thread-order lag) on top of launch_overhead_scale; 0 removes the gap (fleetsim diagnose: input
  /// stalls hidden by prefetch, launches captured in a CUDA graph).
  std::vector<double> gap_scale;
  /// Per vertex (empty: none): the CPU call no longer waits for the GPU work it synchronised with
  /// (fleetsim diagnose: a synchronous host-to-device copy made asynchronous).
  std::vector<char> unsync;
  std::string source_gpu, target_gpu;
  long by_spec_ratio = 0, by_kernel_model = 0;
  std::vector<std::string> notes;
};
Retiming retime(const ExecGraph& g, const WhatIf& w);

/// What determined a node's start or end: a dependency (src >= 0) or, src = -1, nothing (anchored
/// start) / its own body (end).
struct Cause {
  long src = -1;
  EdgeKind kind = EdgeKind::thread_order;
  bool from_start = false;
};

struct Times {
  std::vector<double> start, end;       ///< per vertex, seconds
  std::vector<Cause> start_by, end_by;  ///< per vertex
};
/// Measured times of the graph (the trace itself).
Times measured_times(const ExecGraph& g);

struct ReplayRun {
  Times times;
  double sim_seconds = 0;  ///< simulated horizon
  long executions = 0;     ///< SimGrid activities started (collective ptasks)
  std::vector<std::string> notes;
};
/// Replay on SimGrid on the platform `c` (creates the engine: once per process). Throws
/// std::runtime_error on a cycle.
ReplayRun simulate(const ExecGraph& g, const Retiming& r, const WhatIf& w, const ReplayCluster& c);

struct Breakdown {
  double span = 0;           ///< step time, s
  double compute = 0;        ///< GPU busy with compute kernels (union), s
  double communication = 0;  ///< GPU busy with collectives (union), s
  double memory = 0;         ///< memcpy + memset (union), s
  double idle = 0;           ///< no GPU activity, s
  double overlap = 0;        ///< communication overlapped with compute, s
  double exposed_communication = 0;
  std::map<std::string, double> critical_path;  ///< composition of the critical path, s
};

struct StepResult {
  int rank = 0;
  std::string name;
  double measured = 0, predicted = 0;          ///< step time, s
  double measured_end = 0, predicted_end = 0;  ///< when the step ends, s from the job's first event
  Breakdown measured_breakdown, predicted_breakdown;
};

/// Step times and breakdowns for `times` (measured_times or a replay).
std::vector<StepResult> analyse(const ExecGraph& g, const Times& measured, const Times& predicted);

}  // namespace fleetsim::replay
