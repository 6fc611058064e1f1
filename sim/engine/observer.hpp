#pragma once
// Observers of simulation events. The core notifies every attached observer and knows nothing of
// what they record (jobs.csv, time series, summary, energy, progress...).
#include <string>

#include "workloads/jobs/job.hpp"

namespace fleetsim {

/// One job as the simulation saw it.
struct JobRecord {
  const JobSpec* spec = nullptr;
  int index = 0;  ///< position in the trace (after sorting by submit)
  double submit_s = 0;
  double start_s = -1;   ///< -1 until started
  double end_s = -1;     ///< -1 until finished
  std::string gpu_type;  ///< GPU type it ran on ("" for CPU-only)
  int nodes = 0;
  int leaves = 0;
  double gpus = 0;          ///< GPUs held (fractional for shared GPUs: gpus * milli / 1000)
  int restarts = 0;         ///< restarts after preemption
  double preempted_s = 0;   ///< time spent preempted
  double wasted_gpu_s = 0;  ///< GPU-seconds spent on checkpoint-restore overhead
  double alone_s = -1;      ///< run time alone on its first placement (for fairness), -1 unknown
  double comm_s = -1;       ///< network fidelity: time in all-reduce on the fabric (-1: not simulated)
  double comm_bytes = 0;    ///< network fidelity: bytes per ring flow moved
};

/// Cluster-wide state after a batch of events at one instant.
struct StateSample {
  double time_s = 0;
  double busy_gpus = 0;  ///< allocated GPU capacity, in GPUs (shares summed)
  long running = 0;
  long queued = 0;
  long completed = 0;
};

class SimObserver {
 public:
  virtual ~SimObserver() = default;
  virtual void on_start(int /*total_gpus*/, long /*jobs*/) {}
  virtual void on_job_skipped(const JobSpec& /*job*/, const std::string& /*reason*/) {}
  virtual void on_job_submitted(const JobRecord& /*job*/) {}
  virtual void on_job_started(const JobRecord& /*job*/) {}
  virtual void on_job_preempted(const JobRecord& /*job*/) {}
  virtual void on_job_finished(const JobRecord& /*job*/) {}
  virtual void on_sample(const StateSample& /*sample*/) {}
  virtual void on_end(double /*time_s*/) {}
};

}  // namespace fleetsim
