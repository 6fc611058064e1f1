#pragma once
// NeedQueue: the waiting-queue structure shared by queue-ordered policies (sjf, srtf, las,
// easy-backfill, tiresias).
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "sim/scheduling/scheduler.hpp"

namespace fleetsim {

/// Waiting jobs ordered by (key, id), bucketed by the whole GPUs they need (0: fractional or
/// CPU-only, which may fit at any time), so that a pass over the jobs that could fit c free GPUs
/// skips the others instead of asking the core about each.
class NeedQueue {
 public:
  using Entry = std::pair<double, JobId>;
  static int bucket_of(const JobSpec& j) { return j.gpus > 0 && j.gpu_milli >= 1000 ? j.gpus : 0; }
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

 private:
  std::map<int, std::set<Entry>> buckets_;
  std::size_t size_ = 0;
};

}  // namespace fleetsim
