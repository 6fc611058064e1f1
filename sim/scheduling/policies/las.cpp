// las: least attained service, two-dimensional (2D-LAS: attained service = GPU-seconds received,
// attained_gpu_s; Nuyens & Wierman, "The Foreground-Background queue: a survey", 2008; the 2D-LAS
// of Tiresias, Gu et al., NSDI'19, before its discretization into queues). Preemptive.
//
// The job with the least attained GPU-service runs first. Continuous LAS would preempt at every
// instant two jobs' services cross (thrashing), so it is discretized in time: preemption decisions
// are taken only at quantum ticks (multiples of quantum_s, requested with wake_at while some job
// waits and some job runs). At a tick the target set is decided first: waiting jobs are taken in
// ascending attained service; one that does not fit the free GPUs may take the GPUs of running
// jobs with strictly more attained service (most first), but only if it then fits (GPUs counted
// cluster-wide). Then the victims are preempted and the picked jobs started. Between ticks, and
// after the preemptions, any waiting job that fits starts (least attained first); jobs preempted
// at this instant are not restarted at the same instant. Preempted jobs pay the checkpoint-restore
// overhead ([execution] restart_overhead_s) when restarted. Fractional-GPU jobs are never victims
// and count as needing one GPU.
//
// Knobs ([scheduler.options]):
//   quantum_s  time between preemption decisions, s (default 600: with the default 30 s restart
//              overhead, a job preempted every quantum loses at most 5% of its time)
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "sim/cluster/cluster_state.hpp"
#include "sim/engine/policy.hpp"
#include "sim/scheduling/policies/need_queue.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {
namespace {

double read_quantum(const Options& o) {
  const double q =
      o.number("quantum_s", 600.0, "time between preemption decisions (LAS re-evaluation), s (default 600)");
  if (!(q > 0) || !std::isfinite(q))
    throw InputError("", 0, "scheduler.options.quantum_s", "must be a finite number > 0");
  return q;
}

class Las final : public Scheduler {
 public:
  explicit Las(const SchedulerParams& p) : quantum_s_(read_quantum(p.opts())) {}

  void enqueue(JobId id, const Launcher& launcher) override {
    waiting_.insert(NeedQueue::bucket_of(launcher.job(id)), {0.0, id});
  }

  /// A failure stopped it: it waits again under the service it attained.
  void interrupted(JobId id, const Launcher& launcher) override {
    waiting_.insert(NeedQueue::bucket_of(launcher.job(id)), {attained(launcher, id), id});
  }

  void schedule(Launcher& launcher) override {
    const double now = launcher.now();
    const bool tick = requested_tick_ >= 0 && now >= requested_tick_ - 1e-9;
    if (tick) requested_tick_ = -1;
    std::vector<JobId> stopped;
    std::vector<NeedQueue::Entry> picked;
    if (tick && !waiting_.empty()) {
      // Victims: whole-GPU running jobs, most attained service first; strictly more than the waiter.
      picked = plan_preemptions(
          waiting_, launcher,
          [&] { return whole_gpu_victims(launcher, [&](JobId r) { return attained(launcher, r); }); },
          [](const NeedQueue::Entry& e) { return e.first + 1e-9; }, stopped);
    }
    carry_out(waiting_, launcher, picked, stopped, [&](JobId v) { return attained(launcher, v); });
    if (!waiting_.empty() && !launcher.running().empty() && requested_tick_ < 0) {
      double t = (std::floor(now / quantum_s_) + 1) * quantum_s_;
      if (t <= now) t += quantum_s_;
      launcher.wake_at(t);
      requested_tick_ = t;
    }
  }

  std::size_t queued() const override { return waiting_.size(); }

 private:
  static double attained(const Launcher& launcher, JobId id) { return launcher.progress(id).attained_gpu_s; }

  double quantum_s_;
  double requested_tick_ = -1;  ///< the tick asked for with wake_at (-1: none pending)
  /// (attained GPU-s, id): constant while waiting; ids grow in arrival order, so ties go FIFO.
  NeedQueue waiting_;
};

const SchedulerRegistrar kRegistrar{
    "las",
    "least attained GPU-service first (2D-LAS), preemptive, re-evaluated every quantum (knob quantum_s)",
    [](const SchedulerParams& p) { return std::make_unique<Las>(p); }};

}  // namespace
}  // namespace fleetsim
