#pragma once
// NeedQueue: the waiting-queue structure shared by queue-ordered policies (sjf, srtf, las,
// easy-backfill, tiresias).
#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "sim/cluster/cluster_state.hpp"
#include "sim/engine/policy.hpp"

namespace fleetsim {

/// Waiting jobs ordered by (key, id), bucketed by the whole GPUs they need (0: fractional or
/// CPU-only, which may fit at any time), so that a pass over the jobs that could fit c free GPUs
/// skips the others instead of asking the core about each.
class NeedQueue {
 public:
  using Entry = std::pair<double, JobId>;
  static int bucket_of(const JobSpec& j) { return j.gpus > 0 && j.gpu_milli >= 1000 ? j.gpus : 0; }
  /// Whole GPUs a job needs in cluster-wide GPU counting (a fractional job counts as one GPU).
  static long need_of(const JobSpec& j) { return j.gpus <= 0 ? 0 : (j.gpu_milli >= 1000 ? j.gpus : 1); }
  void insert(int bucket, Entry e) { size_ += buckets_[bucket].insert(e).second ? 1 : 0; }
  void erase(int bucket, Entry e) { size_ -= buckets_[bucket].erase(e); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  /// Visit the entries in (key, id) order, skipping buckets above cap() (re-read at every step).
  /// visit(entry) may erase that entry (only); returning false stops the walk.
  template <typename Cap, typename Visit>
  void walk(Cap cap, Visit visit) {
    struct Cursor {
      int need;
      const std::set<Entry>* set;
      std::set<Entry>::const_iterator it;
    };
    std::vector<Cursor> cursors;
    for (const auto& [need, q] : buckets_)
      if (!q.empty()) cursors.push_back({need, &q, q.begin()});
    while (true) {
      const long c = cap();
      Cursor* best = nullptr;
      for (auto& cur : cursors)
        if (cur.it != cur.set->end() && cur.need <= c && (best == nullptr || *cur.it < *best->it))
          best = &cur;
      if (best == nullptr) return;
      const Entry e = *best->it++;  // advance first: visit may erase e
      if (!visit(e)) return;
    }
  }

  /// Visit, in queue order, the entries that may fit the GPUs free now (re-read after every
  /// visit) until the cluster is saturated. visit(entry) may start and erase that entry.
  template <typename Visit>
  void for_each_fitting(const Launcher& launcher, Visit visit) {
    const ClusterState& cluster = launcher.cluster();
    walk([&] { return static_cast<long>(cluster.free_whole_of(~TypeMask{0})); },
         [&](const Entry& e) {
           if (launcher.saturated()) return false;
           visit(e);
           return true;
         });
  }

 private:
  std::map<int, std::set<Entry>> buckets_;
  std::size_t size_ = 0;
};

/// A running job a preemptive policy may stop; the larger key is stopped first.
struct Victim {
  double key;
  JobId id;
  int gpus;
};

/// Running whole-GPU jobs as victims keyed by key(id), largest key first (ties: latest arrival
/// first). Fractional-GPU jobs are never preempted to make room.
template <typename Key>
std::vector<Victim> whole_gpu_victims(const Launcher& launcher, Key key) {
  std::vector<Victim> v;
  for (JobId r : launcher.running()) {
    const JobSpec& j = launcher.job(r);
    if (j.gpus > 0 && j.gpu_milli >= 1000) v.push_back({key(r), r, j.gpus});
  }
  std::sort(v.begin(), v.end(),
            [](const Victim& x, const Victim& y) { return x.key != y.key ? x.key > y.key : x.id > y.id; });
  return v;
}

/// One preemptive decision over `waiting` (queue order = priority, GPUs counted cluster-wide): an
/// entry starts in the free GPUs, or else by stopping victims whose key exceeds bar(entry), largest
/// key first, if it then fits. list_victims() gives the candidates sorted by key, largest first; it
/// is called once, at the first entry that does not fit. Returns the entries to start and appends
/// the victims to `victims_out`.
template <typename ListVictims, typename Bar>
std::vector<NeedQueue::Entry> plan_preemptions(NeedQueue& waiting, const Launcher& launcher,
                                               ListVictims list_victims, Bar bar_of,
                                               std::vector<JobId>& victims_out) {
  std::vector<NeedQueue::Entry> picked;
  long avail = launcher.cluster().free_whole_of(~TypeMask{0});
  const long total = launcher.cluster().total_gpus();
  std::vector<Victim> victims;
  std::vector<long> prefix{0};  // GPUs of victims[0..k)
  bool listed = false;
  std::size_t taken = 0;
  waiting.walk([&] { return listed ? avail + prefix.back() - prefix[taken] : total; },
               [&](const NeedQueue::Entry& e) {
                 const long need = NeedQueue::need_of(launcher.job(e.second));
                 if (need <= avail) {
                   avail -= need;
                   picked.push_back(e);
                   return true;
                 }
                 if (!listed) {
                   victims = list_victims();
                   for (const auto& v : victims) prefix.push_back(prefix.back() + v.gpus);
                   listed = true;
                 }
                 const double bar = bar_of(e);
                 const auto eligible = static_cast<std::size_t>(
                     std::partition_point(victims.begin(), victims.end(),
                                          [bar](const Victim& v) { return v.key > bar; }) -
                     victims.begin());
                 if (eligible <= taken) return avail > 0;  // later entries have higher bars still
                 if (avail + prefix[eligible] - prefix[taken] < need) return true;
                 while (avail < need) avail += victims[taken++].gpus;
                 avail -= need;
                 picked.push_back(e);
                 return true;
               });
  for (std::size_t k = 0; k < taken; ++k) victims_out.push_back(victims[k].id);
  return picked;
}

/// Carry out a plan: stop the victims (re-queued under key_of(victim), read before stopping), start
/// the picked entries, then start whatever else fits, except the jobs stopped just now.
template <typename KeyOf>
void carry_out(NeedQueue& waiting, Launcher& launcher, const std::vector<NeedQueue::Entry>& picked,
               const std::vector<JobId>& stopped, KeyOf key_of) {
  for (JobId v : stopped) {
    const double key = key_of(v);
    launcher.preempt(v);
    waiting.insert(NeedQueue::bucket_of(launcher.job(v)), {key, v});
  }
  auto start = [&](const NeedQueue::Entry& e) {
    if (launcher.try_start(e.second)) waiting.erase(NeedQueue::bucket_of(launcher.job(e.second)), e);
  };
  for (const auto& e : picked) start(e);
  waiting.for_each_fitting(launcher, [&](const NeedQueue::Entry& e) {
    if (std::find(stopped.begin(), stopped.end(), e.second) == stopped.end()) start(e);
  });
}

}  // namespace fleetsim
