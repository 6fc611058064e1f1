#include "sim/engine/simulation.hpp"

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>
#include <string>
#include <unordered_set>

#include "sim/engine/colocation.hpp"
#include "sim/engine/execution.hpp"
#include "sim/engine/simulation_impl.hpp"
#include "sim/platform/platform.hpp"
#include "sim/platform/simgrid_engine.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {

SimulationResult Simulation::Impl::run() {
  const bool ptasks =
      std::any_of(hooks_.begin(), hooks_.end(), [](const auto* h) { return h->needs_ptasks(); });
  engine_ = start_simgrid({.ptasks = ptasks});
  // Only execution hooks (network, fabric fidelity) route traffic over the cluster's hosts and links.
  platform_ = hooks_.empty() ? build_control_platform(parts_.cluster) : build_platform(parts_.cluster);
  simgrid::s4u::Host* controller_host = platform_.control;
  if (controller_host == nullptr) throw InputError("", 0, "cluster", "the cluster has no hosts");
  for (auto* h : hooks_) h->attach(*this, platform_, jobs_.size());
  for (auto* ch : cluster_hooks_) {
    ch->attach(*this, jobs_.size());
    if (ch->keeps_finished_jobs()) parts_.keep_finished = true;
  }
  prepare();
  simgrid::s4u::Actor::create("controller", controller_host, [this] { control_loop(); });
  engine_->run();
  for (auto* o : observers_) o->on_end(now_);
  for (auto* h : hooks_) h->on_end(now_);
  for (auto* ch : cluster_hooks_) ch->on_end(now_);
  result_.end_time_s = now_;
  return result_;
}

bool Simulation::Impl::start_with(JobId id, const Request& r) {
  if (live(id).run.running_index >= 0) return true;
  const RequestKey key{r.gpus, r.milli, r.types, r.cpu_milli, r.memory_mib, r.single_node};
  if (failed_.count(key) > 0) return false;
  auto alloc = parts_.placer->place(r, state_);
  if (!alloc) {
    failed_.insert(key);  // stays infeasible until something is released
    return false;
  }
  return start_allocated(id, r, std::move(*alloc));
}

bool Simulation::Impl::start_allocated(JobId id, const Request& r, Allocation alloc) {
  const auto i = at(id);
  Live& l = live(id);
  Execution& run = l.run;
  JobRecord& rec = l.record;
  const JobSpec& spec = jobs_.spec(i);
  const PlacementSummary where = summarize(r, alloc);
  std::string why;
  const auto runtime = parts_.job_model->run_time_s(spec, where, why);
  if (!runtime || !std::isfinite(*runtime) || *runtime < 0) {
    skip(spec, why.empty() ? "job model gave no run time" : why);
    return true;  // leaves the queue
  }
  state_.allocate(alloc);
  const bool restart = rec.start_s >= 0;
  if (!restart) {
    rec.start_s = now_;
    rec.alone_s = *runtime;
  }
  rec.gpu_type = where.gpu_type;
  rec.nodes = alloc.nodes;
  rec.leaves = alloc.leaves;
  rec.gpus = r.gpus * (r.milli / 1000.0);
  run.runtime = *runtime;
  run.policy_speed = 1;
  run.coloc_speed = 1;
  run.hook_speed = 1;
  run.since = now_;
  run.overhead_left = 0;
  if (restart) {
    ++rec.restarts;
    rec.preempted_s += now_ - run.preempted_at;
    run.overhead_left = run.pending_overhead >= 0
                            ? run.pending_overhead
                            : parts_.engine.restart_overhead_s + parts_.engine.restart_s_per_gb *
                                                                     parts_.engine.state_gb_per_gpu *
                                                                     std::max(1, r.gpus);
    run.pending_overhead = -1;
  } else {
    run.overhead_left = parts_.engine.start_overhead_s;
  }
  rec.wasted_gpu_s += run.overhead_left * rec.gpus;
  l.alloc = std::move(alloc);
  run.running_index = static_cast<int>(running_.size());
  running_.push_back(id);
  const auto neighbours = coloc_.add(id, l.alloc);
  if (!neighbours.empty())
    run.coloc_speed = coloc_.speed(id, l.alloc, [this](JobId a, JobId b) { return pair_speed(a, b); });
  run.held = false;
  run.target = 1;
  for (auto* ch : cluster_hooks_) ch->on_start(id, where);
  for (auto* h : hooks_) h->on_start(id, where);
  reschedule(id);
  refresh_colocation(neighbours);
  for (auto* o : observers_) o->on_job_started(rec);
  return true;
}

void Simulation::Impl::leave(JobId id) {
  for (auto* h : hooks_) h->on_leave(id);
  for (auto* ch : cluster_hooks_) ch->on_leave(id);
  Live& l = live(id);
  l.run.held = false;
  l.run.target = 1;
  state_.release(l.alloc);
  const auto neighbours = coloc_.remove(id, l.alloc);
  l.alloc = Allocation{};
  remove_running(id);
  refresh_colocation(neighbours);
  failed_.clear();
}

void Simulation::Impl::prepare() {
  const auto n = jobs_.size();
  slot_of_.assign(n, -1);
  estimates_.assign(n, -1.0);
  runnable_.assign(n, 1);
  result_.jobs = static_cast<long>(n);
  for (auto* o : observers_) o->on_start(state_.total_gpus(), result_.jobs);
  jobs_.for_each([&](std::size_t i, const JobSpec& j, const Request& r) {
    if (j.gpus == 0) has_cpu_only_ = true;
    std::string why;
    if (!state_.ever_fits(r, why) || !parts_.job_model->can_time(j, why)) {
      runnable_[i] = 0;
      skip(j, why);
    }
  });
  jobs_.show_workload(*parts_.placer);
}

bool Simulation::Impl::hooks_busy() const {
  return std::any_of(hooks_.begin(), hooks_.end(), [](const ExecutionHook* h) {
    const auto* a = h->activities();
    return a != nullptr && !a->empty();
  });
}

bool Simulation::Impl::nodes_can_leave() const {
  return std::any_of(cluster_hooks_.begin(), cluster_hooks_.end(),
                     [](const ClusterHook* h) { return h->takes_nodes(); });
}

void Simulation::Impl::wait_until(double t) {
  if (!hooks_busy()) {
    if (t > now_) simgrid::s4u::this_actor::sleep_until(t);
    now_ = std::max(now_, t);
    return;
  }
  // One set of every hook's activities (the busy hook's own vector when only one is busy); `owner`
  // maps a position in it back to its hook and that hook's index.
  std::vector<simgrid::s4u::ExecPtr> all;
  std::vector<std::pair<ExecutionHook*, std::size_t>> owner;
  const std::vector<simgrid::s4u::ExecPtr>* set = nullptr;
  for (auto* h : hooks_) {
    const auto* a = h->activities();
    if (a == nullptr || a->empty()) continue;
    if (set == nullptr && owner.empty()) {
      set = a;
      for (std::size_t k = 0; k < a->size(); ++k) owner.emplace_back(h, k);
      continue;
    }
    if (set != &all) all = *set;
    set = &all;
    all.insert(all.end(), a->begin(), a->end());
    for (std::size_t k = 0; k < a->size(); ++k) owner.emplace_back(h, k);
  }
  const double clock = simgrid::s4u::Engine::get_clock();
  const double timeout = std::isfinite(t) ? std::max(0.0, t - clock) : -1.0;
  ssize_t k = -1;
  try {
    k = simgrid::s4u::Exec::wait_any_for(*set, timeout);
  } catch (const simgrid::TimeoutException&) {  // some 3.32 code paths throw instead of returning -1
    k = -1;
  }
  now_ = std::max(now_, simgrid::s4u::Engine::get_clock());
  if (k < 0) return;
  auto [hook, index] = owner[static_cast<std::size_t>(k)];
  hook->resume(hook->activity_done(index));
}

void Simulation::Impl::control_loop() {
  const std::size_t n = jobs_.size();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  while (true) {
    while (next_arrival_ < n && runnable_[next_arrival_] == 0) jobs_.done(next_arrival_++);
    // Drop stale phase ends (preempted or re-timed jobs) at the top of the heap.
    while (!events_.empty() && events_.top().job >= 0 && !current(events_.top().job, events_.top().epoch))
      events_.pop();
    double t = kInf;
    if (next_arrival_ < n) t = jobs_.spec(next_arrival_).submit_s;
    if (!events_.empty()) t = std::min(t, events_.top().time);
    if (!cluster_hooks_.empty() && work_left()) t = std::min(t, next_hook_event());
    if (t == kInf && !hooks_busy()) break;
    wait_until(t);
    while (!events_.empty() && events_.top().time <= now_) {
      const Event e = events_.top();
      events_.pop();
      if (e.job >= 0 && current(e.job, e.epoch)) phase_end(e.job);
    }
    for (auto* ch : cluster_hooks_)
      while (ch->next_event_s() <= now_) ch->on_event();
    while (next_arrival_ < n && jobs_.spec(next_arrival_).submit_s <= now_) {
      if (runnable_[next_arrival_] != 0) {
        arrive(static_cast<JobId>(next_arrival_));
        parts_.scheduler->enqueue(static_cast<JobId>(next_arrival_), *this);
        for (auto* o : observers_) o->on_job_submitted(live(static_cast<JobId>(next_arrival_)).record);
      } else {
        jobs_.done(next_arrival_);
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
      const std::int32_t k = slot_of_[i];  // live: arrived and not finished
      if (k >= 0 && pool_[k].record.end_s < 0 && pool_[k].run.running_index < 0)
        skip(jobs_.spec(i), "could not be placed even on the otherwise idle cluster");
    }
  }
}

void Simulation::Impl::finish(JobId id) {
  advance(id);
  leave(id);
  JobRecord& rec = live(id).record;
  rec.end_s = now_;
  ++result_.completed;
  parts_.scheduler->finished(id);
  for (auto* ch : cluster_hooks_) ch->on_finish(id);
  for (auto* o : observers_) o->on_job_finished(rec);
  release(id);
}

void Simulation::Impl::arrive(JobId id) {
  const std::int32_t k = pool_.acquire();
  slot_of_[at(id)] = k;
  JobRecord& rec = pool_[k].record;
  const JobSpec& j = jobs_.spec(at(id));
  rec.spec = &j;
  rec.index = static_cast<int>(id);
  rec.submit_s = j.submit_s;
}

void Simulation::Impl::release(JobId id) {
  if (parts_.keep_finished) return;
  pool_.release(slot_of_[at(id)]);
  slot_of_[at(id)] = -1;
  jobs_.done(at(id));
}

void Simulation::Impl::throw_not_live(JobId id) const {
  throw std::logic_error("job " + std::to_string(id) +
                         (at(id) < slot_of_.size()
                              ? " has not arrived or has finished (its state is released)"
                              : " is not a job of the trace"));
}

void Simulation::Impl::preempt(JobId id) {
  Live& l = live(id);
  Execution& run = l.run;
  if (run.running_index < 0) return;
  advance(id);
  leave(id);
  run.preempted_at = now_;
  ++run.epoch;  // its phase-end event is now stale
  for (auto* o : observers_) o->on_job_preempted(l.record);
}

void Simulation::Impl::interrupt(JobId id, double done, double overhead_s) {
  Live& l = live(id);
  Execution& run = l.run;
  if (run.running_index < 0) return;
  advance(id);
  leave(id);
  run.done = std::clamp(done, 0.0, run.done);
  run.preempted_at = now_;
  run.pending_overhead = std::max(0.0, overhead_s);
  ++run.epoch;  // its phase-end event is now stale
  for (auto* o : observers_) o->on_job_preempted(l.record);
  parts_.scheduler->interrupted(id, *this);
}
double Simulation::Impl::work_done(JobId id) const {
  const Execution& run = live(id).run;
  double done = run.done;
  if (run.running_index >= 0 && run.held)
    for (const auto* h : hooks_) done += h->held_progress(id);
  return std::min(1.0, done);
}

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
void Simulation::add_tenant(NodeTenant& tenant) {
  impl_->add_tenant(tenant);
}
SimulationResult Simulation::run() {
  return impl_->run();
}

}  // namespace fleetsim
