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

struct SkippedJob {
  std::string id;
  long line;
  std::string reason;
};

/// Figures of the finished jobs for summary.json, gathered when jobs.csv is written (trace order).
/// Percentiles are exact: every JCT and wait is kept as one double (16 B per finished job).
struct JobStats {
  std::vector<double> jct;   ///< end - submit per finished job, sorted ascending
  std::vector<double> wait;  ///< first start - submit, sorted ascending
  double jct_sum = 0;        ///< summed in trace order
  double wait_sum = 0;
  double wasted_gpu_s = 0;  ///< summed in trace order
  long restarts = 0;
  double first_submit = 0;  ///< of the finished jobs (0 when none)
  double last_end = 0;
};

/// A finished job on the fabric (network fidelity), for the network summary (trace order).
struct CommRow {
  double comm_s = 0;  ///< time in all-reduce
  double run_s = 0;   ///< end - first start
  int nodes = 0;      ///< nodes it spanned (at its last start)
};

/// Writes jobs.csv in trace order without keeping every finished job: a row is formatted when its
/// job finishes and buffered; when the buffer reaches `buffer_rows` rows it is sorted by trace
/// position and spilled as one sorted run to a scratch file. At the end of the run the runs and the
/// buffer are merged into `out` (the header first: it depends on whether any job ran on the fabric),
/// and JobStats are gathered in trace order, so the file and the summary equal those of a table that
/// kept every job. Memory: the buffer plus 16 B per finished job (exact percentiles).
class JobTable final : public SimObserver {
 public:
  static constexpr std::size_t kBufferRows = std::size_t{1} << 18;
  /// `out`: jobs.csv (e.g. a staged file); `scratch`: a file path for the sorted runs (created only
  /// if the buffer fills; removed at the end). Both must outlive the run.
  JobTable(std::ostream& out, std::string scratch, std::size_t buffer_rows = kBufferRows);
  void on_start(int, long jobs) override;
  void on_job_finished(const JobRecord& job) override;
  void on_job_skipped(const JobSpec& job, const std::string& reason) override;
  /// Merges the rows into jobs.csv: job_id,submit_s,start_s,end_s,wait_s,jct_s,gpus,gpu_type,nodes,
  /// restarts,preempted_s (+ comm_s,comm_gb_per_s when a job ran on the fabric) (trace order;
  /// start_s = first start), and fills stats().
  void on_end(double) override;
  /// skipped.csv: job_id,line,reason.
  void write_skipped_csv(std::ostream& out) const;
  const JobStats& stats() const { return stats_; }
  const std::vector<CommRow>& comm_rows() const { return comm_; }
  const std::map<std::string, long>& skipped_reasons() const { return reasons_; }
  long skipped() const { return static_cast<long>(skipped_.size()); }
  /// Sorted runs spilled to the scratch file (for tests).
  std::size_t runs() const { return runs_.size(); }

  /// One finished job: its row (without comm columns and newline) and what the summary needs.
  struct Row {
    int index = 0;
    int nodes = 0;
    double submit_s = 0, start_s = 0, end_s = 0, wasted_gpu_s = 0, comm_s = -1, comm_bytes = 0;
    std::string text;
  };

 private:
  void spill();
  void emit(const Row& r);

  std::ostream& out_;
  std::string scratch_;
  std::size_t buffer_rows_;
  std::vector<Row> buffer_;
  std::vector<std::pair<long long, long long>> runs_;  ///< [begin, end) byte offsets in scratch_
  long long scratch_size_ = 0;
  bool network_ = false;  ///< a job ran on the fabric: comm columns
  long restarts_ = 0;
  JobStats stats_;
  std::vector<CommRow> comm_;
  std::vector<SkippedJob> skipped_;
  std::map<std::string, long> reasons_;
};

/// Event-driven samples of busy GPUs, running and queued jobs; integrates GPU busy time, over the
/// whole run and over the busy window: from the first arrival to the last instant at which a job
/// arrived or was waiting (the later of the last arrival and the moment the queue last emptied).
/// After the busy window the cluster only drains the jobs still running.
class TimeSeries final : public SimObserver {
 public:
  /// `out`: where timeseries.csv goes as the run proceeds (nullptr: no file; only the integrals).
  explicit TimeSeries(std::ostream* out);
  void on_start(int total_gpus, long) override { total_gpus_ = total_gpus; }
  void on_job_submitted(const JobRecord& job) override;
  void on_sample(const StateSample& s) override;
  /// Writes the last sample to timeseries.csv (time_s,busy_gpus,running_jobs,queued_jobs,
  /// completed_jobs): a sample is written once the next changed sample has a later time.
  void on_end(double) override;
  /// GPU-seconds allocated over the whole run.
  double busy_gpu_seconds() const { return busy_gpu_s_; }
  int total_gpus() const { return total_gpus_; }
  long peak_queued() const { return peak_queued_; }
  /// Length of the busy window, s (0 when no job arrived).
  double busy_window_s() const { return arrived_ ? window_end_s_ - first_arrival_s_ : 0.0; }
  /// GPU-seconds allocated within the busy window.
  double busy_window_gpu_seconds() const { return window_busy_gpu_s_; }

 private:
  void write(const StateSample& s);

  std::ostream* out_;
  int total_gpus_ = 0;
  StateSample held_{};  ///< the newest changed sample, not yet written
  bool holding_ = false;
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
/// The same on values already sorted ascending (no copy).
double percentile_sorted(const std::vector<double>& sorted, double p);

}  // namespace fleetsim
