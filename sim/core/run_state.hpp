#pragma once
// Bookkeeping of sim/core/simulation.cpp: timed events, the failed-placement cache key and the
// execution state of one job (internal to the simulation; not an extension point).
#include <cstddef>
#include <functional>

#include "sim/core/cluster_state.hpp"
#include "sim/scheduling/scheduler.hpp"

namespace fleetsim::detail {

struct Event {
  double time;
  long seq;
  JobId job;  ///< -1 for a policy wake-up
  int epoch;  ///< a completion is stale if the job's epoch moved on (preempted, re-timed)
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

/// Execution state of one job: work is a fraction in [0, 1] done at rate speed / runtime.
struct Run {
  double done = 0;          ///< fraction of the work done
  double runtime = 0;       ///< s for the whole job at speed 1 on its current placement
  double policy_speed = 1;  ///< set by the policy (set_speed)
  double coloc_speed = 1;   ///< from sharing GPUs with other jobs
  double speed() const { return policy_speed * coloc_speed; }
  double since = 0;          ///< last time `done` was brought up to date
  double overhead_left = 0;  ///< restart overhead still to pay before progress resumes, s
  double attained_gpu_s = 0;
  double executed_s = 0;
  double preempted_at = -1;
  int epoch = 0;
  int running_index = -1;  ///< position in running_ (-1 = not running)
  // Network fidelity (network_fidelity.hpp): the work is a share phi of compute, progressing as
  // above, and 1 - phi of all-reduce, credited when a chunk's ptask finishes.
  bool net = false;
  double phi = 1;         ///< compute share of the work
  double iteration = 1;   ///< one iteration, as a fraction of the work
  double chunk_from = 0;  ///< `done` when the current chunk began
  double target = 1;      ///< `done` at which the current compute phase ends
  bool in_comm = false;   ///< the chunk's all-reduce is in flight: no analytic progress
  double comm = 0;        ///< work fraction the in-flight all-reduce credits
  double comm_since = 0;  ///< its start
  double owed = 0;        ///< all-reduce work left behind by a preemption, paid with the next chunk
};

}  // namespace fleetsim::detail
