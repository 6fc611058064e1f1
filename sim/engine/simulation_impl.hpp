#pragma once
// The engine's implementation class (internal to sim/engine): the event loop and policy interface
// in simulation.cpp, the views and controls it offers policies and hooks in simulation_views.cpp.
#include <simgrid/s4u/Engine.hpp>

#include <cmath>
#include <cstdint>
#include <memory>
#include <queue>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "sim/engine/colocation.hpp"
#include "sim/engine/execution.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/engine/slot_pool.hpp"
#include "sim/engine/trace_jobs.hpp"
#include "sim/platform/platform.hpp"

namespace fleetsim {

using detail::Event;
using detail::RequestKey;
using detail::RequestKeyHash;

class Simulation::Impl final : public Launcher, public ClusterControl {
 public:
  explicit Impl(SimulationParts p)
      : parts_(std::move(p)),
        state_(parts_.cluster),
        coloc_(state_),
        jobs_(parts_.stream ? TraceJobs(std::move(parts_.stream)) : TraceJobs(std::move(parts_.jobs))) {
    jobs_.set_make_request([this](const JobSpec& j) { return make_request(j, state_, parts_.trace_file); });
  }

  void add_observer(SimObserver& o) { observers_.push_back(&o); }
  void attach(ExecutionHook& h) { hooks_.push_back(&h); }
  void attach(ClusterHook& h) { cluster_hooks_.push_back(&h); }
  void add_tenant(NodeTenant& t) { tenants_.push_back(&t); }

  SimulationResult run();

  // --- Launcher
  bool try_start(JobId id) override { return start_with(id, jobs_.request(at(id))); }

  bool try_start_on(JobId id, int gpu_type) override;

  bool try_start_scaled(JobId id, int gpus) override;

  bool try_start_at(JobId id, const std::vector<NodeGpus>& where) override;

  void preempt(JobId id) override;

  void set_speed(JobId id, double speed) override;

  void set_progress_rate(JobId id, double rate) override;

  void wake_at(double t) override {
    if (t > now_ && std::isfinite(t)) events_.push({t, seq_++, -1, 0});
  }

  const JobSpec& job(JobId id) const override { return jobs_.spec(at(id)); }

  JobProgress progress(JobId id) const override;

  std::optional<double> estimated_runtime(JobId id) const override;

  std::optional<double> estimated_runtime_on(JobId id, int gpu_type) const override;

  std::optional<double> estimated_runtime_scaled(JobId id, int gpus) const override;

  int max_gpus(JobId id) const override;

  const std::vector<JobId>& running() const override { return running_; }
  const ClusterState& cluster() const override { return state_; }
  double now() const override { return now_; }
  bool saturated() const override {
    return !has_cpu_only_ &&
           state_.used_milli() + state_.down_milli() >= static_cast<long long>(state_.total_gpus()) * 1000;
  }

  // --- ClusterControl (for cluster hooks: failures)
  const std::vector<NodeTenant*>& tenants() const override { return tenants_; }
  bool nodes_can_leave() const override;
  std::vector<JobId> jobs_on_node(int n) const override;

  void node_down(int n) override { state_.set_down(n); }
  std::optional<Allocation> reserve(const Request& r) override {
    auto alloc = parts_.placer->place(r, state_);
    if (alloc) state_.allocate(*alloc);
    return alloc;
  }
  void release(const Allocation& a) override;

  std::optional<Allocation> reserve_shared(const Request& r) override {
    auto alloc = reserve(r);
    if (alloc) {
      const auto holder = -static_cast<JobId>(++shared_holders_);
      shared_.emplace_back(holder, *alloc);
      refresh_colocation(coloc_.add(holder, *alloc));
    }
    return alloc;
  }

  void node_up(int n) override;

  void interrupt(JobId id, double done, double overhead_s) override;
  double work_done(JobId id) const override;

  // --- JobClock (for the execution hook) and Launcher
  const JobModel& job_model() const override { return *parts_.job_model; }
  const Allocation& allocation(JobId id) const override { return live(id).alloc; }
  Execution& execution(JobId id) override { return live(id).run; }
  JobRecord& record(JobId id) override { return live(id).record; }

  void advance(JobId id) override {
    Live& l = live(id);
    advance_to(l.run, now_, l.record.gpus);
  }

  void reschedule(JobId id) override;

  void finish(JobId id) override;

 private:
  static std::size_t at(JobId id) { return static_cast<std::size_t>(id); }

  /// The state of a job from its arrival to its end. Jobs get a slot of pool_ when they arrive;
  /// unless parts_.keep_finished, a finished job's slot is reused, so this state takes memory for
  /// the jobs in the system only, not for the whole trace (issue 17: 10M-job traces).
  struct Live {
    JobRecord record;
    Execution run;
    Allocation alloc;
  };
  /// Live state of job `id`; a job that has not arrived or whose state was released is a bug of the
  /// caller (a policy or hook that kept a finished job): std::logic_error.
  Live& live(JobId id) { return pool_[slot(id)]; }
  const Live& live(JobId id) const { return pool_[slot(id)]; }
  std::int32_t slot(JobId id) const {
    const std::int32_t s = slot_of_[at(id)];
    if (s < 0) throw_not_live(id);
    return s;
  }
  [[noreturn]] void throw_not_live(JobId id) const;
  /// A phase end of job `id` with this epoch is current (the job is live and was not re-timed).
  bool current(JobId id, int epoch) const {
    const std::int32_t s = slot_of_[at(id)];
    return s >= 0 && pool_[s].run.epoch == epoch;
  }
  /// Job `id` arrives: a slot with a fresh record.
  void arrive(JobId id);
  /// Job `id` finished: its slot is reused (unless parts_.keep_finished).
  void release(JobId id);

  /// Place and start job `id` with request `r` (its own, or narrowed to one GPU type).
  bool start_with(JobId id, const Request& r);
  /// Start job `id` on `alloc` (found for request `r`); true also when it was dropped (no run time).
  bool start_allocated(JobId id, const Request& r, Allocation alloc);

  /// The job leaves its GPUs (finish or preemption); progress is up to date.
  void leave(JobId id);

  /// A job's phase ended: it is done unless the hook continues it.
  void phase_end(JobId id);

  /// Speed factor of job a while it shares a GPU with job b: the job model's measured pair rate
  /// where it has one, else (and always for a reserve_shared() holder, b < 0) the configured
  /// execution.colocation_slowdown.
  double pair_speed(JobId a, JobId b) const;

  /// Re-time running jobs whose co-runners changed.
  void refresh_colocation(const std::vector<JobId>& jobs);

  PlacementSummary summarize(const Request& r, const Allocation& a) const;

  void remove_running(JobId id);

  void skip(const JobSpec& job, const std::string& why);

  void prepare();

  /// Waits for the next event time `t` (or the end of an execution hook's activity) and brings the
  /// clock up.
  void wait_until(double t);

  /// Some execution hook has an activity in flight.
  bool hooks_busy() const;

  /// Earliest event of the cluster hooks (inf: none).
  double next_hook_event() const;

  /// Cluster-hook events matter only while jobs are left: arrivals to come, jobs running, or jobs
  /// waiting for nodes that are down to come back.
  bool work_left() const;

  void control_loop();

  SimulationParts parts_;
  ClusterState state_;
  Colocation coloc_;
  TraceJobs jobs_;  ///< the trace (parts_.jobs or parts_.stream, moved here)
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  Platform platform_;
  std::vector<ExecutionHook*> hooks_;
  std::vector<ClusterHook*> cluster_hooks_;
  std::vector<NodeTenant*> tenants_;
  std::vector<SimObserver*> observers_;
  SlotPool<Live> pool_;                ///< stable addresses: records are handed out by reference
  std::vector<std::int32_t> slot_of_;  ///< per job of the trace: its slot, -1 before arrival / after release
  mutable std::vector<double> estimates_;
  std::vector<char> runnable_;
  std::vector<JobId> running_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::unordered_set<RequestKey, RequestKeyHash> failed_;
  std::size_t next_arrival_ = 0;
  double now_ = 0;
  long seq_ = 0;
  bool has_cpu_only_ = false;
  int shared_holders_ = 0;  ///< reserve_shared() holders, co-location occupants -1, -2, ...
  /// The reserve_shared() holders still holding, with what they hold (release() finds them here).
  std::vector<std::pair<JobId, Allocation>> shared_;
  SimulationResult result_;
};

}  // namespace fleetsim
