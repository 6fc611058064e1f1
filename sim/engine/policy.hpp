#pragma once
// Scheduler: decides which waiting jobs start, which running jobs are preempted, and when. One
// file per policy, registered by name (scenario key scheduler.policy, knobs in
// [scheduler.options]). The simulation calls schedule() after every batch of events at one
// instant (arrivals, completions, wake-ups the policy asked for); decisions happen on events
// only: policies with leases or rounds ask for a wake-up at the lease's end.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/job/job_model.hpp"
#include "sim/cluster/cluster_state.hpp"
#include "workloads/base/options.hpp"
#include "workloads/base/registry.hpp"
#include "workloads/jobs/job.hpp"

namespace fleetsim {

class ClusterState;

/// Execution state of one job, as policies see it.
struct JobProgress {
  bool running = false;
  double first_start_s = -1;      ///< first start (-1 = never started)
  double attained_gpu_s = 0;      ///< GPU-seconds of service received so far (2D-LAS "attained service")
  double executed_s = 0;          ///< wall seconds spent running (incl. restart overhead)
  double remaining_fraction = 1;  ///< share of the job's work still to do, in [0, 1]
  double expected_end_s = -1;     ///< when a running job will finish at its current speed (-1 if not running)
  int restarts = 0;               ///< times it restarted after a preemption
  double preempted_s = 0;         ///< wall seconds spent preempted (between preemption and restart)
  double gpus = 0;                ///< GPUs held now (shares summed; 0 when not running)
  double overhead_left_s = 0;     ///< restart overhead still to pay before a running job progresses, s
};

/// Whole GPUs of one node, for policies that place jobs themselves (Launcher::try_start_at).
struct NodeGpus {
  int node = 0;
  int gpus = 0;
};

/// What a policy may do and see. Implemented by the simulation core.
class Launcher {
 public:
  virtual ~Launcher() = default;
  /// Place and start (or restart) job `id` now if placement finds resources. Returns true when
  /// the job left the queue: it started, or it was dropped because no run time could be modelled
  /// (counted as skipped). false: it does not fit now.
  virtual bool try_start(JobId id) = 0;
  /// Like try_start, but placement may only use GPUs of cluster type `gpu_type` (an index of
  /// cluster().type_name(); intersected with the job's own allowed types). false if the job is not
  /// allowed there or does not fit there now. CPU-only jobs ignore the type.
  virtual bool try_start_on(JobId id, int gpu_type) = 0;
  /// Elastic jobs: like try_start, but on `gpus` whole GPUs instead of the trace's count (CPU and
  /// memory per GPU as in the trace), for policies that size jobs themselves (optimus). The job model
  /// times the job on what it got; a job stopped and started on another count keeps its share of
  /// work done. false for fractional-GPU and CPU-only jobs, gpus < 1, or when it does not fit now.
  virtual bool try_start_scaled(JobId id, int gpus) = 0;
  /// Elastic jobs placed by the policy itself (pollux): start job `id` on exactly these whole GPUs
  /// (free GPUs of each listed node; CPU and memory per GPU as in the trace). The job model times
  /// it on that placement. false when a node lacks the free GPUs (nothing is allocated then), for
  /// fractional-GPU and CPU-only jobs, or an empty list.
  virtual bool try_start_at(JobId id, const std::vector<NodeGpus>& where) = 0;
  /// Stop a running job now, releasing its resources and keeping its progress (checkpoint); it
  /// pays the checkpoint-restore cost when restarted. The policy keeps it in its own queue.
  virtual void preempt(JobId id) = 0;
  /// Scale the speed of a running job (1 = alone on its GPUs; < 1 when co-located).
  virtual void set_speed(JobId id, double speed) = 0;
  /// For policies that model a running job's progress themselves (pollux's adaptive batch sizes):
  /// from now on its work advances at `rate` (share of the whole job per second, > 0) once any
  /// restart overhead is paid, replacing the job model's run time and any set_speed factor.
  virtual void set_progress_rate(JobId id, double rate) = 0;
  /// Call schedule() again at time t (> now), even if no job arrives or ends then.
  virtual void wake_at(double t) = 0;

  virtual const JobSpec& job(JobId id) const = 0;
  virtual JobProgress progress(JobId id) const = 0;
  /// Total run time of the job alone on its best nominal placement (an oracle for SJF-like
  /// policies; from the job model), s; nullopt if the model cannot time it.
  virtual std::optional<double> estimated_runtime(JobId id) const = 0;
  /// The same on one cluster GPU type (index into cluster().type_name()); nullopt if the job may
  /// not use that type or the model cannot time it there. Heterogeneity-aware policies use it, so
  /// they see the very job model the simulation runs.
  virtual std::optional<double> estimated_runtime_on(JobId id, int gpu_type) const = 0;
  /// Elastic jobs: the run time alone on `gpus` whole GPUs of its first allowed type, packed onto
  /// full nodes (the last one partly), from the job model; nullopt if it cannot time that.
  virtual std::optional<double> estimated_runtime_scaled(JobId id, int gpus) const = 0;
  /// Elastic jobs: the most GPUs the job can use (its job model's limit, e.g. the pollux model's
  /// batch over the smallest per-GPU batch; the trace's count when the model sets none).
  virtual int max_gpus(JobId id) const = 0;
  /// The job model the simulation times jobs with (policies that co-design with a model, e.g. pollux
  /// with the pollux job model's applications, query it).
  virtual const JobModel& job_model() const = 0;
  /// Jobs running now (any order).
  virtual const std::vector<JobId>& running() const = 0;
  virtual const ClusterState& cluster() const = 0;
  /// Current simulated time, s.
  virtual double now() const = 0;
  /// True when no further job of any kind can start (all GPU capacity taken, no CPU-only jobs).
  virtual bool saturated() const = 0;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  /// A job arrived (in submit order; ties in trace order). The policy queues it.
  virtual void enqueue(JobId id, const Launcher& launcher) = 0;
  /// A running job finished.
  virtual void finished(JobId /*id*/) {}
  /// A running job was stopped by a failure, not by the policy (it no longer runs; its progress
  /// fell back to its last checkpoint). The policy takes it back; by default it is queued like an
  /// arrival. Policies that track running jobs override it.
  virtual void interrupted(JobId id, const Launcher& launcher) { enqueue(id, launcher); }
  /// Start (and preempt) whatever the policy wants now.
  virtual void schedule(Launcher& launcher) = 0;
  /// Jobs waiting (including preempted ones).
  virtual std::size_t queued() const = 0;
  /// Before the run: a policy that works only with some job models rejects the others here
  /// (InputError naming `file`, `line` and scheduler.policy); nothing may throw during the run.
  virtual void check(const JobModel& /*model*/, const std::string& /*model_name*/,
                     const std::string& /*file*/, long /*line*/) const {}
};

struct SchedulerParams {
  std::uint64_t seed = 1;
  const Options* options = nullptr;  ///< never null when built by the simulation
  /// Convenience: the options (an empty set if none were given).
  const Options& opts() const {
    static const Options kEmpty;
    return options != nullptr ? *options : kEmpty;
  }
};

using SchedulerRegistry = Registry<Scheduler, const SchedulerParams&>;
SchedulerRegistry& schedulers();

struct SchedulerRegistrar {
  SchedulerRegistrar(std::string name, std::string description, SchedulerRegistry::Factory f) {
    schedulers().add(std::move(name), std::move(description), std::move(f));
  }
};

}  // namespace fleetsim
