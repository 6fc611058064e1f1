// smallest-first: waiting jobs start in order of fewest GPUs requested, ties by arrival; a job
// that does not fit now is passed over for the next one. Non-preemptive: a started job runs to
// its end. Use it with scheduler.policy = "smallest-first".
#include <memory>
#include <set>

#include "sim/engine/policy.hpp"

namespace fleetsim {
namespace {

class SmallestFirst final : public Scheduler {
 public:
  // A job arrived (in submit order): queue it under its GPU count and arrival number.
  void enqueue(JobId id, const Launcher& launcher) override {
    queue_.insert({launcher.job(id).gpus, arrivals_++, id});
  }

  // Called after every batch of events at one instant: start whatever fits, smallest first.
  void schedule(Launcher& launcher) override {
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (launcher.saturated()) return;  // no job of any kind can start now
      if (launcher.try_start(it->id)) {  // placed and started (or dropped as untimeable)
        it = queue_.erase(it);
      } else {
        ++it;  // does not fit now: try the next one
      }
    }
  }

  std::size_t queued() const override { return queue_.size(); }

 private:
  struct Waiting {
    int gpus;
    long arrival;
    JobId id;
    bool operator<(const Waiting& o) const { return gpus != o.gpus ? gpus < o.gpus : arrival < o.arrival; }
  };
  std::set<Waiting> queue_;
  long arrivals_ = 0;
};

// One static registrar makes the policy known by name: no other file changes.
const SchedulerRegistrar kRegistrar{
    "smallest-first", "fewest GPUs first, ties by arrival; skips jobs that do not fit; non-preemptive",
    [](const SchedulerParams&) { return std::make_unique<SmallestFirst>(); }};

}  // namespace
}  // namespace fleetsim
