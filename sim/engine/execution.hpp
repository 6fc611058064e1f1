#pragma once
// Bookkeeping of the engine (sim/engine/simulation.cpp): timed events, the failed-placement cache
// key and the execution state of one job. Internal to the engine and its hooks; not an extension
// point for policies (they see JobProgress).
#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>

#include "sim/cluster/cluster_state.hpp"

namespace fleetsim::detail {

struct Event {
  double time;
  long seq;
  JobId job;  ///< -1 for a policy wake-up
  int epoch;  ///< a phase end is stale if the job's epoch moved on (preempted, re-timed)
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

struct RequestKey {
  int gpus, milli;
  TypeMask types;
  double cpu, mem;
  bool single;
  bool operator==(const RequestKey&) const = default;
};
struct RequestKeyHash {
  std::size_t operator()(const RequestKey& k) const {
    std::size_t h = std::hash<long long>()(k.gpus * 1000003LL + k.milli);
    h ^= std::hash<TypeMask>()(k.types) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= std::hash<double>()(k.cpu) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= std::hash<double>()(k.mem) + (k.single ? 1 : 0) + (h << 6) + (h >> 2);
    return h;
  }
};

}  // namespace fleetsim::detail

namespace fleetsim {

/// Execution state of one job: its work is a fraction in [0, 1], done at rate speed / runtime
/// after any restart overhead. The current phase ends when `done` reaches `target` (1 unless a hook
/// cut the work into phases); while `held`, a hook owns the job's progress (e.g. an all-reduce in
/// flight) and the engine's clock credits nothing.
struct Execution {
  double done = 0;          ///< fraction of the work done
  double runtime = 0;       ///< s for the whole job at speed 1 on its current placement
  double policy_speed = 1;  ///< set by the policy (set_speed)
  double coloc_speed = 1;   ///< from sharing GPUs with other jobs
  double hook_speed = 1;    ///< set by an execution hook (e.g. a slowdown from a shared fabric)
  double speed() const { return policy_speed * coloc_speed * hook_speed; }
  double since = 0;          ///< last time `done` was brought up to date
  double overhead_left = 0;  ///< restart overhead still to pay before progress resumes, s
  double target = 1;         ///< `done` at which the current phase ends
  bool held = false;         ///< a hook holds the job's progress: no analytic progress
  double attained_gpu_s = 0;
  double executed_s = 0;
  double preempted_at = -1;
  double pending_overhead = -1;  ///< set by an interruption: overhead of the next start (-1: the usual)
  int epoch = 0;
  int running_index = -1;  ///< position in the running list (-1 = not running)
};

}  // namespace fleetsim

namespace fleetsim {

/// Brings `e` up to `now` for a job holding `gpus` GPUs: restart overhead is paid first, then work
/// progresses at its speed up to the phase target (nothing while held).
inline void advance_to(Execution& e, double now, double gpus) {
  const double dt = now - e.since;
  if (dt <= 0) return;
  const double overhead = std::min(dt, e.overhead_left);
  e.overhead_left -= overhead;
  if (e.runtime > 0 && !e.held) e.done = std::min(e.target, e.done + (dt - overhead) * e.speed() / e.runtime);
  e.attained_gpu_s += dt * gpus;
  e.executed_s += dt;
  e.since = now;
}

/// When the current phase ends (inf while held).
inline double phase_end_time(const Execution& e) {
  if (e.held) return std::numeric_limits<double>::infinity();
  const double left = std::max(0.0, e.target - e.done);
  return e.since + e.overhead_left + (e.runtime > 0 ? left * e.runtime / e.speed() : 0.0);
}

}  // namespace fleetsim
