#pragma once
// Standard observers: per-job table, event-driven time series with utilization integral, skipped
// jobs, and a progress line on stderr. Each writes its own output file; summary.hpp combines them.
#include <chrono>
#include <cstdio>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "sim/engine/observer.hpp"

namespace fleetsim {

/// Collects finished (and, for the record, unfinished) jobs; writes jobs.csv.
class JobTable final : public SimObserver {
 public:
  void on_job_finished(const JobRecord& job) override { finished_.push_back(job); }
  void on_job_skipped(const JobSpec& job, const std::string& reason) override;
  /// jobs.csv: job_id,submit_s,start_s,end_s,wait_s,jct_s,gpus,gpu_type,nodes,restarts,preempted_s
  /// (trace order; start_s = first start).
  void write_csv(std::ostream& out);
  /// skipped.csv: job_id,line,reason.
  void write_skipped_csv(std::ostream& out) const;
  const std::vector<JobRecord>& finished() const { return finished_; }
  const std::map<std::string, long>& skipped_reasons() const { return reasons_; }
  long skipped() const { return static_cast<long>(skipped_.size()); }

 private:
  struct Skipped {
    std::string id;
    long line;
    std::string reason;
  };
  std::vector<JobRecord> finished_;
  std::vector<Skipped> skipped_;
  std::map<std::string, long> reasons_;
};

/// Event-driven samples of busy GPUs, running and queued jobs; integrates GPU busy time, over the
/// whole run and over the busy window: from the first arrival to the last instant at which a job
/// arrived or was waiting (the later of the last arrival and the moment the queue last emptied).
/// After the busy window the cluster only drains the jobs still running.
class TimeSeries final : public SimObserver {
 public:
  explicit TimeSeries(bool keep_samples) : keep_(keep_samples) {}
  void on_start(int total_gpus, long) override { total_gpus_ = total_gpus; }
  void on_job_submitted(const JobRecord& job) override;
  void on_sample(const StateSample& s) override;
  /// timeseries.csv: time_s,busy_gpus,running_jobs,queued_jobs,completed_jobs
  void write_csv(std::ostream& out) const;
  /// GPU-seconds allocated over the whole run.
  double busy_gpu_seconds() const { return busy_gpu_s_; }
  int total_gpus() const { return total_gpus_; }
  long peak_queued() const { return peak_queued_; }
  /// Length of the busy window, s (0 when no job arrived).
  double busy_window_s() const { return arrived_ ? window_end_s_ - first_arrival_s_ : 0.0; }
  /// GPU-seconds allocated within the busy window.
  double busy_window_gpu_seconds() const { return window_busy_gpu_s_; }

 private:
  bool keep_;
  int total_gpus_ = 0;
  std::vector<StateSample> samples_;
  StateSample last_{};
  bool have_last_ = false;
  double busy_gpu_s_ = 0;
  long peak_queued_ = 0;
  bool arrived_ = false;          // a job has arrived
  bool arrival_pending_ = false;  // a job arrived since the last sample
  double first_arrival_s_ = 0;
  double window_end_s_ = 0;
  double window_busy_gpu_s_ = 0;
};

/// A progress line on stderr, refreshed at most twice a second, once the run has lasted 1 s.
class Progress final : public SimObserver {
 public:
  explicit Progress(std::FILE* out) : out_(out), start_(std::chrono::steady_clock::now()) {}
  void on_start(int, long jobs) override { jobs_ = jobs; }
  void on_sample(const StateSample& s) override;
  void on_end(double) override;

 private:
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_;
  double last_print_ = 0;
  long jobs_ = 0;
  long counter_ = 0;
  bool printed_ = false;
};

/// Percentile with linear interpolation between closest ranks (numpy's default); 0 if empty.
double percentile(std::vector<double> values, double p);

}  // namespace fleetsim
