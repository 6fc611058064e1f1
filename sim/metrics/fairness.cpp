#include "sim/metrics/fairness.hpp"

#include <algorithm>

namespace fleetsim {

void FairnessObserver::on_start(int total_gpus, long jobs) {
  total_gpus_ = total_gpus;
  submit_integral_.assign(static_cast<std::size_t>(std::max(0L, jobs)), 0.0);
}

void FairnessObserver::on_job_submitted(const JobRecord& job) {
  const auto i = static_cast<std::size_t>(job.index);
  if (i >= submit_integral_.size()) submit_integral_.resize(i + 1, 0.0);
  submit_integral_[i] = integral_to(job.submit_s);
}

void FairnessObserver::on_job_finished(const JobRecord& job) {
  const double jct = job.end_s - job.submit_s;
  const auto i = static_cast<std::size_t>(job.index);
  if (!(job.alone_s > 0) || !(jct > 0) || i >= submit_integral_.size()) return;
  // The job was active over its whole lifetime, so the average is at least 1.
  const double n_avg = std::max(1.0, (integral_to(job.end_s) - submit_integral_[i]) / jct);
  const double share = total_gpus_ > 0 ? job.gpus * n_avg / total_gpus_ : 0.0;  // gpus / (C / N)
  const double independent = job.alone_s * std::max(1.0, share);
  const double rho = jct / independent;
  rho_max_ = rated_ == 0 ? rho : std::max(rho_max_, rho);
  rho_sum_ += rho;
  // A job that ran alone at once has rho = 1 up to rounding: do not count it as above.
  if (rho > 1.0 + 1e-9) ++above_1_;
  ++rated_;
}

void FairnessObserver::on_sample(const StateSample& s) {
  integral_ = integral_to(s.time_s);
  last_t_ = s.time_s;
  active_ = s.running + s.queued;
}

}  // namespace fleetsim
