// gandiva: time-slicing of an oversubscribed cluster, after Gandiva (Xiao et al., "Gandiva:
// Introspective Cluster Scheduling for Deep Learning", OSDI'18).
//
// Gandiva's mechanisms are suspend-resume (time-slicing), packing, migration and grow-shrink;
// its policy admits jobs greedily and, when the cluster is oversubscribed, time-slices the GPUs
// round-robin among jobs of the same size, so that a newly arrived job gets early feedback
// instead of waiting for a long job to end. This file models, at job level:
//
//  * Admission: queued jobs start in arrival order, any job that fits (fifo-skip).
//  * Time-slicing: jobs fall into size classes (GPU count, GPU share, allowed GPU types). A
//    running job whose slice (`slice_s` since it last started) is over is suspended when a job
//    of its class is queued, and the queued job of that class that has waited longest resumes in
//    its place (FIFO; suspended jobs queue at the back, so jobs of a class take turns
//    round-robin). A resumed job keeps its GPUs for at least one slice. A suspension is a fleetsim
//    preemption: the job restarts later and pays the scenario's restart cost
//    ([execution] restart_overhead_s + restart_s_per_gb * state), counted in restarts and
//    wasted_gpu_s. Gandiva's suspend-resume is cheap (it suspends at a mini-batch boundary,
//    where little state lives on the GPU), so set restart_overhead_s to about a second to model
//    Gandiva itself; with the default 30 s every resume costs half a 60 s slice. If the placer
//    cannot fit the queued job in the suspended job's place (e.g. different CPU or memory
//    request), the suspended job is started again at once (paying its restart cost).
//  * Wake-ups: while a class has queued jobs and running ones, the policy wakes at the earliest
//    end of a running slice of that class.
//
// Not modelled:
//  * Packing (two jobs sharing one GPU when it raises their combined throughput). fleetsim's
//    placement gives every whole-GPU job GPUs of its own, and a policy cannot start a job on GPUs
//    already held by another, so packing needs a core hook (start job B on job A's GPUs without
//    new capacity, both slowed down via set_speed by the Gavel table's pair_rate or a fixed
//    factor). Fractional-GPU jobs (gpu_milli < 1000) are already co-located by the placer, under
//    every policy alike, with no interference slowdown.
//  * Migration (to defragment) and grow-shrink (elastic jobs).
//
// Knobs ([scheduler.options]):
//   slice_s  time slice, s (default 60: Gandiva's time-slicing quantum is about a minute)
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "sim/engine/policy.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {
namespace {

constexpr double kEps = 1e-6;

class Gandiva final : public Scheduler {
 public:
  explicit Gandiva(const Options& o)
      : slice_s_(o.number("slice_s", 60, "time slice in seconds for round-robin among jobs of one size")) {
    if (!(slice_s_ > 0) || !std::isfinite(slice_s_))
      throw InputError("", 0, "scheduler.options.slice_s", "must be > 0, got " + std::to_string(slice_s_));
  }

  void enqueue(JobId id, const Launcher&) override {
    waiting_.push_back(id);
    const auto need = static_cast<std::size_t>(id) + 1;
    if (slice_start_.size() < need) slice_start_.resize(need, -1);
  }

  std::size_t queued() const override { return waiting_.size(); }

  void schedule(Launcher& launcher) override {
    const double now = launcher.now();
    // Admission: any queued job that fits, in arrival order.
    for (std::size_t i = 0; i < waiting_.size() && !launcher.saturated();) {
      if (start(launcher, waiting_[i], now))
        waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(i));
      else
        ++i;
    }
    if (waiting_.empty()) return;
    time_slice(launcher, now);
    arm_wake(launcher, now);
  }

 private:
  static bool same_class(const JobSpec& a, const JobSpec& b) {
    return a.gpus == b.gpus && a.gpu_milli == b.gpu_milli && a.gpu_types == b.gpu_types;
  }

  bool start(Launcher& launcher, JobId j, double now) {
    if (!launcher.try_start(j)) return false;
    slice_start_[static_cast<std::size_t>(j)] = now;
    return true;
  }

  /// Suspend running jobs whose slice is over in favour of queued jobs of their class.
  void time_slice(Launcher& launcher, double now) {
    std::vector<JobId> expired;
    for (JobId r : launcher.running())
      if (launcher.job(r).gpus > 0 && slice_start_[static_cast<std::size_t>(r)] + slice_s_ <= now + kEps)
        expired.push_back(r);
    // Longest in its slice first; ties in job order (deterministic).
    std::sort(expired.begin(), expired.end(), [this](JobId a, JobId b) {
      const double sa = slice_start_[static_cast<std::size_t>(a)],
                   sb = slice_start_[static_cast<std::size_t>(b)];
      return sa != sb ? sa < sb : a < b;
    });
    std::vector<JobId> suspended;
    for (JobId r : expired) {
      const JobSpec& rs = launcher.job(r);
      auto w = std::find_if(waiting_.begin(), waiting_.end(),
                            [&](JobId q) { return same_class(launcher.job(q), rs); });
      if (w == waiting_.end()) continue;
      const JobId next = *w;
      launcher.preempt(r);
      if (start(launcher, next, now)) {
        waiting_.erase(w);
        suspended.push_back(r);
      } else if (!start(launcher, r, now)) {  // the queued job did not fit in its place
        suspended.push_back(r);
      }
    }
    // Suspended jobs queue behind everyone waiting now: round-robin within a class.
    waiting_.insert(waiting_.end(), suspended.begin(), suspended.end());
  }

  /// Wake at the earliest slice end of a running job whose class has queued jobs.
  void arm_wake(Launcher& launcher, double now) {
    double next = std::numeric_limits<double>::infinity();
    for (JobId r : launcher.running()) {
      const JobSpec& rs = launcher.job(r);
      if (rs.gpus == 0) continue;
      const double end = slice_start_[static_cast<std::size_t>(r)] + slice_s_;
      if (end <= now + kEps || end >= next) continue;
      if (std::any_of(waiting_.begin(), waiting_.end(),
                      [&](JobId q) { return same_class(launcher.job(q), rs); }))
        next = end;
    }
    if (std::isfinite(next) && (pending_wake_ <= now + kEps || next < pending_wake_ - kEps)) {
      launcher.wake_at(next);
      pending_wake_ = next;
    }
  }

  double slice_s_;
  std::vector<JobId> waiting_;       ///< queued jobs: arrivals, then suspended ones, in order
  std::vector<double> slice_start_;  ///< per job: when it last started (its slice began)
  double pending_wake_ = -1;
};

const SchedulerRegistrar kRegistrar{
    "gandiva", "time-slicing among same-size jobs when oversubscribed (Gandiva, OSDI'18)",
    [](const SchedulerParams& p) { return std::make_unique<Gandiva>(p.opts()); }};

}  // namespace
}  // namespace fleetsim
