// fifo-skip: first-come first-served order, but any queued job that fits starts, even if an
// earlier one does not (greedy, no reservation: large jobs may starve).
#include <list>

#include "sim/engine/policy.hpp"

namespace fleetsim {
namespace {

class FifoSkip final : public Scheduler {
 public:
  void enqueue(JobId id, const Launcher&) override { queue_.push_back(id); }
  void schedule(Launcher& launcher) override {
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (launcher.saturated()) return;
      if (launcher.try_start(*it)) {
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
  }
  std::size_t queued() const override { return queue_.size(); }

 private:
  std::list<JobId> queue_;
};

const SchedulerRegistrar kRegistrar{"fifo-skip", "arrival order, but start any queued job that fits now",
                                    [](const SchedulerParams&) { return std::make_unique<FifoSkip>(); }};

}  // namespace
}  // namespace fleetsim
