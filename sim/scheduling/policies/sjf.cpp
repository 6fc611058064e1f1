// sjf: non-preemptive shortest job first (Conway, Maxwell & Miller, "Theory of Scheduling", 1967;
// a usual baseline of GPU-cluster schedulers). Waiting jobs are ordered by their estimated run time
// (ties: arrival order) and every job that fits now starts, in that order; one that does not fit
// is skipped, not waited for (large jobs may starve).
//
// The estimate is the launcher's oracle (estimated_runtime: the job model's run time alone on its
// nominal placement), times a per-job log-normal error factor exp(sigma * z), z ~ N(0, 1) (median
// 1), so that estimates with configurable error can be studied. The factor is drawn once per job at
// arrival from a std::mt19937_64 seeded with the scenario seed, by Box-Muller (std::*_distribution
// algorithms differ between standard libraries), so runs are deterministic for a given seed.
//
// Knobs ([scheduler.options]):
//   estimate_error  sigma of the multiplicative log-normal estimate error (default 0 = exact)
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "sim/cluster/cluster_state.hpp"
#include "sim/engine/policy.hpp"
#include "sim/scheduling/policies/estimate_error.hpp"
#include "sim/scheduling/policies/need_queue.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {
namespace {

class Sjf final : public Scheduler {
 public:
  explicit Sjf(const SchedulerParams& p) : error_(p.seed, read_sigma(p.opts())) {}

  void enqueue(JobId id, const Launcher& launcher) override {
    const auto est = launcher.estimated_runtime(id);
    const double e = est ? *est * error_.next() : std::numeric_limits<double>::infinity();
    queue_.insert(NeedQueue::bucket_of(launcher.job(id)), {e, id});
  }

  void schedule(Launcher& launcher) override {
    queue_.for_each_fitting(launcher, [&](const NeedQueue::Entry& e) {
      if (launcher.try_start(e.second)) queue_.erase(NeedQueue::bucket_of(launcher.job(e.second)), e);
    });
  }

  std::size_t queued() const override { return queue_.size(); }

 private:
  EstimateError error_;
  /// (estimate, id); ids grow in arrival order (the core enqueues jobs by index), so ties go FIFO.
  NeedQueue queue_;
};

const SchedulerRegistrar kRegistrar{
    "sjf", "shortest (estimated) job first, non-preemptive; any job that fits starts (knob estimate_error)",
    [](const SchedulerParams& p) { return std::make_unique<Sjf>(p); }};

}  // namespace
}  // namespace fleetsim
