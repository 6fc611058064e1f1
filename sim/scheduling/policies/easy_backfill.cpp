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
// extra GPUs are open to backfilling; when it cannot fit by count even once every running job has
// ended (GPUs held by fractional jobs), there is no reservation. No knobs.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "sim/cluster/cluster_state.hpp"
#include "sim/engine/policy.hpp"
#include "sim/scheduling/policies/need_queue.hpp"

namespace fleetsim {
namespace {

class EasyBackfill final : public Scheduler {
 public:
  void enqueue(JobId id, const Launcher& launcher) override {
    const auto i = static_cast<std::size_t>(id);
    if (estimate_.size() <= i) estimate_.resize(i + 1, 0.0);
    const auto est = launcher.estimated_runtime(id);
    estimate_[i] = est ? *est : std::numeric_limits<double>::infinity();
    const int bucket = NeedQueue::bucket_of(launcher.job(id));
    queue_.insert(bucket, {0.0, id});
    by_estimate_.insert(bucket, {estimate_[i], id});
  }

  void schedule(Launcher& launcher) override {
    JobId head = -1;  // start jobs in arrival order while the head fits
    queue_.walk([] { return std::numeric_limits<long>::max(); },
                [&](const NeedQueue::Entry& e) {
                  if (!launcher.try_start(e.second)) {
                    head = e.second;
                    return false;
                  }
                  remove(launcher, e.second);
                  return true;
                });
    if (head < 0 || queue_.size() < 2 || launcher.saturated()) return;
    auto [shadow, extra] = reservation(launcher, head);
    const double now = launcher.now();
    const ClusterState& cluster = launcher.cluster();
    const long free = cluster.free_whole_of(~TypeMask{0});
    auto attempt = [&](JobId j) {  // EASY's test, then start
      const JobSpec& spec = launcher.job(j);
      const long need = NeedQueue::need_of(spec);
      if (NeedQueue::bucket_of(spec) > 0 && need > cluster.free_whole_of(~TypeMask{0})) return;
      const bool before_shadow = now + estimate_[static_cast<std::size_t>(j)] <= shadow + 1e-9;
      if ((before_shadow || need <= extra) && launcher.try_start(j)) {
        if (!before_shadow) extra -= need;
        remove(launcher, j);
      }
    };
    // Only jobs that fit the free GPUs by count and end by the shadow time (by estimate) or fit in
    // the extra GPUs may start, in arrival order. When few jobs end by the shadow time and there
    // are no extra GPUs, list those (and the fractional / CPU-only ones) and try them in arrival
    // order; otherwise walk the queue in arrival order.
    candidates_.clear();
    bool listed = extra == 0;
    if (listed)
      by_estimate_.walk([&] { return free; },
                        [&](const NeedQueue::Entry& e) {
                          if (now + e.first > shadow + 1e-9) return false;
                          if (candidates_.size() >= kMaxListed) listed = false;
                          candidates_.push_back(e.second);
                          return listed;
                        });
    if (listed) {
      queue_.walk([] { return 0L; },
                  [&](const NeedQueue::Entry& e) {
                    candidates_.push_back(e.second);
                    return true;
                  });
      std::sort(candidates_.begin(), candidates_.end());
      candidates_.erase(std::unique(candidates_.begin(), candidates_.end()), candidates_.end());
      for (JobId j : candidates_) {
        if (launcher.saturated()) return;
        if (j != head) attempt(j);
      }
      return;
    }
    queue_.for_each_fitting(launcher, [&](const NeedQueue::Entry& e) {
      if (e.second != head) attempt(e.second);
    });
  }

  std::size_t queued() const override { return queue_.size(); }

 private:
  void remove(const Launcher& launcher, JobId j) {
    const int bucket = NeedQueue::bucket_of(launcher.job(j));
    queue_.erase(bucket, {0.0, j});
    by_estimate_.erase(bucket, {estimate_[static_cast<std::size_t>(j)], j});
  }

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
    const long need = NeedQueue::need_of(h);
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
    // Earliest ends first, popped from a heap: usually only a few are needed.
    std::make_heap(ends_.begin(), ends_.end(), std::greater<>());
    while (!ends_.empty()) {
      std::pop_heap(ends_.begin(), ends_.end(), std::greater<>());
      const auto [end, g] = ends_.back();
      ends_.pop_back();
      avail += g;
      if (avail >= need) return {end, avail - need};
    }
    return {std::numeric_limits<double>::infinity(), 0};  // never fits by count: no reservation
  }

  static constexpr std::size_t kMaxListed = 256;
  NeedQueue queue_;                            ///< (0, id): arrival order (the core enqueues jobs by index)
  NeedQueue by_estimate_;                      ///< the same jobs by (estimated run time, id)
  std::vector<double> estimate_;               ///< per job: estimated run time, s
  std::vector<JobId> candidates_;              ///< scratch of schedule()
  std::vector<std::pair<double, long>> ends_;  ///< scratch: (expected end, GPUs) of running jobs
};

const SchedulerRegistrar kRegistrar{
    "easy-backfill",
    "FIFO with EASY backfilling: later jobs start if they end before the head's reservation or use "
    "only the extra GPUs",
    [](const SchedulerParams&) { return std::make_unique<EasyBackfill>(); }};

}  // namespace
}  // namespace fleetsim
