#include "sim/engine/simulation.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <unordered_set>

#include "sim/engine/colocation.hpp"
#include "sim/engine/execution.hpp"
#include "sim/platform/platform.hpp"
#include "sim/platform/simgrid_engine.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {

using detail::Event;
using detail::RequestKey;
using detail::RequestKeyHash;

class Simulation::Impl final : public Launcher, public ClusterControl {
 public:
  explicit Impl(SimulationParts p) : parts_(std::move(p)), state_(parts_.cluster), coloc_(state_) {}

  void add_observer(SimObserver& o) { observers_.push_back(&o); }
  void attach(ExecutionHook& h) { hook_ = &h; }
  void attach(ClusterHook& h) { cluster_hooks_.push_back(&h); }

  SimulationResult run() {
    engine_ = start_simgrid({.ptasks = hook_ != nullptr && hook_->needs_ptasks()});
    platform_ = build_platform(parts_.cluster);
    simgrid::s4u::Host* controller_host = nullptr;
    for (const auto& n : platform_.nodes) {
      controller_host = n.cpu != nullptr ? n.cpu : (n.gpus.empty() ? nullptr : n.gpus.front());
      if (controller_host != nullptr) break;
    }
    if (controller_host == nullptr) throw InputError("", 0, "cluster", "the cluster has no hosts");
    if (hook_ != nullptr) hook_->attach(*this, platform_, parts_.jobs.size());
    for (auto* ch : cluster_hooks_) ch->attach(*this, parts_.jobs.size());
    prepare();
    simgrid::s4u::Actor::create("controller", controller_host, [this] { control_loop(); });
    engine_->run();
    for (auto* o : observers_) o->on_end(now_);
    if (hook_ != nullptr) hook_->on_end(now_);
    for (auto* ch : cluster_hooks_) ch->on_end(now_);
    result_.end_time_s = now_;
    return result_;
  }

  // --- Launcher
  bool try_start(JobId id) override { return start_with(id, requests_[at(id)]); }

  bool try_start_on(JobId id, int gpu_type) override {
    const Request& full = requests_[at(id)];
    if (full.gpus == 0) return try_start(id);
    if (gpu_type < 0 || gpu_type >= state_.type_count()) return false;
    Request r = full;  // same request, type mask narrowed: its own key in the failed-placement cache
    r.types &= TypeMask{1} << gpu_type;
    if (r.types == 0) return false;
    return start_with(id, r);
  }

  void preempt(JobId id) override {
    Execution& run = runs_[at(id)];
    if (run.running_index < 0) return;
    advance(id);
    leave(id);
    run.preempted_at = now_;
    ++run.epoch;  // its phase-end event is now stale
    for (auto* o : observers_) o->on_job_preempted(records_[at(id)]);
  }

  void set_speed(JobId id, double speed) override {
    Execution& run = runs_[at(id)];
    if (run.running_index < 0 || !(speed > 0) || speed == run.policy_speed) return;
    advance(id);
    run.policy_speed = speed;
    reschedule(id);
  }

  void wake_at(double t) override {
    if (t > now_ && std::isfinite(t)) events_.push({t, seq_++, -1, 0});
  }

  const JobSpec& job(JobId id) const override { return parts_.jobs[at(id)]; }

  JobProgress progress(JobId id) const override {
    const Execution& run = runs_[at(id)];
    const JobRecord& rec = records_[at(id)];
    JobProgress p;
    p.running = run.running_index >= 0;
    p.first_start_s = rec.start_s;
    p.restarts = rec.restarts;
    p.preempted_s = rec.preempted_s;
    double done = run.done, attained = run.attained_gpu_s, executed = run.executed_s;
    if (p.running) {
      const double dt = now_ - run.since;
      const double work_dt = run.held ? 0.0 : std::max(0.0, dt - run.overhead_left);
      done = std::min(1.0, done + work_dt * run.speed() / run.runtime);
      if (run.held && hook_ != nullptr) done += hook_->held_progress(id);
      attained += dt * rec.gpus;
      executed += dt;
      p.gpus = rec.gpus;
      p.expected_end_s = run.since + run.overhead_left + (1.0 - run.done) * run.runtime / run.speed();
    } else if (run.preempted_at >= 0) {
      p.preempted_s += now_ - run.preempted_at;
    }
    p.remaining_fraction = run.runtime > 0 || p.running ? 1.0 - done : 1.0;
    p.attained_gpu_s = attained;
    p.executed_s = executed;
    return p;
  }

  std::optional<double> estimated_runtime(JobId id) const override {
    const auto i = at(id);
    if (estimates_[i] >= 0) return estimates_[i];
    // Nominal placement: the first allowed GPU type of the cluster.
    const Request& r = requests_[i];
    int type = 0;
    while (type < state_.type_count() && (r.types & (TypeMask{1} << type)) == 0) ++type;
    const auto v = estimated_runtime_on(id, type < state_.type_count() ? type : 0);
    if (v) estimates_[i] = *v;
    return v;
  }

  std::optional<double> estimated_runtime_on(JobId id, int gpu_type) const override {
    const Request& r = requests_[at(id)];
    if (gpu_type < 0 || gpu_type >= state_.type_count()) return std::nullopt;
    if (r.gpus > 0 && (r.types & (TypeMask{1} << gpu_type)) == 0) return std::nullopt;
    PlacementSummary where;  // consolidated: one node where the job fits one
    where.gpus = r.gpus;
    where.gpu_milli = r.milli;
    where.gpu_type = state_.type_name(gpu_type);
    std::string why;
    return parts_.job_model->run_time_s(parts_.jobs[at(id)], where, why);
  }

  const std::vector<JobId>& running() const override { return running_; }
  const ClusterState& cluster() const override { return state_; }
  double now() const override { return now_; }
  bool saturated() const override {
    return !has_cpu_only_ &&
           state_.used_milli() + state_.down_milli() >= static_cast<long long>(state_.total_gpus()) * 1000;
  }

  // --- ClusterControl (for cluster hooks: failures)
  std::vector<JobId> jobs_on_node(int n) const override {
    std::vector<JobId> out;
    for (JobId id : running_)
      for (const auto& slot : allocations_[at(id)].slots)
        if (slot.node == n) {
          out.push_back(id);
          break;
        }
    std::sort(out.begin(), out.end());
    return out;
  }

  void node_down(int n) override { state_.set_down(n); }

  void node_up(int n) override {
    if (!state_.is_down(n)) return;
    state_.set_up(n);
    failed_.clear();  // capacity came back
  }

  void interrupt(JobId id, double done, double overhead_s) override {
    Execution& run = runs_[at(id)];
    if (run.running_index < 0) return;
    advance(id);
    leave(id);
    run.done = std::clamp(done, 0.0, run.done);
    run.preempted_at = now_;
    run.pending_overhead = std::max(0.0, overhead_s);
    ++run.epoch;  // its phase-end event is now stale
    for (auto* o : observers_) o->on_job_preempted(records_[at(id)]);
    parts_.scheduler->interrupted(id, *this);
  }

  // --- JobClock (for the execution hook)
  const JobModel& job_model() const override { return *parts_.job_model; }
  const Allocation& allocation(JobId id) const override { return allocations_[at(id)]; }
  Execution& execution(JobId id) override { return runs_[at(id)]; }
  JobRecord& record(JobId id) override { return records_[at(id)]; }

  void advance(JobId id) override { advance_to(runs_[at(id)], now_, records_[at(id)].gpus); }

  void reschedule(JobId id) override {
    Execution& run = runs_[at(id)];
    ++run.epoch;
    const double t = phase_end_time(run);
    if (std::isfinite(t)) events_.push({t, seq_++, id, run.epoch});
  }

  void finish(JobId id) override {
    advance(id);
    leave(id);
    JobRecord& rec = records_[at(id)];
    rec.end_s = now_;
    ++result_.completed;
    parts_.scheduler->finished(id);
    for (auto* ch : cluster_hooks_) ch->on_finish(id);
    for (auto* o : observers_) o->on_job_finished(rec);
  }

 private:
  static std::size_t at(JobId id) { return static_cast<std::size_t>(id); }

  /// Place and start job `id` with request `r` (its own, or narrowed to one GPU type).
  bool start_with(JobId id, const Request& r) {
    const auto i = at(id);
    Execution& run = runs_[i];
    if (run.running_index >= 0) return true;
    const RequestKey key{r.gpus, r.milli, r.types, r.cpu_milli, r.memory_mib, r.single_node};
    if (failed_.count(key) > 0) return false;
    auto alloc = parts_.placer->place(r, state_);
    if (!alloc) {
      failed_.insert(key);  // stays infeasible until something is released
      return false;
    }
    JobRecord& rec = records_[i];
    const JobSpec& spec = parts_.jobs[i];
    const PlacementSummary where = summarize(r, *alloc);
    std::string why;
    const auto runtime = parts_.job_model->run_time_s(spec, where, why);
    if (!runtime || !std::isfinite(*runtime) || *runtime < 0) {
      skip(spec, why.empty() ? "job model gave no run time" : why);
      return true;  // leaves the queue
    }
    state_.allocate(*alloc);
    const bool restart = rec.start_s >= 0;
    if (!restart) {
      rec.start_s = now_;
      rec.alone_s = *runtime;
    }
    rec.gpu_type = where.gpu_type;
    rec.nodes = alloc->nodes;
    rec.leaves = alloc->leaves;
    rec.gpus = r.gpus * (r.milli / 1000.0);
    run.runtime = *runtime;
    run.policy_speed = 1;
    run.coloc_speed = 1;
    run.since = now_;
    run.overhead_left = 0;
    if (restart) {
      ++rec.restarts;
      rec.preempted_s += now_ - run.preempted_at;
      run.overhead_left = run.pending_overhead >= 0
                              ? run.pending_overhead
                              : parts_.restart_overhead_s +
                                    parts_.restart_s_per_gb * parts_.state_gb_per_gpu * std::max(1, r.gpus);
      run.pending_overhead = -1;
      rec.wasted_gpu_s += run.overhead_left * rec.gpus;
    }
    allocations_[i] = std::move(*alloc);
    run.running_index = static_cast<int>(running_.size());
    running_.push_back(id);
    const auto neighbours = coloc_.add(id, allocations_[i]);
    if (!neighbours.empty())
      run.coloc_speed =
          coloc_.speed(id, allocations_[i], [this](JobId a, JobId b) { return pair_speed(a, b); });
    run.held = false;
    run.target = 1;
    for (auto* ch : cluster_hooks_) ch->on_start(id, where);
    if (hook_ != nullptr) hook_->on_start(id, where);
    reschedule(id);
    refresh_colocation(neighbours);
    for (auto* o : observers_) o->on_job_started(rec);
    return true;
  }

  /// The job leaves its GPUs (finish or preemption); progress is up to date.
  void leave(JobId id) {
    const auto i = at(id);
    if (hook_ != nullptr) hook_->on_leave(id);
    for (auto* ch : cluster_hooks_) ch->on_leave(id);
    runs_[i].held = false;
    runs_[i].target = 1;
    state_.release(allocations_[i]);
    const auto neighbours = coloc_.remove(id, allocations_[i]);
    allocations_[i] = Allocation{};
    remove_running(id);
    refresh_colocation(neighbours);
    failed_.clear();
  }

  /// A job's phase ended: it is done unless the hook continues it.
  void phase_end(JobId id) {
    if (hook_ != nullptr && hook_->on_phase_end(id)) return;
    finish(id);
  }

  /// Speed factor of job a while it shares a GPU with job b: the job model's measured pair rate
  /// where it has one, else the configured execution.colocation_slowdown.
  double pair_speed(JobId a, JobId b) const {
    const auto v =
        parts_.job_model->colocated_speed(parts_.jobs[at(a)], parts_.jobs[at(b)], records_[at(a)].gpu_type);
    return v ? *v : parts_.colocation_slowdown;
  }

  /// Re-time running jobs whose co-runners changed.
  void refresh_colocation(const std::vector<JobId>& jobs) {
    for (JobId j : jobs) {
      Execution& run = runs_[at(j)];
      if (run.running_index < 0) continue;
      const double c =
          coloc_.speed(j, allocations_[at(j)], [this](JobId a, JobId b) { return pair_speed(a, b); });
      if (c == run.coloc_speed) continue;
      advance(j);
      run.coloc_speed = c;
      reschedule(j);
    }
  }

  PlacementSummary summarize(const Request& r, const Allocation& a) const {
    PlacementSummary where;
    where.gpus = r.gpus;
    where.gpu_milli = r.milli;
    where.nodes = a.nodes;
    where.leaves = a.leaves;
    for (const auto& s : a.slots)
      if (s.gpu >= 0) {
        where.gpu_type = state_.type_name(state_.node_type(s.node));
        break;
      }
    return where;
  }

  void remove_running(JobId id) {
    Execution& run = runs_[at(id)];
    const int pos = run.running_index;
    const JobId last = running_.back();
    running_[static_cast<std::size_t>(pos)] = last;
    runs_[at(last)].running_index = pos;
    running_.pop_back();
    run.running_index = -1;
  }

  void skip(const JobSpec& job, const std::string& why) {
    ++result_.skipped;
    for (auto* o : observers_) o->on_job_skipped(job, why);
  }

  void prepare() {
    const auto n = parts_.jobs.size();
    requests_.reserve(n);
    records_.resize(n);
    allocations_.resize(n);
    runs_.resize(n);
    estimates_.assign(n, -1.0);
    runnable_.assign(n, 1);
    result_.jobs = static_cast<long>(n);
    for (auto* o : observers_) o->on_start(state_.total_gpus(), result_.jobs);
    for (std::size_t i = 0; i < n; ++i) {
      const JobSpec& j = parts_.jobs[i];
      requests_.push_back(make_request(j, state_, parts_.trace_file));
      JobRecord& rec = records_[i];
      rec.spec = &j;
      rec.index = static_cast<int>(i);
      rec.submit_s = j.submit_s;
      if (j.gpus == 0) has_cpu_only_ = true;
      std::string why;
      if (!state_.ever_fits(requests_.back(), why) || !parts_.job_model->can_time(j, why)) {
        runnable_[i] = 0;
        skip(j, why);
      }
    }
    parts_.placer->observe_workload(requests_);
  }

  /// Waits for the next event time `t` (or an activity of the hook) and brings the clock up.
  void wait_until(double t) {
    if (hook_ != nullptr && hook_->busy()) {
      const auto done = hook_->wait(t);
      now_ = std::max(now_, simgrid::s4u::Engine::get_clock());
      if (done) hook_->resume(*done);
      return;
    }
    if (t > now_) simgrid::s4u::this_actor::sleep_until(t);
    now_ = std::max(now_, t);
  }

  /// Earliest event of the cluster hooks (inf: none).
  double next_hook_event() const {
    double t = std::numeric_limits<double>::infinity();
    for (const auto* ch : cluster_hooks_) t = std::min(t, ch->next_event_s());
    return t;
  }

  /// Cluster-hook events matter only while jobs are left: arrivals to come, jobs running, or jobs
  /// waiting for nodes that are down to come back.
  bool work_left() const {
    return next_arrival_ < parts_.jobs.size() || !running_.empty() ||
           (parts_.scheduler->queued() > 0 && state_.down_nodes() > 0);
  }

  void control_loop() {
    const std::size_t n = parts_.jobs.size();
    constexpr double kInf = std::numeric_limits<double>::infinity();
    while (true) {
      while (next_arrival_ < n && runnable_[next_arrival_] == 0) ++next_arrival_;
      // Drop stale phase ends (preempted or re-timed jobs) at the top of the heap.
      while (!events_.empty() && events_.top().job >= 0 &&
             events_.top().epoch != runs_[at(events_.top().job)].epoch)
        events_.pop();
      double t = kInf;
      if (next_arrival_ < n) t = parts_.jobs[next_arrival_].submit_s;
      if (!events_.empty()) t = std::min(t, events_.top().time);
      if (!cluster_hooks_.empty() && work_left()) t = std::min(t, next_hook_event());
      if (t == kInf && (hook_ == nullptr || !hook_->busy())) break;
      wait_until(t);
      while (!events_.empty() && events_.top().time <= now_) {
        const Event e = events_.top();
        events_.pop();
        if (e.job >= 0 && e.epoch == runs_[at(e.job)].epoch) phase_end(e.job);
      }
      for (auto* ch : cluster_hooks_)
        while (ch->next_event_s() <= now_) ch->on_event();
      while (next_arrival_ < n && parts_.jobs[next_arrival_].submit_s <= now_) {
        if (runnable_[next_arrival_] != 0) {
          parts_.scheduler->enqueue(static_cast<JobId>(next_arrival_), *this);
          for (auto* o : observers_) o->on_job_submitted(records_[next_arrival_]);
        }
        ++next_arrival_;
      }
      parts_.scheduler->schedule(*this);
      ++result_.events;
      StateSample s;
      s.time_s = now_;
      s.busy_gpus = static_cast<double>(state_.used_milli()) / 1000.0;
      s.running = static_cast<long>(running_.size());
      s.queued = static_cast<long>(parts_.scheduler->queued());
      s.completed = result_.completed;
      for (auto* o : observers_) o->on_sample(s);
    }
    // Jobs still queued with nothing running can never start (e.g. CPU/memory spread).
    if (parts_.scheduler->queued() > 0) {
      for (std::size_t i = 0; i < n; ++i) {
        if (runnable_[i] != 0 && records_[i].end_s < 0 && runs_[i].running_index < 0)
          skip(parts_.jobs[i], "could not be placed even on the otherwise idle cluster");
      }
    }
  }

  SimulationParts parts_;
  ClusterState state_;
  Colocation coloc_;
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  Platform platform_;
  ExecutionHook* hook_ = nullptr;
  std::vector<ClusterHook*> cluster_hooks_;
  std::vector<SimObserver*> observers_;
  std::vector<Request> requests_;
  std::vector<JobRecord> records_;
  std::vector<Allocation> allocations_;
  std::vector<Execution> runs_;
  mutable std::vector<double> estimates_;
  std::vector<char> runnable_;
  std::vector<JobId> running_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::unordered_set<RequestKey, RequestKeyHash> failed_;
  std::size_t next_arrival_ = 0;
  double now_ = 0;
  long seq_ = 0;
  bool has_cpu_only_ = false;
  SimulationResult result_;
};

Simulation::Simulation(SimulationParts parts) : impl_(std::make_unique<Impl>(std::move(parts))) {}
Simulation::~Simulation() = default;
void Simulation::add_observer(SimObserver& observer) {
  impl_->add_observer(observer);
}
void Simulation::attach(ExecutionHook& hook) {
  impl_->attach(hook);
}
void Simulation::attach(ClusterHook& hook) {
  impl_->attach(hook);
}
SimulationResult Simulation::run() {
  return impl_->run();
}

}  // namespace fleetsim
