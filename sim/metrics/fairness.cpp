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
  rho_.push_back(jct / independent);
}

void FairnessObserver::on_sample(const StateSample& s) {
  integral_ = integral_to(s.time_s);
  last_t_ = s.time_s;
  active_ = s.running + s.queued;
}

double FairnessObserver::mean() const {
  double sum = 0;
  for (double r : rho_) sum += r;
  return rho_.empty() ? 0.0 : sum / static_cast<double>(rho_.size());
}

double FairnessObserver::max() const {
  return rho_.empty() ? 0.0 : *std::max_element(rho_.begin(), rho_.end());
}

double FairnessObserver::share_above_1() const {
  if (rho_.empty()) return 0.0;
  // A job that ran alone at once has rho = 1 up to rounding: do not count it as above.
  const auto above = std::count_if(rho_.begin(), rho_.end(), [](double r) { return r > 1.0 + 1e-9; });
  return static_cast<double>(above) / static_cast<double>(rho_.size());
}

}  // namespace fleetsim
