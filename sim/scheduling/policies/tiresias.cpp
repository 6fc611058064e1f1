// tiresias, tiresias-gittins: Tiresias (Gu et al., "Tiresias: A GPU Cluster Manager for Distributed
// Deep Learning", NSDI'19), discretized two-dimensional scheduling. Preemptive.
//
// Priority queues Q0..Q(K-1) by attained GPU-service (attained_gpu_s): a job enters Q0 and drops to
// Q(i+1) when its service crosses thresholds_gpu_s[i] (a wake-up is asked for that instant). Higher
// queues first; within a queue, `tiresias` (Discretized 2D-LAS) goes by arrival and
// `tiresias-gittins` (Discretized 2D-Gittins index) by decreasing Gittins index (ties: arrival).
// As in the authors' simulator, a waiting job never preempts a running job of its own queue; jobs
// of lower queues are preempted (lowest queue, latest arrival first) only if the waiting job then
// fits (GPUs counted cluster-wide). The target set is decided first, then the victims preempted
// and the picked jobs started; then any job that fits starts, in priority order, except those
// preempted at this instant (no preempt/restart loop).
//
// Gittins index: with quantum D and total attained service a, G(a) = P(S - a <= D | S > a) /
// E[min(S - a, D) | S > a], S from the empirical distribution of the total GPU-service of the jobs
// COMPLETED so far (online, no oracle), refreshed when that count grew by 1% (at least one job).
// No completed job larger than a: G = 0. No data yet: arrival order.
//
// Knobs ([scheduler.options]):
//   thresholds_gpu_s     queue thresholds, GPU-s, increasing (default [3600]: two queues split at one
//                        GPU-hour, the example configuration of the authors' simulator)
//   promote_after        STARVELIMIT P (default 0 = off): a job of a lower queue that has waited (in
//                        total since its last promotion) P x the time it ran since then goes back to
//                        Q0, its queue service counted from zero (as in the authors' simulator)
//   gittins_delta_gpu_s  (tiresias-gittins) D, GPU-s (default: the first threshold, like the static
//                        delta of the authors' simulator)
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/cluster/cluster_state.hpp"
#include "sim/engine/policy.hpp"
#include "sim/scheduling/policies/need_queue.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {
namespace {

/// Empirical distribution of completed jobs' service, with the Gittins index of attained service a.
class GittinsTable {
 public:
  void add(double s) { samples_.push_back(s); }
  /// Rebuild the sorted snapshot if the sample grew by 1% (at least one). True if rebuilt.
  bool refresh() {
    const std::size_t n = samples_.size(), m = sorted_.size();
    if (n <= m || static_cast<double>(n) < 1.01 * static_cast<double>(m)) return false;
    sorted_ = samples_;
    std::sort(sorted_.begin(), sorted_.end());
    prefix_.assign(sorted_.size() + 1, 0.0);
    for (std::size_t i = 0; i < sorted_.size(); ++i) prefix_[i + 1] = prefix_[i] + sorted_[i];
    return true;
  }
  double index(double a, double delta) const {
    auto above = [&](double x) {  // index of the first sample > x
      return static_cast<std::size_t>(std::upper_bound(sorted_.begin(), sorted_.end(), x) - sorted_.begin());
    };
    const std::size_t i0 = above(a), i1 = above(a + delta), n = sorted_.size();
    if (i0 == n) return 0.0;
    const auto done = static_cast<double>(i1 - i0);  // finish within the next delta
    const double spent = (prefix_[i1] - prefix_[i0]) - a * done + delta * static_cast<double>(n - i1);
    return spent > 0 ? done / spent : 0.0;
  }

 private:
  std::vector<double> samples_;
  std::vector<double> sorted_;
  std::vector<double> prefix_;
};

class Tiresias final : public Scheduler {
 public:
  Tiresias(const SchedulerParams& p, bool gittins) : gittins_(gittins) {
    const Options& o = p.opts();
    thresholds_ = o.numbers("thresholds_gpu_s", {3600.0},
                            "queue thresholds on attained GPU-service, GPU-s, increasing (default [3600])");
    for (std::size_t i = 0; i < thresholds_.size(); ++i)
      if (!(thresholds_[i] > 0) || !std::isfinite(thresholds_[i]) ||
          (i > 0 && thresholds_[i] <= thresholds_[i - 1]))
        bad("thresholds_gpu_s", "> 0 and strictly increasing");
    promote_after_ = o.number("promote_after", 0.0,
                              "STARVELIMIT: a job of a lower queue that waited this many times the time it "
                              "ran goes back to the top queue; 0 = off (default 0)");
    if (!(promote_after_ >= 0) || !std::isfinite(promote_after_)) bad("promote_after", ">= 0");
    if (gittins_) {
      delta_ = o.number("gittins_delta_gpu_s", thresholds_.empty() ? 3600.0 : thresholds_.front(),
                        "Gittins service quantum, GPU-s (default: the first threshold)");
      if (!(delta_ > 0) || !std::isfinite(delta_)) bad("gittins_delta_gpu_s", "> 0");
    }
    levels_ = static_cast<int>(thresholds_.size()) + 1;
    waiting_.resize(static_cast<std::size_t>(levels_));
    running_.resize(static_cast<std::size_t>(levels_));
    run_gpus_.assign(static_cast<std::size_t>(levels_), 0);
  }

  void enqueue(JobId id, const Launcher& launcher) override {
    launcher_ = &launcher;
    const auto i = static_cast<std::size_t>(id);
    if (jobs_.size() <= i) jobs_.resize(i + 1);
    State& s = jobs_[i];
    const JobSpec& j = launcher.job(id);
    s.need = j.gpus <= 0 ? 0 : (j.gpu_milli >= 1000 ? j.gpus : 1);
    s.victim_gpus = NeedQueue::bucket_of(j);
    s.waiting_since = launcher.now();
    add_waiting(id);
  }

  void finished(JobId id) override {
    if (st(id).running) remove_running(id);
    ++st(id).stint;
    if (gittins_ && launcher_ != nullptr) table_.add(launcher_->progress(id).attained_gpu_s);
  }

  /// A failure stopped it: it waits again in its current queue, keyed by its attained service (its
  /// starvation promotion is armed again when the policy next preempts it).
  void interrupted(JobId id, const Launcher& launcher) override {
    State& s = st(id);
    if (s.running) remove_running(id);
    s.attained = launcher.progress(id).attained_gpu_s;
    s.waiting_since = launcher.now();
    add_waiting(id);
  }

  void schedule(Launcher& launcher) override {
    const double now = launcher.now();
    ++call_;
    if (gittins_ && table_.refresh()) rekey_all();
    while (!events_.empty() && std::get<0>(events_.top()) <= now + 1e-9) {
      const auto [t, id, stint] = events_.top();
      events_.pop();
      if (st(id).stint != stint) continue;  // stale: started, stopped or finished since
      st(id).running ? demote(launcher, id) : promote(launcher, id);
    }
    std::vector<JobId> victims;
    const auto picked = decide(launcher, victims);
    for (JobId v : victims) {
      remove_running(v);
      launcher.preempt(v);
      State& s = st(v);
      s.attained = launcher.progress(v).attained_gpu_s;
      s.preempted_call = call_;
      s.waiting_since = now;
      add_waiting(v);
      arm_promotion(launcher, v);
    }
    for (JobId w : picked) start(launcher, w);
    // Fill: whatever fits, in priority order; only jobs needing at most the free GPUs are visited.
    for (int l = 0; l < levels_ && !launcher.saturated(); ++l)
      waiting_[static_cast<std::size_t>(l)].for_each_fitting(launcher, [&](const NeedQueue::Entry& e) {
        if (st(e.second).preempted_call != call_) start(launcher, e.second);
      });
  }

  std::size_t queued() const override { return queued_; }

 private:
  struct State {
    int level = 0;
    bool running = false;
    bool waiting = false;
    int need = 0;              ///< whole GPUs it needs (1 for a fractional job)
    int victim_gpus = 0;       ///< whole GPUs freed by preempting it (0: fractional or CPU-only); bucket
    int stint = 0;             ///< bumped at every start/stop: invalidates pending wake-ups
    long preempted_call = -1;  ///< schedule() call that preempted it last
    double key = 0;            ///< its waiting_ key (-Gittins index; 0 for plain tiresias)
    double attained = 0;       ///< total attained GPU-s when it last stopped (constant while waiting)
    double base_attained = 0;  ///< queue service counts from here (reset by promotion)
    double base_executed = 0;  ///< run time counts from here for STARVELIMIT
    double waited = 0;         ///< waiting time since the last promotion, before the current wait
    double waiting_since = 0;
  };
  using Event = std::tuple<double, JobId, int>;  ///< (time, job, stint)

  State& st(JobId id) { return jobs_[static_cast<std::size_t>(id)]; }
  [[noreturn]] static void bad(const std::string& key, const std::string& what) {
    throw InputError("", 0, "scheduler.options." + key, "must be finite and " + what);
  }

  void add_waiting(JobId id) {
    State& s = st(id);
    s.key = gittins_ ? -table_.index(s.attained, delta_) : 0.0;
    waiting_[static_cast<std::size_t>(s.level)].insert(s.victim_gpus, {s.key, id});
    s.waiting = true;
    ++queued_;
  }

  void remove_waiting(JobId id) {
    State& s = st(id);
    if (!s.waiting) return;
    waiting_[static_cast<std::size_t>(s.level)].erase(s.victim_gpus, {s.key, id});
    s.waiting = false;
    --queued_;
  }

  void rekey_all() {
    for (JobId id = 0; id < static_cast<JobId>(jobs_.size()); ++id)
      if (st(id).waiting) {
        remove_waiting(id);
        add_waiting(id);
      }
  }

  void remove_running(JobId id) {
    State& s = st(id);
    running_[static_cast<std::size_t>(s.level)].erase(id);
    run_gpus_[static_cast<std::size_t>(s.level)] -= s.victim_gpus;
    s.running = false;
    ++s.stint;
  }

  void add_running(Launcher& launcher, JobId id, const JobProgress& p) {
    State& s = st(id);
    s.running = true;
    ++s.stint;
    running_[static_cast<std::size_t>(s.level)].insert(id);
    run_gpus_[static_cast<std::size_t>(s.level)] += s.victim_gpus;
    if (s.level < levels_ - 1 && p.gpus > 0) {  // wake up when it crosses its queue's threshold
      const double left =
          thresholds_[static_cast<std::size_t>(s.level)] - (p.attained_gpu_s - s.base_attained);
      const double t = launcher.now() + std::max(left, 0.0) / p.gpus;
      events_.emplace(t, id, s.stint);
      launcher.wake_at(t);
    }
  }

  void start(Launcher& launcher, JobId w) {
    State& s = st(w);
    if (!launcher.try_start(w)) return;
    remove_waiting(w);
    const JobProgress p = launcher.progress(w);
    if (!p.running) {  // dropped by the core (no run time): forget it
      ++s.stint;
      return;
    }
    if (s.level > 0) s.waited += launcher.now() - s.waiting_since;
    add_running(launcher, w, p);
  }

  void demote(Launcher& launcher, JobId id) {
    State& s = st(id);
    const JobProgress p = launcher.progress(id);
    remove_running(id);
    int l = s.level + 1;  // at least one queue down (the wake-up was for that); more if it crossed more
    while (l < levels_ - 1 &&
           p.attained_gpu_s - s.base_attained >= thresholds_[static_cast<std::size_t>(l)] - 1e-6)
      ++l;
    s.level = std::min(l, levels_ - 1);
    add_running(launcher, id, p);
  }

  /// STARVELIMIT: arm (or perform) the promotion of a waiting job of a lower queue.
  void arm_promotion(Launcher& launcher, JobId id) {
    State& s = st(id);
    if (!(promote_after_ > 0) || s.level == 0) return;
    const JobProgress p = launcher.progress(id);
    const double t = s.waiting_since + promote_after_ * (p.executed_s - s.base_executed) - s.waited;
    if (t > launcher.now()) {
      events_.emplace(t, id, s.stint);
      launcher.wake_at(t);
    } else {
      promote(launcher, id);
    }
  }

  void promote(Launcher& launcher, JobId id) {
    State& s = st(id);
    if (s.level == 0) return;
    const JobProgress p = launcher.progress(id);
    remove_waiting(id);
    s.level = 0;
    s.base_attained = p.attained_gpu_s;
    s.base_executed = p.executed_s;
    s.waited = 0;
    s.waiting_since = launcher.now();
    add_waiting(id);
  }

  /// The target set: waiting jobs to start in priority order, and the running jobs of lower queues
  /// to preempt for them (lowest queue, latest arrival first).
  std::vector<JobId> decide(const Launcher& launcher, std::vector<JobId>& victims) {
    std::vector<JobId> picked;
    int lowest = -1;  // lowest queue with preemptible running jobs
    for (int l = levels_ - 1; l > 0 && lowest < 0; --l)
      if (run_gpus_[static_cast<std::size_t>(l)] > 0) lowest = l;
    if (lowest < 0) return picked;
    long avail = launcher.cluster().free_whole_of(~TypeMask{0});
    std::vector<long> taken(static_cast<std::size_t>(levels_), 0);  // victims' GPUs per queue
    int vl = lowest;                                                // victim cursor: queue, then
    auto vit = running_[static_cast<std::size_t>(vl)].rbegin();     // latest arrival first
    auto below = [&](int l) {  // GPUs still preemptible in queues below l
      long b = 0;
      for (int m = l + 1; m < levels_; ++m)
        b += run_gpus_[static_cast<std::size_t>(m)] - taken[static_cast<std::size_t>(m)];
      return b;
    };
    for (int l = 0; l < lowest; ++l) {
      if (avail == 0 && below(l) == 0) break;  // nothing more for this or any later job
      waiting_[static_cast<std::size_t>(l)].walk(
          [&] { return avail + below(l); },
          [&](const NeedQueue::Entry& e) {
            const JobId w = e.second;
            const long need = st(w).need;
            if (need <= avail) {
              avail -= need;
              picked.push_back(w);
              return true;
            }
            if (avail + below(l) < need) return true;
            while (avail < need) {
              while (vit == running_[static_cast<std::size_t>(vl)].rend()) {
                --vl;
                vit = running_[static_cast<std::size_t>(vl)].rbegin();
              }
              const JobId v = *vit++;
              const long g = st(v).victim_gpus;
              if (g == 0) continue;
              victims.push_back(v);
              taken[static_cast<std::size_t>(vl)] += g;
              avail += g;
            }
            avail -= need;
            picked.push_back(w);
            return true;
          });
    }
    return picked;
  }

  bool gittins_;
  std::vector<double> thresholds_;
  double promote_after_ = 0;
  double delta_ = 0;
  int levels_ = 1;
  const Launcher* launcher_ = nullptr;  ///< for finished(): the core outlives the policy's calls
  GittinsTable table_;
  std::vector<State> jobs_;
  /// Per queue: (key, id) of the waiting jobs. Ids grow in arrival order (the core enqueues jobs by
  /// index), so equal keys go FIFO.
  std::vector<NeedQueue> waiting_;
  std::vector<std::set<JobId>> running_;  ///< per queue, by arrival
  std::vector<long> run_gpus_;            ///< per queue: whole GPUs of its running jobs
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;  ///< demotions, promotions
  long call_ = 0;
  std::size_t queued_ = 0;  ///< waiting jobs, all queues
};

const SchedulerRegistrar kTiresias{
    "tiresias",
    "Tiresias discretized 2D-LAS: priority queues by attained GPU-service, FIFO within a queue, "
    "preemptive (knobs thresholds_gpu_s, promote_after)",
    [](const SchedulerParams& p) { return std::make_unique<Tiresias>(p, false); }};

const SchedulerRegistrar kTiresiasGittins{
    "tiresias-gittins",
    "Tiresias discretized 2D-Gittins index: queues by attained GPU-service, Gittins index (from "
    "completed jobs) within a queue (knobs thresholds_gpu_s, promote_after, gittins_delta_gpu_s)",
    [](const SchedulerParams& p) { return std::make_unique<Tiresias>(p, true); }};

}  // namespace
}  // namespace fleetsim
