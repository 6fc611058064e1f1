// gavel: heterogeneity-aware max-min fairness in rounds, after Gavel (Narayanan et al.,
// "Heterogeneity-Aware Cluster Scheduling Policies for Deep Learning Workloads", OSDI'20).
//
// Allocation. Whenever the set of active jobs (queued + running) changed, the policy solves
// Gavel's max-min fairness LP (gavel_lp.hpp) over the cluster's GPU types: X[j][k] is the share
// of time job j should spend on type k, chosen to maximise the smallest normalised effective
// throughput scale_j * sum_k X[j][k] * T[j][k] / T_eq[j] (T_eq: the job's throughput on an equal,
// type-proportional share), then to use spare capacity (second stage, see gavel_lp.hpp).
// Per-type throughputs T[j][k] are 1 / (the job's run time alone on type k), from the scenario's
// own job model (Launcher::estimated_runtime_on: with the throughput model, the Gavel table's
// steps/s; a constant per job cancels in the normalised LP). Where the model gives the same time
// on every type (e.g. trace durations) the policy is max-min fairness over GPU time. Types a job
// may not use (its GPU-type constraint) get X = 0; a job the model cannot time on any type counts
// every type as equally fast (placement still honours its constraint). Multi-node (unconsolidated) slowdowns
// are ignored here.
//
// Rounds. Gavel realises X with rounds of `round_s`: at each round boundary, every (job, type)
// pair with X > 0 gets priority X[j][k] / (share of the job's rounds so far spent on type k)
// (infinite before it ran there; ties: larger X, then staying where it runs, then arrival
// order), and jobs are assigned greedily in priority order, at most one type per job, while the
// type has GPUs left (counted as GPUs, not placements). Jobs that keep their type keep running
// (no restart cost, like Gavel's lease extension); jobs that lose their turn or change type are
// preempted (checkpoint; restart cost on resume) and the others start on their type
// (Launcher::try_start_on). A planned job the placer cannot fit is skipped, and the remaining
// pairs are then tried in priority order on the GPUs still free. Decisions happen at round
// boundaries only, as in Gavel: a job arriving (or GPUs freed) mid-round waits for the next
// boundary (at most round_s). After a round in which jobs run, the next boundary is round_s
// later; a boundary at which nobody waits and nothing changed does nothing and schedules no
// further one, and the next arrival or completion then starts a round at once. The round
// counters run from each job's arrival (Gavel resets its time counters whenever it recomputes
// the allocation; with arrivals every few minutes that reset would make every job look unserved
// at every round). CPU-only jobs start at once and are not part of the LP.
//
// Knobs ([scheduler.options]):
//   round_s      round length, s (default 360: Gavel's 6-minute rounds)
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/cluster_state.hpp"
#include "sim/engine/policy.hpp"
#include "sim/scheduling/policies/gavel_lp.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {
namespace {

constexpr double kEps = 1e-6;

class Gavel final : public Scheduler {
 public:
  explicit Gavel(const Options& o)
      : round_s_(o.number("round_s", 360, "round length in seconds (allocation realised round by round)")) {
    if (!(round_s_ > 0) || !std::isfinite(round_s_))
      throw InputError("", 0, "scheduler.options.round_s", "must be > 0, got " + std::to_string(round_s_));
  }

  void enqueue(JobId id, const Launcher& launcher) override {
    if (!initialized_) init_types(launcher.cluster());
    const auto need = static_cast<std::size_t>(id) + 1;
    if (jobs_.size() < need) jobs_.resize(need);
    Job& job = jobs_[static_cast<std::size_t>(id)];
    job.speed = speeds(id, launcher);
    job.received.assign(capacity_.size(), 0);
    job.active = true;
    active_.push_back(id);
    dirty_ = true;
  }

  void finished(JobId id) override { drop(id); }

  /// A failure stopped it: it stays active, no longer running; the next round re-plans.
  void interrupted(JobId id, const Launcher&) override {
    Job& job = jobs_[static_cast<std::size_t>(id)];
    if (job.type >= 0) --running_count_;
    job.type = -1;
    dirty_ = true;
  }

  std::size_t queued() const override { return active_.size() - running_count_; }

  void schedule(Launcher& launcher) override {
    const double now = launcher.now();
    for (JobId j : std::vector<JobId>(active_)) {  // CPU-only jobs: start at once, outside the LP
      Job& job = jobs_[static_cast<std::size_t>(j)];
      if (launcher.job(j).gpus > 0 || job.type >= 0 || !launcher.try_start(j)) continue;
      if (launcher.progress(j).running) {
        job.type = 0;
        ++running_count_;
      } else {
        drop(j);  // the simulation could not time it: skipped
      }
    }
    if (active_.size() == running_count_ && !dirty_) return;  // nobody waits, nothing changed
    if (next_round_ > now + kEps) return;                     // mid-round: wait for its end
    round(launcher);
    // Rounds go on while jobs run; with nothing running nothing waiting could start either, and
    // the next arrival starts a round at once.
    next_round_ = running_count_ > 0 ? now + round_s_ : -1;
    if (next_round_ > 0) launcher.wake_at(next_round_);
  }

 private:
  struct Job {
    std::vector<double> speed;   ///< throughput per cluster GPU type (0 = cannot run there)
    std::vector<double> x;       ///< LP allocation per type
    std::vector<long> received;  ///< rounds run on each type
    long rounds = 0;             ///< rounds active
    int type = -1;               ///< type it runs on now (-1: not running)
    int plan = -1;               ///< type planned for this round (-1: none)
    bool active = false;         ///< queued or running
  };
  struct Entry {
    JobId id;
    int type;
    double priority, x;
    bool stays;
    std::size_t order;
  };

  void init_types(const ClusterState& cluster) {
    initialized_ = true;
    capacity_.assign(static_cast<std::size_t>(cluster.type_count()), 0.0);
    for (int n = 0; n < cluster.node_count(); ++n)
      if (cluster.node_type(n) >= 0)
        capacity_[static_cast<std::size_t>(cluster.node_type(n))] += cluster.node_gpus(n);
  }

  /// Per-type throughput of a job (see the header): 1 / run time alone on the type, 0 where it
  /// may not run; equal speeds everywhere if the model cannot time it on any type.
  static std::vector<double> speeds(JobId id, const Launcher& launcher) {
    const int types = launcher.cluster().type_count();
    std::vector<double> s(static_cast<std::size_t>(types), 0.0);
    bool timed = false;
    for (int k = 0; k < types; ++k) {
      const auto t = launcher.estimated_runtime_on(id, k);
      if (t && *t > 0) {
        s[static_cast<std::size_t>(k)] = 1.0 / *t;
        timed = true;
      }
    }
    if (!timed) s.assign(s.size(), 1.0);  // placement still honours its type constraint
    return s;
  }

  void drop(JobId id) {
    Job& job = jobs_[static_cast<std::size_t>(id)];
    if (job.type >= 0) --running_count_;
    job.type = -1;
    job.active = false;
    active_.erase(std::find(active_.begin(), active_.end(), id));
    dirty_ = true;
  }

  void solve(const Launcher& launcher) {
    GavelLpProblem p;
    p.capacity = capacity_;
    for (JobId j : active_) {
      if (launcher.job(j).gpus == 0) continue;
      p.scale.push_back(launcher.job(j).gpus);
      p.throughput.push_back(jobs_[static_cast<std::size_t>(j)].speed);
    }
    const GavelLpSolution s = solve_max_min_fairness(p);
    std::size_t row = 0;
    for (JobId j : active_) {
      if (launcher.job(j).gpus == 0) continue;
      Job& job = jobs_[static_cast<std::size_t>(j)];
      job.x = s.x[row++];
      if (!s.ok)  // LP failed: every usable type alike, so jobs take turns by rounds received
        for (std::size_t k = 0; k < job.x.size(); ++k) job.x[k] = job.speed[k] > 0 ? 1.0 : 0.0;
    }
    dirty_ = false;
  }

  void round(Launcher& launcher) {
    if (dirty_) solve(launcher);
    constexpr double kInf = std::numeric_limits<double>::infinity();
    std::vector<Entry> entries;
    for (std::size_t i = 0; i < active_.size(); ++i) {
      const JobId j = active_[i];
      Job& job = jobs_[static_cast<std::size_t>(j)];
      if (launcher.job(j).gpus == 0) continue;
      ++job.rounds;
      for (std::size_t k = 0; k < job.x.size(); ++k) {
        if (job.x[k] <= 1e-9) continue;
        const double got = static_cast<double>(job.received[k]) / static_cast<double>(job.rounds);
        entries.push_back({j, static_cast<int>(k), got > 0 ? job.x[k] / got : kInf, job.x[k],
                           job.type == static_cast<int>(k), i});
      }
    }
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      if (a.priority != b.priority) return a.priority > b.priority;
      if (a.x != b.x) return a.x > b.x;
      if (a.stays != b.stays) return a.stays;
      return a.order != b.order ? a.order < b.order : a.type < b.type;
    });
    // Plan: greedy by priority, one type per job, while GPUs of the type last.
    std::vector<double> left = capacity_;
    for (JobId j : active_) jobs_[static_cast<std::size_t>(j)].plan = -1;
    for (const Entry& e : entries) {
      Job& job = jobs_[static_cast<std::size_t>(e.id)];
      const int gpus = launcher.job(e.id).gpus;
      if (job.plan >= 0 || gpus > left[static_cast<std::size_t>(e.type)] + kEps) continue;
      job.plan = e.type;
      left[static_cast<std::size_t>(e.type)] -= gpus;
    }
    for (JobId j : std::vector<JobId>(active_)) {  // off-plan jobs give their GPUs back
      Job& job = jobs_[static_cast<std::size_t>(j)];
      if (job.type >= 0 && launcher.job(j).gpus > 0 && job.plan != job.type) {
        launcher.preempt(j);
        job.type = -1;
        --running_count_;
      }
    }
    for (int pass = 0; pass < 2; ++pass)  // planned starts, then any pair on the GPUs still free
      for (const Entry& e : entries) {
        if (launcher.saturated()) break;
        Job& job = jobs_[static_cast<std::size_t>(e.id)];
        if (!job.active || job.type >= 0 || (pass == 0 && job.plan != e.type)) continue;
        if (!launcher.try_start_on(e.id, e.type)) continue;
        if (launcher.progress(e.id).running) {
          job.type = e.type;
          ++running_count_;
        } else {
          drop(e.id);  // the simulation could not time it: skipped
        }
      }
    for (JobId j : active_) {
      Job& job = jobs_[static_cast<std::size_t>(j)];
      if (job.type >= 0 && launcher.job(j).gpus > 0) ++job.received[static_cast<std::size_t>(job.type)];
    }
  }

  double round_s_;
  std::vector<double> capacity_;  ///< GPUs per cluster type
  std::vector<Job> jobs_;         ///< per job id
  std::vector<JobId> active_;     ///< queued + running, arrival order
  std::size_t running_count_ = 0;
  bool dirty_ = false;
  bool initialized_ = false;
  double next_round_ = -1;
};

const SchedulerRegistrar kRegistrar{
    "gavel", "heterogeneity-aware max-min fairness LP realised in rounds (Gavel, OSDI'20)",
    [](const SchedulerParams& p) { return std::make_unique<Gavel>(p.opts()); }};

}  // namespace
}  // namespace fleetsim
