// themis: finish-time fair GPU leases, after Themis (Mahajan et al., "Themis: Fair and Efficient
// GPU Cluster Scheduling", NSDI'20).
//
// Finish-time fairness. For an active job j (queued or running) at time `now`:
//   rho_j   = T_shared / T_independent
//   T_shared      = (now - submit_j) + remaining_j   (its finish time if it holds GPUs from now on)
//   T_independent = alone_j * max(1, gpus_j / (C / N))
// alone_j is the launcher's estimated run time alone (estimated_runtime(): the job model on the
// job's nominal placement), remaining_j = alone_j * remaining fraction of its work, C the cluster's
// GPUs and N the number of active jobs now. T_independent is the job's run time on a private 1/N
// share of the cluster (full speed if its request fits in that share, proportionally slower if
// not). rho > 1: the job is behind its fair share. Restart overheads are not in the estimate.
// (sim/metrics/fairness.hpp computes the same ratio after the fact, with N averaged over the
// job's lifetime.)
//
// Leases. Every job that starts gets its GPUs for a lease of `lease_s`; leases renew back to back
// (start + k * lease_s). When a lease ends while jobs are waiting, the job's GPUs go back to the
// arbiter together with any free GPUs (a policy wake-up at the lease end); with nobody waiting the
// lease simply renews. A lease-holding job keeps its GPUs until its lease ends, even if a more
// unfairly treated job arrives.
//
// Auction (simplified). Contenders are the waiting jobs plus the jobs whose lease ends now. As in
// Themis, only the share `fairness_knob` of contenders with the worst (highest) rho is offered the
// GPUs first: max(1, floor(f * contenders)) jobs, like the Themis artefact's arbiter
// (ThemisInterJobScheduler: num_jobs_to_consider = max((int)(d * N), 1)). Themis then runs a
// partial-allocation auction among their bids, maximising the product of their rho improvements.
// Here each offered job bids for exactly its request (gang-scheduled, no partial allocations),
// and the bids win greedily in order of valuation per GPU,
//   log(rho if it waits one more lease / rho if it runs now) / gpus
//   = log((T_shared + lease_s) / T_shared) / gpus,
// a greedy knapsack for the product objective, while the GPUs last (counted as GPUs, not
// placements). The other contenders then get what is left, worst rho first (Themis hands
// leftovers to the remaining apps so that no GPU idles). f = 1 offers the GPUs to everyone (the
// most efficient: short jobs gain most), f -> 0 to the single worst job (strict fairness).
// Running contenders that do not win are preempted (checkpoint; they pay the scenario's restart
// cost when they run again) and queue again. Winners start in their bid order; a winner the
// placer cannot fit (fragmentation, CPU, memory) is skipped, and every other queued job that fits
// the GPUs still free starts after them (in bid order; preempted losers last), so no GPU idles
// while a job could use it.
//
// Knobs ([scheduler.options]):
//   lease_s        lease length, s (default 600: Themis leases GPUs for minutes; its artefact
//                  sweeps 5 to 80 min; 10 min here)
//   fairness_knob  f in (0, 1]: share of contenders, worst rho first, offered GPUs first
//                  (default 0.8)
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "sim/cluster/cluster_state.hpp"
#include "sim/engine/policy.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {
namespace {

constexpr double kEps = 1e-6;
constexpr double kInf = std::numeric_limits<double>::infinity();

class Themis final : public Scheduler {
 public:
  explicit Themis(const Options& o)
      : lease_s_(o.number("lease_s", 600, "lease length in seconds; GPUs are re-auctioned at lease ends")),
        knob_(o.number(
            "fairness_knob", 0.8,
            "share of contenders (worst finish-time fairness first) offered GPUs first, in (0, 1]")) {
    if (!(lease_s_ > 0) || !std::isfinite(lease_s_))
      throw InputError("", 0, "scheduler.options.lease_s", "must be > 0, got " + std::to_string(lease_s_));
    if (!(knob_ > 0) || knob_ > 1)
      throw InputError("", 0, "scheduler.options.fairness_knob",
                       "must be in (0, 1], got " + std::to_string(knob_));
  }

  void enqueue(JobId id, const Launcher&) override {
    waiting_.push_back(id);
    const auto need = static_cast<std::size_t>(id) + 1;
    if (lease_end_.size() < need) lease_end_.resize(need, -1);
  }

  std::size_t queued() const override { return waiting_.size(); }

  void schedule(Launcher& launcher) override {
    if (waiting_.empty()) return;  // no contention: running leases renew
    const double now = launcher.now();
    const ClusterState& cluster = launcher.cluster();
    const double total = cluster.total_gpus();
    const double active = static_cast<double>(waiting_.size() + launcher.running().size());

    std::vector<Bid> bids;
    double budget = total - static_cast<double>(cluster.used_milli()) / 1000.0;  // free GPUs
    for (JobId j : launcher.running())
      if (lease_ends_now(j, now)) {
        bids.push_back(make_bid(launcher, j, true, now, total, active));
        budget += bids.back().gpus;
      }
    if (bids.empty() && launcher.saturated()) {  // nothing to hand out now
      arm_wake(launcher, now);
      return;
    }
    for (JobId j : waiting_) bids.push_back(make_bid(launcher, j, false, now, total, active));

    // Worst rho first; the first max(1, floor(f * n)) are offered the GPUs, by valuation per GPU.
    std::sort(bids.begin(), bids.end(),
              [](const Bid& a, const Bid& b) { return a.rho != b.rho ? a.rho > b.rho : a.id < b.id; });
    const auto offered = std::clamp<std::size_t>(
        static_cast<std::size_t>(std::floor(knob_ * static_cast<double>(bids.size()) + kEps)), 1,
        bids.size());
    std::stable_sort(bids.begin(), bids.begin() + static_cast<std::ptrdiff_t>(offered),
                     [](const Bid& a, const Bid& b) { return a.value > b.value; });
    for (Bid& b : bids)
      if (b.gpus <= budget + kEps) {
        b.wins = true;
        budget -= b.gpus;
      }

    // Losers among the lease holders give their GPUs back; winners start in bid order.
    for (const Bid& b : bids)
      if (b.running && !b.wins) {
        launcher.preempt(b.id);
        lease_end_[static_cast<std::size_t>(b.id)] = -1;
        waiting_.push_back(b.id);
      }
    for (const Bid& b : bids)
      if (!b.running && b.wins) start(launcher, b.id, now);
    // Whatever is still free (a winner did not fit) goes to the other queued jobs in bid order,
    // then back to the lease holders that lost (rather than leaving GPUs idle).
    for (const bool lost_lease : {false, true})
      for (const Bid& b : bids) {
        if (launcher.saturated()) break;
        if (!b.wins && b.running == lost_lease) start(launcher, b.id, now);
      }
    arm_wake(launcher, now);
  }

 private:
  struct Bid {
    JobId id = 0;
    bool running = false;
    double gpus = 0;
    double rho = 0;
    double value = 0;  ///< valuation per GPU of running now rather than one lease later
    bool wins = false;
  };

  Bid make_bid(const Launcher& launcher, JobId j, bool running, double now, double total,
               double active) const {
    Bid b;
    b.id = j;
    b.running = running;
    const JobSpec& spec = launcher.job(j);
    b.gpus = spec.gpus * (spec.gpus > 0 ? spec.gpu_milli / 1000.0 : 0.0);
    const auto alone = launcher.estimated_runtime(j);
    if (!alone || !(*alone > 0)) {  // cannot be timed: try it first (the simulation drops it)
      b.rho = b.value = kInf;
      return b;
    }
    const double shared =
        std::max(0.0, now - spec.submit_s) + launcher.progress(j).remaining_fraction * *alone;
    const double independent = *alone * std::max(1.0, total > 0 ? b.gpus * active / total : 1.0);
    b.rho = shared / independent;
    b.value = shared > 0 ? std::log((shared + lease_s_) / shared) / std::max(1.0, b.gpus) : kInf;
    return b;
  }

  /// Start a queued job; on success it leaves the queue and (if it runs) holds a fresh lease.
  void start(Launcher& launcher, JobId j, double now) {
    if (!launcher.try_start(j)) return;
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), j));
    if (launcher.progress(j).running) lease_end_[static_cast<std::size_t>(j)] = now + lease_s_;
  }

  /// Renew the job's lease past any ends that passed without contention; true if it ends now.
  bool lease_ends_now(JobId j, double now) {
    double& end = lease_end_[static_cast<std::size_t>(j)];
    if (end < 0) end = now + lease_s_;  // defensive: a running job always has a lease
    if (end < now - kEps) end += std::ceil((now - kEps - end) / lease_s_) * lease_s_;
    if (std::abs(end - now) <= kEps) {
      end += lease_s_;  // the next lease, if it wins this auction
      return true;
    }
    return false;
  }

  /// While jobs wait, wake up at the earliest lease end of a running job.
  void arm_wake(Launcher& launcher, double now) {
    if (waiting_.empty()) return;
    double next = kInf;
    for (JobId j : launcher.running()) {
      double end = lease_end_[static_cast<std::size_t>(j)];
      if (end < 0) continue;
      if (end <= now + kEps) end += (std::floor((now + kEps - end) / lease_s_) + 1) * lease_s_;
      next = std::min(next, end);
    }
    if (next < kInf && (pending_wake_ <= now + kEps || next < pending_wake_ - kEps)) {
      launcher.wake_at(next);
      pending_wake_ = next;
    }
  }

  double lease_s_;
  double knob_;
  std::vector<JobId> waiting_;     ///< queued jobs (new and preempted)
  std::vector<double> lease_end_;  ///< per job: end of its current lease (-1: not running)
  double pending_wake_ = -1;
};

const SchedulerRegistrar kRegistrar{
    "themis", "finish-time fairness (Themis, NSDI'20): GPU leases re-auctioned to the worst-off jobs",
    [](const SchedulerParams& p) { return std::make_unique<Themis>(p.opts()); }};

}  // namespace
}  // namespace fleetsim
