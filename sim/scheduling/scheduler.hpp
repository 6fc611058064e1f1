#pragma once
// Scheduler: decides which waiting jobs start, and when. One file per policy, registered by name
// (scenario key scheduler.policy). The simulation calls schedule() after every batch of events
// at one instant (arrivals, completions); the policy starts jobs through the Launcher, which
// asks the placement policy for GPUs. Decisions happen on events only: there are no rounds.
#include <cstdint>
#include <memory>
#include <string>

#include "workloads/job.hpp"
#include "workloads/registry.hpp"

namespace fleetsim {

using JobId = std::int32_t;  ///< index of the job in the simulation's job list

/// What a policy may do and see. Implemented by the simulation core.
class Launcher {
 public:
  virtual ~Launcher() = default;
  /// Place and start job `id` now if placement finds resources; false if it does not fit now.
  virtual bool try_start(JobId id) = 0;
  /// The job's request and trace data.
  virtual const JobSpec& job(JobId id) const = 0;
  /// Current simulated time, s.
  virtual double now() const = 0;
  /// True when no further job of any kind can start (every GPU share, CPU or memory is taken).
  virtual bool saturated() const = 0;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  /// A job arrived (in submit order; ties in trace order). The policy queues it.
  virtual void enqueue(JobId id, const Launcher& launcher) = 0;
  /// A running job finished.
  virtual void finished(JobId /*id*/) {}
  /// Start whatever the policy wants to start now.
  virtual void schedule(Launcher& launcher) = 0;
  /// Jobs waiting.
  virtual std::size_t queued() const = 0;
};

struct SchedulerParams {
  std::uint64_t seed = 1;
};

using SchedulerRegistry = Registry<Scheduler, const SchedulerParams&>;
SchedulerRegistry& schedulers();

struct SchedulerRegistrar {
  SchedulerRegistrar(std::string name, std::string description, SchedulerRegistry::Factory f) {
    schedulers().add(std::move(name), std::move(description), std::move(f));
  }
};

}  // namespace fleetsim
