#pragma once
// One application of Pollux (Qiao et al., OSDI'21): its measured throughput profile and its
// statistical-efficiency traces, as Pollux's simulator models them (petuum/adaptdl, branch
// osdi21-artifact, simulator/applications.py and simulator.py). A folder per application holds
//   placements.csv     placement,local_bsz,step_time,sync_time   placement = GPUs per node ("22")
//   scalability.csv    num_nodes,num_replicas,local_bsz,step_time,sync_time   (optional; 6-16 nodes)
//   validation-<B>.csv progress,iteration,metric,grad_sqr,grad_var   one row per epoch, trained at
//                      global batch B; progress = statistically efficient progress after the epoch,
//                      in steps at the smallest B; grad_* = gradient statistics during the epoch.
// Pure: no SimGrid.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "workloads/jobs/job.hpp"

namespace fleetsim {

class LinearNdInterpolator;

struct PolluxStepTimes {
  double step = 0;  ///< one atomic step incl. the gradient all-reduce, s
  double sync = 0;  ///< its all-reduce part, s
};

/// How a global batch runs on `replicas` GPUs: atomic (micro) batch per GPU, extra accumulation
/// steps, and the batch actually trained (replicas x atomic x (accum + 1)).
struct PolluxBatch {
  long atomic = 0;
  long accum = 0;
  long batch = 0;
};

class PolluxApplication {
 public:
  /// Reads the folder; `scenario` names the scenario for messages. Throws InputError (file, line,
  /// field) on malformed input.
  static PolluxApplication load(const std::filesystem::path& dir, const std::string& scenario);
  PolluxApplication(PolluxApplication&&) noexcept;
  PolluxApplication& operator=(PolluxApplication&&) noexcept;
  ~PolluxApplication();

  const std::string& name() const { return name_; }
  long init_batch() const { return validation_.begin()->first; }  ///< smallest validated batch
  long max_batch() const { return validation_.rbegin()->first; }  ///< largest validated batch
  long min_local() const { return min_local_; }
  long max_local() const { return max_local_; }
  int epochs() const { return epochs_; }  ///< epochs to train (the artifact's max_epochs)
  const std::string& folder() const { return folder_; }

  /// A fixed global batch on `replicas` GPUs, as the simulator's Job.update_local_bsz splits it.
  PolluxBatch fixed_batch(long batch, int replicas) const;
  /// Step and sync time of one atomic step of `atomic` examples per GPU on `placement` (GPUs per
  /// node). Like the artifact: a measured placement string (rotated to its smallest form) is
  /// interpolated in local batch; any other shape by LinearND over (nodes <= 16, replicas, local
  /// batch). Outside both (where the artifact fails): the measured grid, clamped per axis.
  PolluxStepTimes step_times(const std::vector<int>& placement, double atomic) const;
  /// Statistical efficiency gain of one step at global batch `batch` during epoch `epoch`: the
  /// progress it makes, in steps at init_batch() (1 at init_batch, at most batch / init_batch).
  double gain(double batch, int epoch) const;
  /// Gradient statistics (squared norm, variance) during epoch `epoch` at global batch `batch`,
  /// interpolated linearly between the validated batches around it (the artifact's get_grad_stats).
  std::pair<double, double> grad_stats(double batch, int epoch) const;
  /// Progress at the end of epoch e (progress(0) = 0): the least over the validated batches.
  double progress(int epoch) const { return progress_[static_cast<std::size_t>(epoch)]; }

 private:
  PolluxApplication() = default;
  struct Curve {
    std::vector<double> grad_sqr, grad_var;
  };
  struct Measured {
    double local = 0;
    PolluxStepTimes t;
  };
  std::optional<PolluxStepTimes> exact(const std::vector<int>& placement, double atomic) const;
  PolluxStepTimes grid(double nodes, double replicas, double atomic) const;

  std::string name_, folder_;
  std::map<long, Curve> validation_;
  std::vector<double> progress_;  ///< epochs + 1 entries
  int epochs_ = 0;
  long min_local_ = 0, max_local_ = 0;
  std::map<std::string, std::vector<Measured>> by_placement_;          ///< sorted by local
  std::map<int, std::map<int, std::map<int, PolluxStepTimes>>> grid_;  ///< nodes, replicas, local
  std::unique_ptr<LinearNdInterpolator> scattered_;                    ///< null: too few points
};

/// A job of the pollux job model, as a policy that trains it adaptively (pollux) sees it.
struct PolluxJobInfo {
  const PolluxApplication* app = nullptr;  ///< null: not a job of a Pollux application
  long batch = 0;                          ///< the trace's global batch
  bool one_gpu = false;                    ///< kept on one GPU at its trace batch (execution.pollux_one_gpu)
};

/// Implemented by the pollux job model, for policies that choose batch sizes (pollux).
class PolluxJobSource {
 public:
  virtual ~PolluxJobSource() = default;
  /// The job's application and batch. Throws InputError (trace file, line) as the model does.
  virtual PolluxJobInfo pollux_job(const JobSpec& job) const = 0;
};

}  // namespace fleetsim
