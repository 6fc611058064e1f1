// srtf: preemptive shortest remaining time first (SRPT; Schrage, Operations Research 1968; the
// "shortest-remaining-time" baseline of Tiresias, Gu et al., NSDI'19). A job's remaining time is
// remaining_fraction x its estimated run time (the launcher's oracle times a per-job log-normal error
// factor exp(sigma * z), z ~ N(0, 1), drawn per job at arrival as in sjf). At every decision:
//   1. waiting jobs are taken shortest remaining first; one that fits the free GPUs is picked;
//      one that does not may take the GPUs of running jobs with a longer remaining time (longest
//      first), but only if the waiting job then fits (GPUs counted cluster-wide) - a target set is
//      decided first, then the victims are preempted and the picked jobs started;
//   2. any other waiting job that fits starts (shortest first); jobs preempted at this instant are
//      not restarted at the same instant (no preempt/restart loop).
// A preempted job waits with a constant remaining time while the job that displaced it only gets
// shorter, so the displaced job never preempts it back (no thrashing by construction). Preempted
// jobs pay the checkpoint-restore overhead ([execution] restart_overhead_s) when restarted.
// Fractional-GPU jobs are never victims (freeing a share frees no whole GPU) and need one GPU.
//
// Knobs ([scheduler.options]):
//   estimate_error  sigma of the multiplicative log-normal estimate error (default 0 = exact)
//   min_gain_s      preempt a running job only if its remaining time exceeds the waiting job's by
//                   more than this many seconds (default 0; e.g. the restart overhead)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/cluster/cluster_state.hpp"
#include "sim/engine/policy.hpp"
#include "sim/scheduling/policies/estimate_error.hpp"
#include "sim/scheduling/policies/need_queue.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {
namespace {

double read_nonneg(const Options& o, const std::string& key, const std::string& doc) {
  const double v = o.number(key, 0.0, doc);
  if (!(v >= 0) || !std::isfinite(v))
    throw InputError("", 0, "scheduler.options." + key, "must be a finite number >= 0");
  return v;
}

class Srtf final : public Scheduler {
 public:
  explicit Srtf(const SchedulerParams& p)
      : error_(p.seed, read_nonneg(p.opts(), "estimate_error",
                                   "sigma of the per-job log-normal run-time estimate error "
                                   "(estimate = oracle x exp(sigma z)); 0 = exact (default 0)")),
        min_gain_s_(read_nonneg(p.opts(), "min_gain_s",
                                "preempt a running job only if its remaining time exceeds the waiting "
                                "job's by more than this, s (default 0)")) {}

  void enqueue(JobId id, const Launcher& launcher) override {
    const auto i = static_cast<std::size_t>(id);
    if (estimate_.size() <= i) estimate_.resize(i + 1, 0.0);
    const auto est = launcher.estimated_runtime(id);
    estimate_[i] = est ? *est * error_.next() : std::numeric_limits<double>::infinity();
    waiting_.insert(NeedQueue::bucket_of(launcher.job(id)), {estimate_[i], id});
  }

  void schedule(Launcher& launcher) override {
    if (waiting_.empty()) return;
    std::vector<JobId> stopped;
    // Victims: whole-GPU running jobs, longest remaining first; longer than the waiter by more
    // than min_gain_s.
    const auto picked = plan_preemptions(
        waiting_, launcher,
        [&] { return whole_gpu_victims(launcher, [&](JobId r) { return remaining(launcher, r); }); },
        [&](const NeedQueue::Entry& e) { return e.first + min_gain_s_; }, stopped);
    carry_out(waiting_, launcher, picked, stopped, [&](JobId v) { return remaining(launcher, v); });
  }

  std::size_t queued() const override { return waiting_.size(); }

 private:
  double remaining(const Launcher& launcher, JobId id) const {
    return launcher.progress(id).remaining_fraction * estimate_[static_cast<std::size_t>(id)];
  }
  EstimateError error_;
  double min_gain_s_;
  std::vector<double> estimate_;  ///< per job: estimated total run time, s
  /// (remaining s, id); ids grow in arrival order (the core enqueues jobs by index): ties go FIFO.
  NeedQueue waiting_;
};

const SchedulerRegistrar kRegistrar{
    "srtf",
    "shortest remaining (estimated) time first, preemptive; preempts longer jobs for a shorter one "
    "(knobs estimate_error, min_gain_s)",
    [](const SchedulerParams& p) { return std::make_unique<Srtf>(p); }};

}  // namespace
}  // namespace fleetsim
