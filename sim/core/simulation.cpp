#include "sim/core/simulation.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <unordered_set>

#include "models/collective_model.hpp"
#include "models/gpu_catalog.hpp"
#include "sim/core/colocation.hpp"
#include "sim/core/network_fidelity.hpp"
#include "sim/core/run_state.hpp"
#include "sim/platform/platform.hpp"
#include "workloads/input_error.hpp"

namespace fleetsim {

using detail::Event;
using detail::RequestKey;
using detail::RequestKeyHash;
using detail::Run;

class Simulation::Impl final : public Launcher {
 public:
  explicit Impl(SimulationParts p) : parts_(std::move(p)), state_(parts_.cluster), coloc_(state_) {}

  void add_observer(SimObserver& o) { observers_.push_back(&o); }

  SimulationResult run() {
    char arg0[] = "fleetsim";
    char arg1[] = "--log=root.thres:critical";
#if defined(__SANITIZE_ADDRESS__)
    // AddressSanitizer cannot follow SimGrid's stack switching (raw contexts): use threads.
    char arg2[] = "--cfg=contexts/factory:thread";
#else
    char arg2[] = "--cfg=contexts/factory:raw";
#endif
    char arg3[] = "--cfg=host/model:ptask_L07";  // network fidelity: all-reduces are ptasks
    int argc = parts_.network_fidelity ? 4 : 3;
    char* argv[] = {arg0, arg1, arg2, arg3, nullptr};
    engine_ = std::make_unique<simgrid::s4u::Engine>(&argc, argv);
    platform_ = build_platform(parts_.cluster);
    simgrid::s4u::Host* controller_host = nullptr;
    for (const auto& n : platform_.nodes) {
      controller_host = n.cpu != nullptr ? n.cpu : (n.gpus.empty() ? nullptr : n.gpus.front());
      if (controller_host != nullptr) break;
    }
    if (controller_host == nullptr) throw InputError("", 0, "cluster", "the cluster has no hosts");

    if (parts_.network_fidelity) fabric_ = std::make_unique<NetworkFabric>();
    prepare();
    simgrid::s4u::Actor::create("controller", controller_host, [this] { control_loop(); });
    engine_->run();
    for (auto* o : observers_) o->on_end(now_);
    result_.end_time_s = now_;
    if (fabric_) result_.network = std::make_shared<NetworkReport>(fabric_->report(now_, 200));
    return result_;
  }

  // --- Launcher
  bool try_start(JobId id) override {
    return start_with(id, requests_[static_cast<std::size_t>(id)]);
  }

  bool try_start_on(JobId id, int gpu_type) override {
    const Request& full = requests_[static_cast<std::size_t>(id)];
    if (full.gpus == 0) return try_start(id);
    if (gpu_type < 0 || gpu_type >= state_.type_count()) return false;
    Request r = full;  // same request, type mask narrowed: its own key in the failed-placement cache
    r.types &= TypeMask{1} << gpu_type;
    if (r.types == 0) return false;
    return start_with(id, r);
  }

  void preempt(JobId id) override {
    const auto i = static_cast<std::size_t>(id);
    Run& run = runs_[i];
    if (run.running_index < 0) return;
    advance(id);
    net_leave(id);
    state_.release(allocations_[i]);
    const auto neighbours = coloc_.remove(id, allocations_[i]);
    allocations_[i] = Allocation{};
    remove_running(id);
    refresh_colocation(neighbours);
    run.preempted_at = now_;
    ++run.epoch;  // its completion event is now stale
    failed_.clear();
    for (auto* o : observers_) o->on_job_preempted(records_[i]);
  }

  void set_speed(JobId id, double speed) override {
    Run& run = runs_[static_cast<std::size_t>(id)];
    if (run.running_index < 0 || !(speed > 0) || speed == run.policy_speed) return;
    advance(id);
    run.policy_speed = speed;
    schedule_completion(id);
  }

  void wake_at(double t) override {
    if (t > now_ && std::isfinite(t)) events_.push({t, seq_++, -1, 0});
  }

  const JobSpec& job(JobId id) const override {
    return parts_.jobs[static_cast<std::size_t>(id)];
  }

  JobProgress progress(JobId id) const override {
    const auto i = static_cast<std::size_t>(id);
    const Run& run = runs_[i];
    const JobRecord& rec = records_[i];
    JobProgress p;
    p.running = run.running_index >= 0;
    p.first_start_s = rec.start_s;
    p.restarts = rec.restarts;
    p.preempted_s = rec.preempted_s;
    double done = run.done, attained = run.attained_gpu_s, executed = run.executed_s;
    if (p.running) {
      const double dt = now_ - run.since;
      const double work_dt = run.in_comm ? 0.0 : std::max(0.0, dt - run.overhead_left);
      done = std::min(1.0, done + work_dt * run.speed() / run.runtime);
      if (run.in_comm)  // the all-reduce's progress, estimated at its idle-fabric rate
        done = std::min(done + run.comm, done + (now_ - run.comm_since) / run.runtime);
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
    const auto i = static_cast<std::size_t>(id);
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
    const auto i = static_cast<std::size_t>(id);
    const Request& r = requests_[i];
    if (gpu_type < 0 || gpu_type >= state_.type_count()) return std::nullopt;
    if (r.gpus > 0 && (r.types & (TypeMask{1} << gpu_type)) == 0) return std::nullopt;
    PlacementSummary where;  // consolidated: one node where the job fits one
    where.gpus = r.gpus;
    where.gpu_milli = r.milli;
    where.gpu_type = state_.type_name(gpu_type);
    std::string why;
    return parts_.job_model->run_time_s(parts_.jobs[i], where, why);
  }

  const std::vector<JobId>& running() const override {
    return running_;
  }
  const ClusterState& cluster() const override {
    return state_;
  }
  double now() const override {
    return now_;
  }
  bool saturated() const override {
    return !has_cpu_only_ && state_.used_milli() >= static_cast<long long>(state_.total_gpus()) * 1000;
  }

 private:
  /// Place and start job `id` with request `r` (its own, or narrowed to one GPU type).
  bool start_with(JobId id, const Request& r) {
    const auto i = static_cast<std::size_t>(id);
    Run& run = runs_[i];
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
      run.overhead_left =
          parts_.restart_overhead_s + parts_.restart_s_per_gb * parts_.state_gb_per_gpu * std::max(1, r.gpus);
      rec.wasted_gpu_s += run.overhead_left * rec.gpus;
    }
    allocations_[i] = std::move(*alloc);
    run.running_index = static_cast<int>(running_.size());
    running_.push_back(id);
    const auto neighbours = coloc_.add(id, allocations_[i]);
    if (!neighbours.empty()) {
      run.coloc_speed =
          coloc_.speed(id, allocations_[i], [this](JobId a, JobId b) { return pair_speed(a, b); });
    }
    run.net = false;
    run.in_comm = false;
    run.target = 1;
    net_join(id, where);
    schedule_completion(id);
    refresh_colocation(neighbours);
    for (auto* o : observers_) o->on_job_started(rec);
    return true;
  }

  /// Network fidelity: a multi-GPU job's ring joins the fabric; it runs in chunks from now on.
  void net_join(JobId id, const PlacementSummary& where) {
    if (!fabric_ || where.gpus < 2) return;
    const auto i = static_cast<std::size_t>(id);
    Run& run = runs_[i];
    std::vector<std::pair<int, int>> gpus;
    for (const auto& s : allocations_[i].slots)
      if (s.gpu >= 0) gpus.push_back({s.node, s.gpu});
    std::vector<simgrid::s4u::Host*> ring;
    for (const auto& [node, gpu] : ring_order(gpus))
      ring.push_back(platform_.nodes[static_cast<std::size_t>(node)].gpus[static_cast<std::size_t>(gpu)]);
    const GpuSpec* g = find_gpu(where.gpu_type);
    if (ring.size() < 2 || g == nullptr || !(run.runtime > 0)) return;
    double compute_s = parts_.iteration_compute_s, comm_s = 0;
    if (const auto shape = parts_.job_model->iteration_shape(parts_.jobs[i], where)) {
      compute_s = shape->compute_s;
      comm_s = shape->exposed_comm_s;
    } else {
      const auto& net = parts_.cluster.network;
      const int per_node = std::max(1, static_cast<int>(ring.size()) / std::max(1, where.nodes));
      const int per_nic =
          net.gpus_per_nic > 0 ? net.gpus_per_nic : std::max(1, per_node / std::max(1, net.nics_per_node));
      CollectiveDesc d;
      d.bytes = parts_.grad_bytes;
      d.ranks = static_cast<int>(ring.size());
      d.nodes = std::max(1, where.nodes);
      comm_s = predict_analytic(d, fabric_for(*g, net.nic_gbps, net.nics_per_node, per_nic)).seconds;
    }
    if (!(comm_s > 0) || !(compute_s > 0)) return;
    const double iteration_s = compute_s + comm_s;
    if (!fabric_->add_job(id, ring)) return;
    run.net = true;
    run.phi = compute_s / iteration_s;
    run.iteration = std::min(1.0, iteration_s / run.runtime);
    if (records_[i].comm_s < 0) records_[i].comm_s = 0;
    plan_chunk(id);
    for (long s : fabric_->sharers(id)) cut_chunk(static_cast<JobId>(s));
  }

  /// The job's ring leaves the fabric (finish or preemption); an in-flight all-reduce is credited
  /// for the part it completed.
  void net_leave(JobId id) {
    if (!fabric_ || !fabric_->has_job(id)) return;
    const auto i = static_cast<std::size_t>(id);
    Run& run = runs_[i];
    if (run.in_comm) {
      const double part = fabric_->cancel(id, now_);
      run.done = std::min(1.0, run.done + run.comm * part);
      run.owed = run.comm * (1 - part);
      records_[i].comm_s += now_ - run.comm_since;
      run.in_comm = false;
    } else {  // the compute done in this chunk still owes its all-reduce
      run.owed += (run.done - run.chunk_from) * (1.0 - run.phi) / run.phi;
    }
    records_[i].comm_bytes += fabric_->flow_bytes(id);
    fabric_->remove_job(id);
    run.net = false;
    run.target = 1;
  }

  /// Next chunk: the rest of the job while no running job shares its links, else 1/chunks_shared
  /// of it (at least one iteration).
  void plan_chunk(JobId id) {
    Run& run = runs_[static_cast<std::size_t>(id)];
    run.chunk_from = run.done;
    const double rest = std::max(0.0, 1.0 - run.done - run.owed);
    const double chunk = fabric_->shared(id) ? std::max(run.iteration, 1.0 / parts_.chunks_shared) : rest;
    run.target = run.done + std::min(chunk, rest) * run.phi;
  }

  /// A sharer appeared: a job computing a longer chunk ends its compute phase at the shared length.
  void cut_chunk(JobId id) {
    Run& run = runs_[static_cast<std::size_t>(id)];
    if (run.in_comm || !run.net) return;
    const double target = run.chunk_from + std::max(run.iteration, 1.0 / parts_.chunks_shared) * run.phi;
    if (target >= run.target) return;
    advance(id);
    run.target = std::max(run.done, target);
    schedule_completion(id);
  }

  /// A job's phase ended: a delay-fidelity job is done; a network job starts its chunk's all-reduce.
  void phase_end(JobId id) {
    const auto i = static_cast<std::size_t>(id);
    Run& run = runs_[i];
    if (!run.net) {
      finish(id);
      return;
    }
    advance(id);
    run.done = run.target;
    const double comm = (run.done - run.chunk_from) * (1.0 - run.phi) / run.phi + run.owed;
    run.owed = 0;
    if (fabric_->start(id, comm * run.runtime, now_)) {
      run.in_comm = true;
      run.comm = comm;
      run.comm_since = now_;
      ++run.epoch;
      return;
    }
    run.done = std::min(1.0, run.done + comm);  // shorter than the route latency: not simulated
    next_chunk(id);
  }

  void comm_done(JobId id) {
    Run& run = runs_[static_cast<std::size_t>(id)];
    advance(id);
    run.in_comm = false;
    run.done = std::min(1.0, run.done + run.comm);
    records_[static_cast<std::size_t>(id)].comm_s += now_ - run.comm_since;
    next_chunk(id);
  }

  void next_chunk(JobId id) {
    if (1.0 - runs_[static_cast<std::size_t>(id)].done < 1e-9) {
      finish(id);
      return;
    }
    plan_chunk(id);
    schedule_completion(id);
  }

  /// Speed factor of job a while it shares a GPU with job b: the job model's measured pair rate
  /// where it has one, else the configured execution.colocation_slowdown.
  double pair_speed(JobId a, JobId b) const {
    const auto ia = static_cast<std::size_t>(a);
    const auto v = parts_.job_model->colocated_speed(
        parts_.jobs[ia], parts_.jobs[static_cast<std::size_t>(b)], records_[ia].gpu_type);
    return v ? *v : parts_.colocation_slowdown;
  }

  /// Re-time running jobs whose co-runners changed.
  void refresh_colocation(const std::vector<JobId>& jobs) {
    for (JobId j : jobs) {
      Run& run = runs_[static_cast<std::size_t>(j)];
      if (run.running_index < 0) continue;
      const double c = coloc_.speed(j, allocations_[static_cast<std::size_t>(j)],
                                    [this](JobId a, JobId b) { return pair_speed(a, b); });
      if (c == run.coloc_speed) continue;
      advance(j);
      run.coloc_speed = c;
      schedule_completion(j);
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

  /// End of the current phase: the job's end (delay), or its chunk's compute phase (network).
  static double end_time(const Run& run) {
    if (run.in_comm) return std::numeric_limits<double>::infinity();
    const double left = std::max(0.0, run.target - run.done);
    return run.since + run.overhead_left + (run.runtime > 0 ? left * run.runtime / run.speed() : 0.0);
  }

  /// Bring a running job's progress up to now.
  void advance(JobId id) {
    const auto i = static_cast<std::size_t>(id);
    Run& run = runs_[i];
    const double dt = now_ - run.since;
    if (dt <= 0) return;
    const double overhead = std::min(dt, run.overhead_left);
    run.overhead_left -= overhead;
    if (run.runtime > 0 && !run.in_comm)
      run.done = std::min(run.target, run.done + (dt - overhead) * run.speed() / run.runtime);
    run.attained_gpu_s += dt * records_[i].gpus;
    run.executed_s += dt;
    run.since = now_;
  }

  void schedule_completion(JobId id) {
    Run& run = runs_[static_cast<std::size_t>(id)];
    ++run.epoch;
    const double t = end_time(run);
    if (std::isfinite(t)) events_.push({t, seq_++, id, run.epoch});
  }

  void remove_running(JobId id) {
    Run& run = runs_[static_cast<std::size_t>(id)];
    const int pos = run.running_index;
    const JobId last = running_.back();
    running_[static_cast<std::size_t>(pos)] = last;
    runs_[static_cast<std::size_t>(last)].running_index = pos;
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

  void control_loop() {
    const std::size_t n = parts_.jobs.size();
    constexpr double kInf = std::numeric_limits<double>::infinity();
    while (true) {
      while (next_arrival_ < n && runnable_[next_arrival_] == 0) ++next_arrival_;
      // Drop stale completions (preempted or re-timed jobs) at the top of the heap.
      while (!events_.empty() && events_.top().job >= 0 &&
             events_.top().epoch != runs_[static_cast<std::size_t>(events_.top().job)].epoch)
        events_.pop();
      double t = kInf;
      if (next_arrival_ < n) t = parts_.jobs[next_arrival_].submit_s;
      if (!events_.empty()) t = std::min(t, events_.top().time);
      const bool comms = fabric_ && fabric_->busy();
      if (t == kInf && !comms) break;
      if (comms) {
        const long done = fabric_->wait(t);
        now_ = std::max(now_, simgrid::s4u::Engine::get_clock());
        if (done >= 0) comm_done(static_cast<JobId>(done));
      } else {
        if (t > now_) simgrid::s4u::this_actor::sleep_until(t);
        now_ = std::max(now_, t);
      }
      while (!events_.empty() && events_.top().time <= now_) {
        const Event e = events_.top();
        events_.pop();
        if (e.job >= 0 && e.epoch == runs_[static_cast<std::size_t>(e.job)].epoch) phase_end(e.job);
      }
      while (next_arrival_ < n && parts_.jobs[next_arrival_].submit_s <= now_) {
        if (runnable_[next_arrival_] != 0) {
          parts_.scheduler->enqueue(static_cast<JobId>(next_arrival_), *this);
          for (auto* o : observers_) o->on_job_submitted(records_[next_arrival_]);
        }
        ++next_arrival_;
      }
      schedule_once();
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

  void schedule_once() {
    parts_.scheduler->schedule(*this);
  }

  void finish(JobId id) {
    const auto i = static_cast<std::size_t>(id);
    advance(id);
    net_leave(id);
    JobRecord& rec = records_[i];
    rec.end_s = now_;
    state_.release(allocations_[i]);
    const auto neighbours = coloc_.remove(id, allocations_[i]);
    allocations_[i] = Allocation{};
    remove_running(id);
    refresh_colocation(neighbours);
    failed_.clear();
    ++result_.completed;
    parts_.scheduler->finished(id);
    for (auto* o : observers_) o->on_job_finished(rec);
  }

  SimulationParts parts_;
  ClusterState state_;
  Colocation coloc_;
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  Platform platform_;
  std::unique_ptr<NetworkFabric> fabric_;
  std::vector<SimObserver*> observers_;
  std::vector<Request> requests_;
  std::vector<JobRecord> records_;
  std::vector<Allocation> allocations_;
  std::vector<Run> runs_;
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
SimulationResult Simulation::run() {
  return impl_->run();
}

}  // namespace fleetsim
