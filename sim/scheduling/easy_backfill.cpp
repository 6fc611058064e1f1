// easy-backfill: first-come first-served with EASY backfilling (Lifka, "The ANL/IBM SP scheduling
// system", JSSPP'95; Mu'alem & Feitelson, IEEE TPDS 2001). Non-preemptive.
//   1. Jobs start in arrival order while the head of the queue fits.
//   2. When the head does not fit, it gets a reservation: the shadow time is the earliest time at
//      which enough GPUs it may use will be free, walking the running jobs by expected end
//      (progress().expected_end_s); the extra GPUs are those still free at the shadow time beyond
//      the head's need.
//   3. Any later job (in arrival order) may start now if it fits now and either finishes (by its
//      estimated run time, launcher.estimated_runtime) by the shadow time, or needs no more GPUs
//      than the extra ones (which it then consumes). So the head's reservation is never delayed,
//      as long as estimates hold.
// GPU counting is cluster-wide in whole GPUs: free GPUs of the head's allowed types, plus the GPUs
// of running jobs whose allowed types are all among the head's (any type when the head allows
// any). Fractional-GPU jobs count as needing one GPU and free none. When the head fits by count
// but not by placement (single-node, CPU or memory limits), the shadow time is now and only the
// extra GPUs are open to backfilling. No knobs.
#include <algorithm>
#include <limits>
#include <list>
#include <utility>
#include <vector>

#include "sim/core/cluster_state.hpp"
#include "sim/scheduling/scheduler.hpp"

namespace fleetsim {
namespace {

class EasyBackfill final : public Scheduler {
 public:
  void enqueue(JobId id, const Launcher&) override { queue_.push_back(id); }

  void schedule(Launcher& launcher) override {
    while (!queue_.empty() && launcher.try_start(queue_.front())) queue_.pop_front();
    if (queue_.size() < 2 || launcher.saturated()) return;
    auto [shadow, extra] = reservation(launcher, queue_.front());
    const double now = launcher.now();
    for (auto it = std::next(queue_.begin()); it != queue_.end();) {
      if (launcher.saturated()) break;
      const JobId j = *it;
      const auto est = launcher.estimated_runtime(j);
      const double end = now + (est ? *est : std::numeric_limits<double>::infinity());
      const bool before_shadow = end <= shadow + 1e-9;
      const long need = need_of(launcher.job(j));
      if ((before_shadow || need <= extra) && launcher.try_start(j)) {
        if (!before_shadow) extra -= need;
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::size_t queued() const override { return queue_.size(); }

 private:
  static long need_of(const JobSpec& j) { return j.gpus <= 0 ? 0 : (j.gpu_milli >= 1000 ? j.gpus : 1); }

  static TypeMask mask_of(const JobSpec& j, const ClusterState& c) {
    if (j.gpu_types.empty()) return ~TypeMask{0};
    TypeMask m = 0;
    for (const auto& name : j.gpu_types) {
      const int t = c.type_index(name);
      if (t >= 0) m |= TypeMask{1} << t;
    }
    return m;
  }

  /// Shadow time and extra GPUs of the head's reservation.
  std::pair<double, long> reservation(const Launcher& launcher, JobId head) {
    const ClusterState& c = launcher.cluster();
    const JobSpec& h = launcher.job(head);
    const TypeMask mask = mask_of(h, c);
    const long need = need_of(h);
    long avail = c.free_whole_of(mask);
    if (avail >= need) return {launcher.now(), avail - need};
    ends_.clear();
    for (JobId r : launcher.running()) {
      const JobSpec& j = launcher.job(r);
      const long g = j.gpu_milli >= 1000 ? j.gpus : 0;
      if (g <= 0) continue;
      if (mask != ~TypeMask{0} && (j.gpu_types.empty() || (mask_of(j, c) & ~mask) != 0)) continue;
      ends_.emplace_back(launcher.progress(r).expected_end_s, g);
    }
    std::sort(ends_.begin(), ends_.end());
    for (const auto& [end, g] : ends_) {
      avail += g;
      if (avail >= need) return {end, avail - need};
    }
    return {std::numeric_limits<double>::infinity(), 0};  // never fits by count: no reservation
  }

  std::list<JobId> queue_;
  std::vector<std::pair<double, long>> ends_;  ///< scratch: (expected end, GPUs) of running jobs
};

const SchedulerRegistrar kRegistrar{
    "easy-backfill",
    "FIFO with EASY backfilling: later jobs start if they end before the head's reservation or use "
    "only the extra GPUs",
    [](const SchedulerParams&) { return std::make_unique<EasyBackfill>(); }};

}  // namespace
}  // namespace fleetsim
