#pragma once
// The order in which one serving replica reuses its free KV blocks, as vLLM v1's block pool does
// (kv_cache_manager.hpp): freed blocks join the back of the free queue and new blocks are taken from
// its front, evicting whatever was cached in them. With prefix caching, the full blocks of a
// preempted request stay cached while they wait in the queue (vLLM frees a request's blocks last
// block first, so its leading blocks are evicted last): re-admitted, the request finds the leading
// blocks that were not reused meanwhile and recomputes only the rest. The queue is a list of runs of
// blocks: anonymous ones (never findable again) and one run per preempted request.
#include <algorithm>
#include <deque>

namespace fleetsim {

class FreeBlockQueue {
 public:
  /// All `blocks` free, none findable.
  void reset(long blocks) {
    runs_.clear();
    next_ = 0;
    free_ = 0;
    release(blocks, 0);
  }

  long free() const { return free_; }

  /// Frees `anonymous` blocks, then `cached` blocks that stay findable through the returned ticket
  /// (-1 when cached is 0) until they are reused.
  long release(long anonymous, long cached) {
    if (anonymous > 0) {
      if (runs_.empty() || runs_.back().owned) {
        runs_.push_back({anonymous, false});
        ++next_;
      } else {
        runs_.back().blocks += anonymous;
      }
      free_ += anonymous;
    }
    if (cached <= 0) return -1;
    runs_.push_back({cached, true});
    free_ += cached;
    return next_++;
  }

  /// Blocks of the ticket's run still cached (0 once reused or claimed).
  long cached(long ticket) const {
    const long i = index(ticket);
    return i >= 0 && runs_[static_cast<std::size_t>(i)].owned ? runs_[static_cast<std::size_t>(i)].blocks : 0;
  }

  /// The ticket's owner takes back `n` of its cached blocks (its leading ones); the rest of the run
  /// stays free but is no longer findable.
  void claim(long ticket, long n) {
    const long i = index(ticket);
    if (i < 0 || !runs_[static_cast<std::size_t>(i)].owned) return;
    Run& r = runs_[static_cast<std::size_t>(i)];
    n = std::clamp(n, 0L, r.blocks);
    r.blocks -= n;
    r.owned = false;
    free_ -= n;
  }

  /// Allocates `n` blocks (n <= free()) from the front of the queue.
  void take(long n) {
    free_ -= n;
    while (n > 0 && !runs_.empty()) {
      Run& front = runs_.front();
      const long k = std::min(n, front.blocks);
      front.blocks -= k;
      n -= k;
      if (front.blocks == 0) runs_.pop_front();
    }
    while (!runs_.empty() && runs_.front().blocks == 0) runs_.pop_front();
  }

 private:
  struct Run {
    long blocks = 0;
    bool owned = false;  ///< a preempted request's cached blocks
  };
  // Runs carry consecutive serials: the front one's is next_ - runs_.size().
  long index(long ticket) const {
    const long front = next_ - static_cast<long>(runs_.size());
    return ticket >= front && ticket < next_ ? ticket - front : -1;
  }

  std::deque<Run> runs_;
  long next_ = 0;  ///< serial of the next run
  long free_ = 0;
};

}  // namespace fleetsim
