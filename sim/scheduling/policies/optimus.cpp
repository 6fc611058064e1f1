// optimus: Optimus (Peng et al., EuroSys'18) with an oracle of job speed, as Pollux's simulator runs
// it for the Pollux paper's comparison (OSDI'21; artifact petuum/adaptdl, branch osdi21-artifact,
// simulator/optimus.py, "Optimus+Oracle"). Jobs are ELASTIC: the policy sets each job's GPU count
// every round; the job keeps its trace's global batch size, split over the GPUs it gets.
//
// Every round_s (default 60 s), over the jobs that arrived and are not done, in arrival order:
//   1. each job gets one GPU while GPUs last (the rest get none and wait);
//   2. the GPUs left go one at a time to the job of largest marginal gain, remaining x (T(n) -
//      T(n + 1)): T(n) = the job's run time alone on n GPUs packed onto full nodes (the job model's
//      oracle, Launcher::estimated_runtime_scaled) and `remaining` its share of work left; a job never
//      gets more than the job model allows (Launcher::max_gpus: the pollux model's batch / smallest
//      per-GPU batch);
//   3. a job whose GPU count changed is stopped (it keeps its progress) and started again on its new
//      count, fewest GPUs first, paying the restart cost (30 s in the artifact: execution.
//      start_overhead_s = restart_overhead_s = 30, placement "most-free").
// Deviation from the artifact: its `remaining` counts the validation trace's iterations left at the
// job's batch from its current epoch; fleetsim uses the share of the job's modelled run time left.
#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "sim/engine/policy.hpp"
#include "sim/scheduling/policies/round_clock.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {
namespace {

class Optimus final : public Scheduler {
 public:
  explicit Optimus(const SchedulerParams& p) : clock_(p.opts()) {}

  void enqueue(JobId id, const Launcher& /*launcher*/) override {
    if (!known(id)) active_.push_back(id);
    st(id) = State{};
  }
  void finished(JobId id) override { st(id).done = true; }
  void interrupted(JobId id, const Launcher& /*launcher*/) override { st(id).gpus = 0; }

  void schedule(Launcher& launcher) override {
    if (clock_.at(launcher.now())) round(launcher);
    if (!active_.empty()) clock_.wake(launcher);
  }

  std::size_t queued() const override {
    std::size_t n = 0;
    for (JobId id : active_) n += jobs_[static_cast<std::size_t>(id)].gpus == 0 ? 1 : 0;
    return n;
  }

 private:
  struct State {
    int gpus = 0;  ///< GPUs it runs on (0: waiting)
    bool done = false;
    std::map<int, double> runtime;  ///< T(n), cached: fixed for a job and a GPU count
  };

  bool known(JobId id) const {
    return static_cast<std::size_t>(id) < jobs_.size() && seen_[static_cast<std::size_t>(id)];
  }
  State& st(JobId id) {
    const auto i = static_cast<std::size_t>(id);
    if (jobs_.size() <= i) {
      jobs_.resize(i + 1);
      seen_.resize(i + 1, false);
    }
    seen_[i] = true;
    return jobs_[i];
  }

  /// T(n) for job id; +inf when the model cannot time it there.
  double runtime(const Launcher& launcher, JobId id, int n) {
    auto& cache = st(id).runtime;
    if (const auto it = cache.find(n); it != cache.end()) return it->second;
    const auto t = launcher.estimated_runtime_scaled(id, n);
    return cache[n] = t ? *t : INFINITY;
  }

  double gain(const Launcher& launcher, JobId id, int n, double remaining) {
    const double a = runtime(launcher, id, n), b = runtime(launcher, id, n + 1);
    if (!std::isfinite(a) || !std::isfinite(b)) return 0;
    return (a - b) * remaining;
  }

  void round(Launcher& launcher) {
    active_.erase(std::remove_if(active_.begin(), active_.end(), [&](JobId id) { return st(id).done; }),
                  active_.end());
    int free = launcher.cluster().total_gpus();
    std::vector<int> target(active_.size(), 0);
    std::vector<double> gains(active_.size(), 0), remaining(active_.size(), 1);
    std::vector<int> cap(active_.size(), 1);
    for (std::size_t i = 0; i < active_.size(); ++i) {
      const JobId id = active_[i];
      remaining[i] = launcher.progress(id).remaining_fraction;
      cap[i] = std::max(1, launcher.max_gpus(id));
      if (free < 1) continue;
      target[i] = 1;
      --free;
      if (target[i] + 1 <= cap[i] && free >= 1) gains[i] = gain(launcher, id, target[i], remaining[i]);
    }
    while (free > 0) {
      const auto best = std::max_element(gains.begin(), gains.end());
      if (best == gains.end() || !(*best > 0)) break;
      const auto i = static_cast<std::size_t>(best - gains.begin());
      ++target[i];
      --free;
      gains[i] =
          (target[i] + 1 <= cap[i] && free >= 1) ? gain(launcher, active_[i], target[i], remaining[i]) : 0;
    }
    // Stop the jobs whose count changed, then start the rest, fewest GPUs first.
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < active_.size(); ++i) {
      State& s = st(active_[i]);
      if (s.gpus == target[i]) continue;
      if (s.gpus > 0) {
        launcher.preempt(active_[i]);
        s.gpus = 0;
      }
      if (target[i] > 0) order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return target[a] < target[b]; });
    for (std::size_t i : order) {
      const JobId id = active_[i];
      if (!launcher.try_start_scaled(id, target[i])) continue;  // does not fit now: next round
      if (!launcher.progress(id).running) {
        st(id).done = true;  // dropped: the job model cannot time it
        continue;
      }
      st(id).gpus = target[i];
    }
  }

  RoundClock clock_;
  std::vector<State> jobs_;
  std::vector<bool> seen_;
  std::vector<JobId> active_;
};

const SchedulerRegistrar kRegistrar{
    "optimus",
    "Optimus+Oracle as Pollux's simulator runs it: elastic jobs, GPUs given each 60 s round by marginal "
    "gain in remaining run time (knob round_s)",
    [](const SchedulerParams& p) { return std::make_unique<Optimus>(p); }};

}  // namespace
}  // namespace fleetsim
