#include "models/job/pollux_agent.hpp"

#include <algorithm>
#include <cmath>

namespace fleetsim::pollux {

AdaptiveJob::AdaptiveJob(const PolluxApplication& app, long fixed_batch)
    : app_(&app), fixed_batch_(fixed_batch) {}

BatchLimits AdaptiveJob::limits() const {
  BatchLimits l;
  l.init_batch = app_->init_batch();
  l.max_batch = app_->max_batch();
  l.min_atomic = app_->min_local();
  l.max_atomic = app_->max_local();
  l.accumulation = true;
  return l;
}

double AdaptiveJob::total_progress() const {
  return app_->progress(app_->epochs());
}

void AdaptiveJob::set_progress(double progress) {
  progress_ = std::clamp(progress, 0.0, total_progress());
  epoch_ = 0;
  while (epoch_ < app_->epochs() && app_->progress(epoch_ + 1) <= progress_) ++epoch_;
  done_ = epoch_ >= app_->epochs();
}

long AdaptiveJob::global_batch() const {
  return replicas_ * atomic_ * (accum_ + 1);
}

int AdaptiveJob::max_profiled_replicas() const {
  int m = 0;
  for (const auto& [key, t] : profile_) m = std::max(m, std::get<1>(key));
  return m;
}

std::optional<SpeedupFunction> AdaptiveJob::speedup() const {
  if (!perf_) return std::nullopt;
  return SpeedupFunction(GoodputFunction(*perf_, grad_, app_->init_batch()), limits());
}

void AdaptiveJob::reallocate(const std::vector<int>& placement) {
  placement_.clear();
  replicas_ = 0;
  for (int g : placement)
    if (g > 0) {
      placement_.push_back(g);
      replicas_ += g;
    }
  if (placement_.empty()) {
    atomic_ = accum_ = 0;
    return;
  }
  pick_batch();
}

// The artifact's Job.update_local_bsz.
void AdaptiveJob::pick_batch() {
  if (placement_.empty()) return;
  const int replicas = replicas_;
  const auto nodes = static_cast<int>(placement_.size());
  long batch = fixed_batch_;
  if (batch <= 0 && !perf_) batch = std::max(app_->init_batch(), app_->min_local() * replicas);
  if (batch > 0) {
    const PolluxBatch b = app_->fixed_batch(batch, replicas);
    atomic_ = b.atomic;
    accum_ = b.accum;
    return;
  }
  const GoodputChoice c =
      GoodputFunction(*perf_, grad_, app_->init_batch()).optimize(nodes, replicas, limits());
  accum_ = c.accum_steps;
  const long count = replicas * (accum_ + 1);
  atomic_ = std::max(1L, std::min(c.atomic_bsz, app_->max_batch() / count));
}

void AdaptiveJob::observe(int nodes, int replicas, const PolluxStepTimes& t, double grad_sqr,
                          double grad_var) {
  grad_ = {grad_sqr, grad_var};
  if (!profile_.emplace(std::make_tuple(nodes, replicas, atomic_), t).second) return;
  std::vector<Observation> obs;
  obs.reserve(profile_.size());
  for (const auto& [key, v] : profile_)
    obs.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), v.step - v.sync, v.step});
  perf_ = fit_perf_params(obs);
}

// The artifact's Job.step, without the restart delay (the simulation pays it before calling).
double AdaptiveJob::train(double seconds) {
  if (placement_.empty() || done_ || seconds <= 0) return 0;
  const double budget = seconds;
  while (seconds > 0 && !done_) {
    const int replicas = replicas_;
    const auto nodes = static_cast<int>(placement_.size());
    const double batch = static_cast<double>(replicas * atomic_ * (accum_ + 1));
    const double scale = batch / static_cast<double>(app_->init_batch());
    const PolluxStepTimes t = app_->step_times(placement_, static_cast<double>(atomic_));
    const double accum_time = t.step - t.sync;
    const auto [sqr, var] = app_->grad_stats(batch, epoch_);
    const double denom = var / scale + sqr;
    const double gain = denom > 0 ? (var + sqr) / denom : 1.0;
    observe(nodes, replicas, t, sqr, var);
    const double total_time = t.step + accum_time * static_cast<double>(accum_);
    const double goodput = gain / total_time;
    const double next = app_->progress(epoch_ + 1);
    if (progress_ + goodput * seconds < next) {
      progress_ += goodput * seconds;
      seconds = 0;
    } else {
      ++epoch_;
      // Python's round(): half to even, as std::nearbyint in the default rounding mode.
      const double delta = std::min(seconds, std::nearbyint((next - progress_) / goodput));
      progress_ = next;
      seconds -= delta;
      if (epoch_ >= app_->epochs()) done_ = true;
    }
    pick_batch();
  }
  return budget - seconds;
}

}  // namespace fleetsim::pollux
