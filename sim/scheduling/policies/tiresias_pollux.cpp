// tiresias-pollux: Tiresias (discretized 2D-LAS, two queues) as Pollux's simulator runs it, the
// "Tiresias with TunedJobs" baseline of the Pollux paper (OSDI'21; artifact petuum/adaptdl, branch
// osdi21-artifact, simulator/tiresias.py). Each job keeps its trace's GPU count and batch size.
//
// Decisions happen in rounds, at multiples of round_s (default 60 s); jobs that arrive or end in
// between wait for the next round. At a round:
//   - newly arrived jobs join the top queue Q0, in arrival order;
//   - a job that ran in the last round adds the round's wall time to its executed time; once
//     executed time x GPUs reaches threshold_gpu_s (default 57,600 GPU-s = 16 GPU-hours) it moves to
//     the end of Q1;
//   - walking Q0 then Q1 in order, a job runs if its GPUs fit in the cluster's GPUs not yet given to
//     a job before it (counted cluster-wide: no job is skipped for fragmentation); a running job that
//     does not is preempted (checkpointed, it keeps its progress), a waiting job that does starts.
// Starvation promotion is off, as in the artifact (solve_starvation = 0). The artifact's restart
// penalty (30 s on every allocation, the first included) is the scenario's
// execution.start_overhead_s and restart_overhead_s; its greedy node choice is scheduler.placement
// = "most-free" (see scenarios/pollux.toml).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sim/engine/policy.hpp"
#include "sim/scheduling/policies/round_clock.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {
namespace {

class TiresiasPollux final : public Scheduler {
 public:
  explicit TiresiasPollux(const SchedulerParams& p) : clock_(p.opts()) {
    const Options& o = p.opts();
    threshold_ = o.number("threshold_gpu_s", 57600.0,
                          "executed time x GPUs that moves a job from Q0 to Q1, GPU-s (default 57600)");
    if (!(threshold_ > 0) || !std::isfinite(threshold_))
      throw InputError("", 0, "scheduler.options.threshold_gpu_s", "must be finite and > 0");
  }

  void enqueue(JobId id, const Launcher& launcher) override {
    State& s = st(id);
    s = State{};
    const JobSpec& j = launcher.job(id);
    s.need = j.gpus <= 0 ? 0 : (j.gpu_milli >= 1000 ? j.gpus : 1);
    arrived_.push_back(id);
  }

  void finished(JobId id) override { st(id).done = true; }

  void interrupted(JobId id, const Launcher& /*launcher*/) override { st(id).allocated = false; }

  void schedule(Launcher& launcher) override {
    const double now = launcher.now();
    if (clock_.at(now)) round(launcher, now);
    if (!arrived_.empty() || !q0_.empty() || !q1_.empty()) clock_.wake(launcher);
  }

  std::size_t queued() const override {
    std::size_t n = arrived_.size();
    for (const auto* q : {&q0_, &q1_})
      for (JobId id : *q)
        if (!jobs_[static_cast<std::size_t>(id)].allocated && !jobs_[static_cast<std::size_t>(id)].done) ++n;
    return n;
  }

 private:
  struct State {
    int need = 0;
    bool allocated = false;  ///< given GPUs in the last round (the artifact's RUNNING)
    bool done = false;
    bool demoted = false;
    double executed_s = 0;
    double last_check = 0;
  };

  State& st(JobId id) {
    const auto i = static_cast<std::size_t>(id);
    if (jobs_.size() <= i) jobs_.resize(i + 1);
    return jobs_[i];
  }

  void round(Launcher& launcher, double now) {
    auto drop_done = [&](std::vector<JobId>& q) {
      q.erase(std::remove_if(q.begin(), q.end(), [&](JobId id) { return st(id).done; }), q.end());
    };
    drop_done(q0_);
    drop_done(q1_);
    for (JobId id : arrived_) {
      st(id).last_check = now;
      q0_.push_back(id);
    }
    arrived_.clear();
    // Account the last round; demote in job order (the artifact walks its jobs in trace order).
    std::vector<JobId> by_id(q0_);
    std::sort(by_id.begin(), by_id.end());
    for (JobId id : by_id) {
      State& s = st(id);
      if (s.allocated) s.executed_s += now - s.last_check;
      s.last_check = now;
      if (s.allocated && s.executed_s * s.need >= threshold_) s.demoted = true;
    }
    for (JobId id : q1_) {
      State& s = st(id);
      if (s.allocated) s.executed_s += now - s.last_check;
      s.last_check = now;
    }
    for (JobId id : by_id)
      if (st(id).demoted) {
        q0_.erase(std::find(q0_.begin(), q0_.end(), id));
        q1_.push_back(id);
        st(id).demoted = false;
      }
    // Pick the jobs that run: queue order, GPUs counted cluster-wide.
    int free = launcher.cluster().total_gpus();
    std::vector<JobId> start;
    for (const auto* q : {&q0_, &q1_})
      for (JobId id : *q) {
        State& s = st(id);
        const bool run = s.need <= free;
        if (run) free -= s.need;
        if (!run && s.allocated) {
          launcher.preempt(id);
          s.allocated = false;
        }
        if (run && !s.allocated) start.push_back(id);
      }
    for (JobId id : start) {
      if (!launcher.try_start(id)) continue;  // does not fit (not with a spreading placer): next round
      State& s = st(id);
      s.allocated = true;
      if (!launcher.progress(id).running) s.done = true;  // dropped: the job model cannot time it
    }
  }

  RoundClock clock_;
  double threshold_ = 57600;
  std::vector<State> jobs_;
  std::vector<JobId> arrived_, q0_, q1_;
};

const SchedulerRegistrar kRegistrar{
    "tiresias-pollux",
    "Tiresias as Pollux's simulator runs it: 60 s rounds, two queues split at 16 GPU-hours of executed "
    "time, preemptive, GPUs counted cluster-wide (knobs round_s, threshold_gpu_s)",
    [](const SchedulerParams& p) { return std::make_unique<TiresiasPollux>(p); }};

}  // namespace
}  // namespace fleetsim
