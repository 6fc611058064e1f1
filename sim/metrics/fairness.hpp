#pragma once
// FairnessObserver: finish-time fairness (Themis, Mahajan et al., NSDI'20) of every finished job:
//   rho = JCT / T_independent,
//   T_independent = alone_s * max(1, gpus / (total_gpus / N_avg)),
// where alone_s is the job's run time alone on its first placement (JobRecord::alone_s), gpus the
// GPUs it held, and N_avg the time-average number of active jobs (queued + running, from the
// simulation's state samples) over the job's lifetime [submit, end]. T_independent is the time
// the job would take on a private 1/N_avg share of the cluster: at full speed when its request
// fits in that share, slowed in proportion otherwise. rho <= 1: the job did at least as well as
// on its fair share; rho > 1: worse. Jobs with unknown or zero alone_s or zero JCT are not rated.
#include <vector>

#include "sim/engine/observer.hpp"

namespace fleetsim {

class FairnessObserver final : public SimObserver {
 public:
  void on_start(int total_gpus, long jobs) override;
  void on_job_submitted(const JobRecord& job) override;
  void on_job_finished(const JobRecord& job) override;
  void on_sample(const StateSample& s) override;

  /// Over the rated finished jobs (accumulated in completion order; no per-job rho is kept).
  double mean() const { return rated_ > 0 ? rho_sum_ / static_cast<double>(rated_) : 0.0; }
  double max() const { return rated_ > 0 ? rho_max_ : 0.0; }
  /// Share of rated jobs with rho > 1 (worse than their fair share), in [0, 1].
  double share_above_1() const {
    return rated_ > 0 ? static_cast<double>(above_1_) / static_cast<double>(rated_) : 0.0;
  }

 private:
  /// Integral of the active-job count from time 0 to t (t >= the last sample's time).
  double integral_to(double t) const { return integral_ + active_ * (t - last_t_); }

  int total_gpus_ = 0;
  double integral_ = 0;  ///< integral of the active-job count up to last_t_
  double last_t_ = 0;
  long active_ = 0;                      ///< queued + running since the last sample
  std::vector<double> submit_integral_;  ///< integral_to(submit time), per job index (8 B per job)
  long rated_ = 0;
  double rho_sum_ = 0;
  double rho_max_ = 0;
  long above_1_ = 0;
};

}  // namespace fleetsim
