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

#include "sim/core/cluster_state.hpp"
#include "sim/scheduling/estimate_error.hpp"
#include "sim/scheduling/need_queue.hpp"
#include "sim/scheduling/scheduler.hpp"
#include "workloads/input_error.hpp"

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
    std::vector<JobId> preempted;
    const auto picked = decide(launcher, preempted);
    for (JobId v : preempted) {
      const double rem = remaining(launcher, v);
      launcher.preempt(v);
      waiting_.insert(NeedQueue::bucket_of(launcher.job(v)), {rem, v});
    }
    for (const auto& e : picked)
      if (launcher.try_start(e.second)) waiting_.erase(NeedQueue::bucket_of(launcher.job(e.second)), e);
    // Fill: anything else that fits, shortest first; not the jobs preempted just now.
    const ClusterState& cluster = launcher.cluster();
    waiting_.walk([&] { return static_cast<long>(cluster.free_whole_of(~TypeMask{0})); },
                  [&](const NeedQueue::Entry& e) {
                    if (launcher.saturated()) return false;
                    if (std::find(preempted.begin(), preempted.end(), e.second) == preempted.end() &&
                        launcher.try_start(e.second))
                      waiting_.erase(NeedQueue::bucket_of(launcher.job(e.second)), e);
                    return true;
                  });
  }

  std::size_t queued() const override { return waiting_.size(); }

 private:
  struct Victim {
    double remaining;
    JobId id;
    int gpus;
  };

  double remaining(const Launcher& launcher, JobId id) const {
    return launcher.progress(id).remaining_fraction * estimate_[static_cast<std::size_t>(id)];
  }

  static long need_of(const JobSpec& j) { return j.gpus <= 0 ? 0 : (j.gpu_milli >= 1000 ? j.gpus : 1); }

  /// The running jobs that may be preempted (whole-GPU ones, with more than `bar` s left), longest
  /// remaining first.
  void collect_victims(const Launcher& launcher, double bar) {
    victims_.clear();
    for (JobId r : launcher.running()) {
      const JobSpec& j = launcher.job(r);
      if (j.gpus <= 0 || j.gpu_milli < 1000) continue;
      const double rem = remaining(launcher, r);
      if (rem > bar) victims_.push_back({rem, r, j.gpus});
    }
    std::sort(victims_.begin(), victims_.end(), [](const Victim& a, const Victim& b) {
      return a.remaining != b.remaining ? a.remaining > b.remaining : a.id > b.id;
    });
    prefix_.assign(victims_.size() + 1, 0);  // GPUs of victims_[0..k)
    for (std::size_t k = 0; k < victims_.size(); ++k) prefix_[k + 1] = prefix_[k] + victims_[k].gpus;
  }

  /// The target set: waiting jobs to start (shortest first) and running jobs to preempt for them.
  /// The victims are only listed once a waiting job does not fit the free GPUs.
  std::vector<NeedQueue::Entry> decide(const Launcher& launcher, std::vector<JobId>& victims_out) {
    std::vector<NeedQueue::Entry> picked;
    long avail = launcher.cluster().free_whole_of(~TypeMask{0});
    const long total = launcher.cluster().total_gpus();
    bool listed = false;
    std::size_t taken = 0;
    waiting_.walk([&] { return listed ? avail + prefix_.back() - prefix_[taken] : total; },
                  [&](const NeedQueue::Entry& e) {
                    const long need = need_of(launcher.job(e.second));
                    if (need <= avail) {
                      avail -= need;
                      picked.push_back(e);
                      return true;
                    }
                    // Victims must be longer than e by more than min_gain_s: a prefix of the list
                    // (later waiting jobs are longer: the first bar is the lowest).
                    const double bar = e.first + min_gain_s_;
                    if (!listed) {
                      collect_victims(launcher, bar);
                      listed = true;
                    }
                    const auto eligible = static_cast<std::size_t>(
                        std::partition_point(victims_.begin(), victims_.end(),
                                             [bar](const Victim& v) { return v.remaining > bar; }) -
                        victims_.begin());
                    if (eligible <= taken) return avail > 0;  // later jobs are longer still
                    if (avail + prefix_[eligible] - prefix_[taken] < need) return true;
                    while (avail < need) avail += victims_[taken++].gpus;
                    avail -= need;
                    picked.push_back(e);
                    return true;
                  });
    for (std::size_t k = 0; k < taken; ++k) victims_out.push_back(victims_[k].id);
    return picked;
  }

  EstimateError error_;
  double min_gain_s_;
  std::vector<double> estimate_;  ///< per job: estimated total run time, s
  /// (remaining s, id); ids grow in arrival order (the core enqueues jobs by index): ties go FIFO.
  NeedQueue waiting_;
  std::vector<Victim> victims_;  ///< scratch of decide()
  std::vector<long> prefix_;     ///< scratch: GPUs of victims_[0..k)
};

const SchedulerRegistrar kRegistrar{
    "srtf",
    "shortest remaining (estimated) time first, preemptive; preempts longer jobs for a shorter one "
    "(knobs estimate_error, min_gain_s)",
    [](const SchedulerParams& p) { return std::make_unique<Srtf>(p); }};

}  // namespace
}  // namespace fleetsim
