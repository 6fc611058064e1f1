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

#include "sim/core/cluster_state.hpp"
#include "sim/scheduling/scheduler.hpp"
#include "workloads/input_error.hpp"

namespace fleetsim {
namespace {

/// Per-job multiplicative estimate error exp(sigma * z), z standard normal (Box-Muller).
class EstimateError {
 public:
  EstimateError(std::uint64_t seed, double sigma) : rng_(seed ^ 0x5eed5f1fULL), sigma_(sigma) {}
  double next() {
    if (!(sigma_ > 0)) return 1.0;
    const double u1 = uniform_open();  // (0, 1]
    const double u2 = uniform_open();
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
    return std::exp(sigma_ * z);
  }

 private:
  double uniform_open() {
    return static_cast<double>((rng_() >> 11) + 1) * (1.0 / 9007199254740992.0);  // 2^53
  }
  std::mt19937_64 rng_;
  double sigma_;
};

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

double read_sigma(const Options& o) {
  const double sigma = o.number("estimate_error", 0.0,
                                "sigma of the per-job log-normal run-time estimate error "
                                "(estimate = oracle x exp(sigma z)); 0 = exact (default 0)");
  if (!(sigma >= 0) || !std::isfinite(sigma))
    throw InputError("", 0, "scheduler.options.estimate_error", "must be a finite number >= 0");
  return sigma;
}

class Sjf final : public Scheduler {
 public:
  explicit Sjf(const SchedulerParams& p) : error_(p.seed, read_sigma(p.opts())) {}

  void enqueue(JobId id, const Launcher& launcher) override {
    const auto est = launcher.estimated_runtime(id);
    const double e = est ? *est * error_.next() : std::numeric_limits<double>::infinity();
    queue_.insert(NeedQueue::bucket_of(launcher.job(id)), {e, id});
  }

  void schedule(Launcher& launcher) override {
    const ClusterState& cluster = launcher.cluster();
    queue_.walk([&] { return static_cast<long>(cluster.free_whole_of(~TypeMask{0})); },
                [&](const NeedQueue::Entry& e) {
                  if (launcher.saturated()) return false;
                  if (launcher.try_start(e.second))
                    queue_.erase(NeedQueue::bucket_of(launcher.job(e.second)), e);
                  return true;
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
