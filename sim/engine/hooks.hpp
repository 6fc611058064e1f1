#pragma once
// Execution hooks: optional features that change how running jobs progress attach to the engine
// here, the way SimGrid's plugins attach to engine signals. The engine calls every attached hook, in
// attach order, at a job's start, at the end of each of its phases, and when it leaves its GPUs; a
// hook steers the job through JobClock. Network and fabric fidelity (sim/network/) are such hooks;
// the engine does not know which are attached. Observers (observer.hpp) only watch; hooks may change
// timing. Cluster hooks change the cluster under the jobs (failures); node tenants hold GPUs outside
// jobs (a service's replicas) and hear of nodes leaving service.
#include <simgrid/forward.h>

#include <cstddef>
#include <limits>
#include <vector>

#include "models/job/job_model.hpp"
#include "sim/cluster/cluster_state.hpp"
#include "sim/engine/execution.hpp"
#include "sim/engine/observer.hpp"

namespace fleetsim {

struct Platform;

/// What a hook may read and do to running jobs (implemented by the engine).
class JobClock {
 public:
  virtual ~JobClock() = default;
  virtual double now() const = 0;
  virtual const JobSpec& job(JobId id) const = 0;
  virtual const JobModel& job_model() const = 0;
  virtual const Allocation& allocation(JobId id) const = 0;
  virtual Execution& execution(JobId id) = 0;
  virtual JobRecord& record(JobId id) = 0;
  /// Brings the job's progress up to now (restart overhead first, then work at its speed).
  virtual void advance(JobId id) = 0;
  /// Re-arms the job's phase-end event from its execution state (none while held).
  virtual void reschedule(JobId id) = 0;
  /// The job's work is complete: it ends now and releases its GPUs.
  virtual void finish(JobId id) = 0;
};

class ExecutionHook {
 public:
  virtual ~ExecutionHook() = default;
  /// SimGrid's parallel-task host model is needed (set before the platform is built).
  virtual bool needs_ptasks() const { return false; }
  /// Once, after the platform is built and before the first event.
  virtual void attach(JobClock& /*clock*/, const Platform& /*platform*/, std::size_t /*jobs*/) {}
  /// A job started (or restarted) on its allocation; its run time is known, target = 1.
  virtual void on_start(JobId /*id*/, const PlacementSummary& /*where*/) {}
  /// A job reached its phase target. true: the hook continues it (no later hook is asked); false: the
  /// job is done unless a later hook continues it.
  virtual bool on_phase_end(JobId /*id*/) { return false; }
  /// A job leaves its GPUs (finish or preemption); its progress is up to date.
  virtual void on_leave(JobId /*id*/) {}
  /// Work a held job has made since it was held (an estimate, for policies' progress views).
  virtual double held_progress(JobId /*id*/) const { return 0; }
  /// SimGrid activities the hook has in flight (nullptr or empty: none). The engine waits on those of
  /// every attached hook at once, until the first of them ends or its own next event.
  virtual const std::vector<simgrid::s4u::ExecPtr>* activities() const { return nullptr; }
  /// (*activities())[k] ended: the hook forgets it and returns the job it belonged to. The engine
  /// then brings its clock up and calls resume() with that job.
  virtual JobId activity_done(std::size_t /*k*/) { return -1; }
  virtual void resume(JobId /*id*/) {}
  /// The simulation ended at `time_s`.
  virtual void on_end(double /*time_s*/) {}
};

/// What a cluster hook may do (implemented by the engine): everything a JobClock offers, plus
/// taking nodes out of service and interrupting running jobs.
class NodeTenant;

class ClusterControl : public JobClock {
 public:
  /// Holders of GPUs outside jobs (Simulation::add_tenant), in the order they were added: a cluster
  /// hook that takes nodes out of service tells each of them.
  virtual const std::vector<NodeTenant*>& tenants() const = 0;
  /// Some attached cluster hook may take nodes out of service (ClusterHook::takes_nodes).
  virtual bool nodes_can_leave() const = 0;
  virtual const ClusterState& cluster() const = 0;
  /// Jobs running now (any order).
  virtual const std::vector<JobId>& running() const = 0;
  /// Running jobs holding any resource on node n (in job order).
  virtual std::vector<JobId> jobs_on_node(int n) const = 0;
  /// Node n goes out of service: nothing is placed on it until node_up(n). Jobs still on it are not
  /// touched: interrupt them first.
  virtual void node_down(int n) = 0;
  virtual void node_up(int n) = 0;
  /// Places `r` with the scenario's placer and holds its resources for the rest of the run (e.g. an
  /// inference service's replica): no job can use them. nullopt when it does not fit now.
  virtual std::optional<Allocation> reserve(const Request& r) = 0;
  /// reserve(), for a holder that shares its GPUs' compute with whatever else runs on them (an MPS
  /// share of an inference replica): the co-location model counts it as one more occupant of those
  /// GPUs, so every job placed beside it runs at execution.colocation_slowdown per such holder. The
  /// holder learns who joins it through on_start/on_leave and allocation().
  virtual std::optional<Allocation> reserve_shared(const Request& r) = 0;
  /// Gives back what reserve() or reserve_shared() returned (e.g. a replica whose node is going out
  /// of service). A shared holder also stops counting as an occupant of its GPUs.
  virtual void release(const Allocation& a) = 0;
  /// Stops running job `id` now, not by the policy's choice (a failure): its progress falls back to
  /// `done` (its last checkpoint, <= its progress now), it pays `overhead_s` (detection, restart,
  /// restore) when it next starts instead of the usual restart overhead, and it goes back to the
  /// scheduler (Scheduler::interrupted). Observers see a preemption.
  virtual void interrupt(JobId id, double done, double overhead_s) = 0;
  /// Job `id`'s progress now, after advance(id): its done fraction plus, while an execution hook holds
  /// it (a network-fidelity all-reduce in flight), the part of that activity completed so far.
  virtual double work_done(JobId id) const = 0;
};

/// Something that holds GPUs outside jobs, through ClusterControl::reserve (a service's replicas),
/// and must move when a node leaves service. A cluster hook that takes nodes out (failures, drains)
/// tells its tenants; neither knows the other's internals.
class NodeTenant {
 public:
  virtual ~NodeTenant() = default;
  /// Node n leaves service now, for the taker's event `event` (an id it can be told about later):
  /// whatever the tenant holds on it goes down and is released (the node is still up when called).
  /// Returns how many holders (replicas) were hit.
  virtual int node_lost(int node, long event) = 0;
  /// Capacity may have come back (a repair, a spare joined, a drain ended): holders waiting retry.
  virtual void capacity_back() = 0;
  /// Node n, lost before, is healthy again (repaired, or its drain ended).
  virtual void node_back(int /*node*/) {}
  /// A correlated domain failed: leaf switch `leaf` itself is down (after node_lost for every node
  /// under it); it is repaired when the first of them comes back (node_back).
  virtual void domain_lost(int /*leaf*/) {}
  /// Requests the tenant sent elsewhere because of the taker's event `event` (node_lost's), once the
  /// tenant's own work is done (after the run).
  virtual long requests_rerouted(long /*event*/) const { return 0; }
};

/// A cluster hook changes the cluster under the jobs at times of its own: failures and repairs,
/// maintenance drains. The engine asks it for its next event time and handles that time in the
/// control loop like any other event (after the phase ends of the instant, before arrivals); its
/// events keep the simulation going only while jobs are left to run. Hooks are called in the order
/// they were attached. Like ExecutionHook, the engine does not know what it does.
class ClusterHook {
 public:
  virtual ~ClusterHook() = default;
  /// Once, after the platform is built and before the first event.
  virtual void attach(ClusterControl& /*control*/, std::size_t /*jobs*/) {}
  /// The hook may take nodes out of service (and tells ClusterControl::tenants()).
  virtual bool takes_nodes() const { return false; }
  /// The hook reads finished jobs' records, execution state and allocation after they finish (the
  /// engine then keeps them until the end instead of releasing them).
  virtual bool keeps_finished_jobs() const { return false; }
  /// Time of the hook's next event (inf: none).
  virtual double next_event_s() const { return std::numeric_limits<double>::infinity(); }
  /// A later event of the hook may free GPUs it holds now (a service's replica switched off): jobs
  /// waiting with nothing running keep the simulation going until then.
  virtual bool frees_capacity_later() const { return false; }
  /// The clock reached next_event_s(): handle every event of this instant.
  virtual void on_event() {}
  /// A job started (or restarted), before any execution hook sees it; it may re-time the job
  /// (e.g. stretch its run time by checkpoint writes).
  virtual void on_start(JobId /*id*/, const PlacementSummary& /*where*/) {}
  /// A job leaves its GPUs (finish, preemption or interruption); its progress is up to date.
  virtual void on_leave(JobId /*id*/) {}
  /// A job finished.
  virtual void on_finish(JobId /*id*/) {}
  /// The simulation ended at `time_s`.
  virtual void on_end(double /*time_s*/) {}
};

}  // namespace fleetsim
