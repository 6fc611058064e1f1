#pragma once
// An adaptive job as Pollux trains it (Qiao et al., OSDI'21; the Job class of its artifact's simulator,
// petuum/adaptdl branch osdi21-artifact, simulator/simulator.py): the job's agent
//   - observes the step time of every configuration it runs (placement shape x atomic batch) and
//     refits its performance model (models/job/pollux_goodput.hpp) on a new one;
//   - keeps its current gradient statistics;
//   - picks its global batch (atomic batch x accumulation steps) to maximise goodput on its placement,
//     at every reallocation, at every epoch boundary and after every training interval;
//   - trains in epochs of statistically efficient progress: one step at batch B during epoch e makes
//     gain(B, e) steps of progress at the application's smallest batch; it is done after its
//     application's epochs.
// Like the artifact, crossing an epoch boundary takes a whole number of seconds (rounded half to
// even), and the job's true step time is the application's measured one (PolluxApplication).
// Pure: no SimGrid.
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "models/job/pollux_app.hpp"
#include "models/job/pollux_goodput.hpp"

namespace fleetsim::pollux {

class AdaptiveJob {
 public:
  /// `fixed_batch` > 0 keeps the job at that global batch (the artifact's target_batch_size, ncf);
  /// 0 lets it adapt.
  AdaptiveJob(const PolluxApplication& app, long fixed_batch);

  /// Moves the job to `placement` (GPUs per node, in node order; empty = no GPUs) and picks its batch.
  void reallocate(const std::vector<int>& placement);
  /// Trains for up to `seconds` of work on the current placement. Returns the seconds it trained:
  /// `seconds` unless it finished earlier (done() is then true). A job without GPUs does nothing.
  double train(double seconds);

  bool done() const { return done_; }
  int epoch() const { return epoch_; }
  /// Statistically efficient progress so far, in steps at the smallest batch.
  double progress() const { return progress_; }
  /// Progress at which the job is done.
  double total_progress() const;
  /// Restores the progress after a failure rolled the job back (epoch recomputed).
  void set_progress(double progress);

  /// The scheduler's view: speedup(nodes, replicas) from the fitted model; nullopt before the job
  /// has observed any step (the scheduler then assumes linear scaling).
  std::optional<SpeedupFunction> speedup() const;
  /// Largest GPU count observed so far (the scheduler lets a job grow to twice that).
  int max_profiled_replicas() const;
  long global_batch() const;  ///< current replicas x atomic x (accum + 1); 0 without GPUs
  long atomic_batch() const { return atomic_; }
  long accum_steps() const { return accum_; }
  const PolluxApplication& application() const { return *app_; }
  BatchLimits limits() const;

 private:
  void pick_batch();
  void observe(int nodes, int replicas, const PolluxStepTimes& t, double grad_sqr, double grad_var);

  const PolluxApplication* app_;
  long fixed_batch_ = 0;
  std::vector<int> placement_;  ///< GPUs per node, zeros dropped
  int replicas_ = 0;            ///< sum of placement_
  long atomic_ = 0, accum_ = 0;
  int epoch_ = 0;
  double progress_ = 0;
  bool done_ = false;
  std::map<std::tuple<int, int, long>, PolluxStepTimes> profile_;  ///< (nodes, replicas, atomic)
  std::optional<PerfParams> perf_;
  GradParams grad_;
};

}  // namespace fleetsim::pollux
