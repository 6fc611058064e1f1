// fifo: strict first-come first-served. Jobs start in arrival order; when the head of the queue
// does not fit, nothing behind it starts (no skipping, no backfilling).
#include <deque>

#include "sim/engine/policy.hpp"

namespace fleetsim {
namespace {

class Fifo final : public Scheduler {
 public:
  void enqueue(JobId id, const Launcher&) override { queue_.push_back(id); }
  void schedule(Launcher& launcher) override {
    while (!queue_.empty() && launcher.try_start(queue_.front())) queue_.pop_front();
  }
  std::size_t queued() const override { return queue_.size(); }

 private:
  std::deque<JobId> queue_;
};

const SchedulerRegistrar kRegistrar{"fifo", "strict first-come first-served: the head blocks the queue",
                                    [](const SchedulerParams&) { return std::make_unique<Fifo>(); }};

}  // namespace
}  // namespace fleetsim
