#pragma once
// FailureHook: hardware failures, repair and checkpointing, attached to the engine as a ClusterHook
// (sim/engine/hooks.hpp); the engine does not know it is there.
//
// Model. Failures come from a FailureProcess (generated or a replayed trace). A failure takes its
// nodes down until repaired; every running job with anything on them is interrupted: its progress
// falls back to its last completed checkpoint, it goes back to the scheduler, and when it next
// starts it first pays detection_s + restart_s + restore (restore_s, plus its state over
// storage_gb_per_s_per_node x its nodes). Checkpoints: a job that checkpoints every tau seconds of
// work and writes for delta seconds runs (tau + delta) / tau times as long (its run time is
// stretched when it starts); checkpoint k completes when its work since that start reaches
// k x tau (so a failure loses the work since then, up to tau + delta of wall time). tau is fixed, or
// "auto": Daly's optimum for the job's write time and MTTF M = 1 / (nodes x per-node rate). A job
// preempted by its policy keeps its progress, as without failures.
//
// Hot spares (spare_nodes = S): the cluster's last S nodes start out of service. When a failure takes
// a node in service down, a healthy spare joins at once (spares_used); a repaired node becomes a
// spare again while fewer than S are held. Planned maintenance: every maintenance_interval_h a window
// takes the next maintenance_nodes healthy nodes in service (rolling in node order) out for
// maintenance_duration_s; their jobs checkpoint first (no lost work) and pay restart_s + restore.
//
// Tenants (NodeTenant, hooks.hpp: a service's replicas, the network fidelity's hosts), as added to
// the engine, hear of every node a failure or window takes out of service, before it goes down, and
// of capacity coming back (after a failure's spares joined, a repair, a window's end); failures.csv
// counts the replicas hit and, once the services ran, the requests they re-routed
// (NodeTenant::requests_rerouted).
#include <limits>
#include <map>
#include <memory>
#include <ostream>
#include <queue>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/hooks.hpp"
#include "sim/failures/failure_config.hpp"
#include "sim/failures/failure_process.hpp"

namespace fleetsim {

class FailureHook final : public ClusterHook {
 public:
  /// Reads the fault trace, if any (errors name the trace file and line).
  explicit FailureHook(FailureConfig config);
  ~FailureHook() override;

  void attach(ClusterControl& control, std::size_t jobs) override;
  double next_event_s() const override;
  void on_event() override;
  void on_start(JobId id, const PlacementSummary& where) override;
  void on_leave(JobId id) override;
  void on_end(double time_s) override;
  bool takes_nodes() const override { return true; }
  bool keeps_finished_jobs() const override { return true; }

  /// The checkpoint interval (compute s between checkpoints; 0 = none) and write time of a job on
  /// `nodes` nodes and `gpus` GPUs.
  double interval_s(int nodes, double write_s) const;
  double write_s(int nodes, double gpus) const;

  /// failures.csv: every failure and repair.
  void write_csv(std::ostream& out) const;
  /// failure_jobs.csv: per job hit by a failure, its interruptions, losses and ETTR.
  void write_jobs_csv(std::ostream& out) const;
  /// The summary.json "failures" block.
  nlohmann::ordered_json summary() const;
  /// Set when a trace names more nodes than the cluster has (printed as a warning by the runner).
  const std::string& mapping_note() const;

 private:
  struct JobState {
    double seg_start = 0;      ///< progress when it (re)started
    double ckpt_fraction = 0;  ///< progress per checkpoint cycle (0: no checkpoints)
    double share = 0;          ///< share of its running time spent writing checkpoints
    double interval_s = 0;     ///< last checkpoint interval used
    int interruptions = 0;
    double redone_gpu_s = 0;
    double restart_gpu_s = 0;
    double ckpt_gpu_s = 0;
    bool started = false;  ///< it ever started (a job skipped at arrival has no record to read)
  };
  struct Row {
    double time_s;
    std::string event;  ///< failure | repair
    int node;
    int nodes;  ///< nodes the event covers (a domain: all under its leaf)
    std::string component;
    int jobs_hit;
    double gpu_h_lost;
    double until_s;
    int replicas_hit = 0;
  };
  struct Repair {
    double time_s;
    long seq;
    int node;
    bool operator>(const Repair& o) const { return time_s != o.time_s ? time_s > o.time_s : seq > o.seq; }
  };
  void fail(const FailureEvent& e);
  void repair(int node);
  /// Interrupts a job: its progress falls back to its last checkpoint (`planned`: one taken now) and
  /// it pays the restart overhead when it next starts. Returns the GPU-s lost.
  double interrupt(JobId id, bool planned = false);
  void count_down(int delta);
  /// Out of service: failed, in a maintenance window, or a held spare.
  bool out(int node) const;
  /// Tells the engine when `node` changed between in and out of service (`was_out`: before the change).
  void sync(int node, bool was_out);
  void open_window();
  void close_window(int node);
  /// Tenants' replicas hit by `nodes` leaving service for the row about to be added.
  int tell_lost(const std::vector<int>& nodes);
  void tell_back();

  // Hot spares and maintenance windows.
  std::vector<char> spare_;   ///< per node: held as a spare
  std::vector<int> drained_;  ///< per node: maintenance windows holding it
  std::vector<int> spares_;   ///< healthy held spares, in the order they joined the pool
  long spares_used_ = 0, failures_without_spare_ = 0;
  double next_window_s_ = std::numeric_limits<double>::infinity();
  int window_cursor_ = 0;  ///< next node a window considers
  long windows_ = 0, planned_interruptions_ = 0;
  double drained_node_s_ = 0;
  std::priority_queue<Repair, std::vector<Repair>, std::greater<>> window_ends_;

  FailureConfig config_;
  std::unique_ptr<FaultTrace> trace_;
  std::unique_ptr<FailureProcess> process_;
  ClusterControl* control_ = nullptr;
  std::vector<JobState> jobs_;
  std::vector<int> down_;  ///< per node: failures not yet repaired
  std::priority_queue<Repair, std::vector<Repair>, std::greater<>> repairs_;
  std::vector<Row> rows_;
  std::vector<NodeTenant*> tenants_;  ///< the engine's, at attach()
  long replicas_hit_ = 0;
  /// Requests the tenants re-routed because of event (row) k (known once their work is done).
  long rerouted(std::size_t k) const;
  std::map<std::string, long> by_component_;
  std::map<int, long> interruptions_by_gpus_;
  long seq_ = 0;
  long failures_ = 0;
  JobId leaving_ = -1;  ///< the job being interrupted, whose progress falls back to leaving_saved_
  double leaving_saved_ = 0;
  int nodes_down_ = 0;
  int peak_down_ = 0;
  double down_area_ = 0;  ///< node-seconds down
  double last_change_ = 0;
  double end_s_ = 0;
};

}  // namespace fleetsim
