#include "sim/serving/replica_lifecycle.hpp"

#include <algorithm>
#include <cmath>

namespace fleetsim::serving_detail {

ReplicaLifecycle::ReplicaLifecycle(const ServingEngineConfig& c, int replicas, int prefill)
    : states_(static_cast<std::size_t>(replicas)),
      prefill_(prefill),
      front_(prefill > 0 ? prefill : replicas),
      scale_interval_s_(c.scale_interval_s),
      scale_up_queue_(c.scale_up_queue),
      model_load_s_(c.model_load_s) {
  auto add_group = [&](int lo, int hi, int min) {
    if (min <= 0 || min >= hi - lo) return;
    groups_.push_back({lo, hi, min});
    for (int r = lo + min; r < hi; ++r) states_[static_cast<std::size_t>(r)].power = Power::kOff;
  };
  if (prefill_ == 0) {
    add_group(0, replicas, c.min_replicas);
  } else {
    add_group(0, prefill_, c.min_prefill_replicas);
    add_group(prefill_, replicas, c.min_decode_replicas);
  }
  front_scaled_ = !groups_.empty() && groups_.front().lo == 0;
  windows_.resize(states_.size());
  for (std::size_t r = 0; r < states_.size(); ++r)
    if (states_[r].power == Power::kReady) windows_[r].push_back({0, 0, INFINITY});
  next_decision_ = groups_.empty() ? INFINITY : scale_interval_s_;
  for (std::size_t k = 0; k < c.outages.size(); ++k) {
    outages_.push_back({c.outages[k].down_s, true, static_cast<int>(k)});
    if (std::isfinite(c.outages[k].up_s)) outages_.push_back({c.outages[k].up_s, false, static_cast<int>(k)});
  }
  std::stable_sort(outages_.begin(), outages_.end(),
                   [](const OutageEvent& a, const OutageEvent& b) { return a.t < b.t; });
}

double ReplicaLifecycle::next_outage() const {
  return next_outage_ < outages_.size() ? outages_[next_outage_].t : INFINITY;
}

double ReplicaLifecycle::next_ready() const {
  double t = INFINITY;
  for (const auto& s : states_)
    if (s.power == Power::kLoading) t = std::min(t, s.ready_at);
  return t;
}

double ReplicaLifecycle::next_tick() const {
  return std::min(next_decision_, next_ready());
}

bool ReplicaLifecycle::tick(double now) {
  for (auto& s : states_)
    if (s.power == Power::kLoading && s.ready_at <= now) s.power = Power::kReady;
  return now >= next_decision_;
}

int ReplicaLifecycle::on_count() const {
  int n = 0;
  for (const auto& s : states_) n += s.power != Power::kOff ? 1 : 0;
  return n;
}

void ReplicaLifecycle::decide(double now, const std::vector<ReplicaActivity>& activity, bool orphans,
                              bool parked) {
  for (const Group& g : groups_) decide(g, now, activity, orphans, parked);
  next_decision_ = now + scale_interval_s_;
}

void ReplicaLifecycle::decide(const Group& g, double now, const std::vector<ReplicaActivity>& activity,
                              bool orphans, bool parked) {
  int ready = 0, loading = 0;
  std::size_t waiting = 0;
  for (int r = g.lo; r < g.hi; ++r) {
    const State& s = at(r);
    ready += s.power == Power::kReady ? 1 : 0;
    loading += s.power == Power::kLoading ? 1 : 0;
    if (s.power == Power::kReady) waiting += activity[static_cast<std::size_t>(r)].waiting;
  }
  // Requests waiting for any replica (every ready one taking arrivals is in an outage), or KV waiting
  // for a decode replica (every ready one is in an outage): switch one on.
  const bool stranded =
      ready == 0 && ((g.lo == 0 && orphans) || (prefill_ > 0 && g.lo == prefill_ && parked));
  if ((stranded || static_cast<double>(waiting) > scale_up_queue_ * std::max(ready, 1)) && loading == 0) {
    for (int r = g.lo; r < g.hi; ++r)
      if (State& s = states_[static_cast<std::size_t>(r)]; s.power == Power::kOff && !s.failed) {
        s.power = Power::kLoading;
        s.ready_at = now + model_load_s_;
        s.on_since = now;
        peak_ = std::max(peak_, on_count());
        windows_[static_cast<std::size_t>(r)].push_back({now, s.ready_at, INFINITY});
        return;
      }
    return;
  }
  if (waiting > 0 || ready <= g.min) return;
  for (int r = g.hi; r-- > g.lo;) {
    State& s = states_[static_cast<std::size_t>(r)];
    if (s.power == Power::kReady && activity[static_cast<std::size_t>(r)].idle) {
      s.power = Power::kOff;
      replica_s_ += now - s.on_since;
      windows_[static_cast<std::size_t>(r)].back().off_s = now;
      return;
    }
  }
}

bool ReplicaLifecycle::go_down(int r, double now) {
  if (r < 0 || r >= static_cast<int>(states_.size())) return false;
  State& s = states_[static_cast<std::size_t>(r)];
  if (s.failed) return false;
  if (s.power != Power::kOff) replica_s_ += now - s.on_since;
  s.failed = true;
  s.before = s.power;
  s.power = Power::kOff;  // the autoscaler leaves a failed replica alone (never switches it on)
  return true;
}

ReplicaLifecycle::Return ReplicaLifecycle::come_back(int r, double now) {
  if (r < 0 || r >= static_cast<int>(states_.size())) return Return::kNotDown;
  State& s = states_[static_cast<std::size_t>(r)];
  if (!s.failed) return Return::kNotDown;
  s.failed = false;
  // Re-placed and loaded: it serves again, unless the autoscaler had switched it off before the outage
  // (then it stays off until the autoscaler wants it).
  if (s.before == Power::kOff) return Return::kStaysOff;
  s.power = Power::kReady;
  s.on_since = now;
  peak_ = std::max(peak_, on_count());
  return Return::kServes;
}

bool ReplicaLifecycle::rescuable() const {
  if (!front_scaled_) return false;
  for (int r = 0; r < front_; ++r)
    if (!at(r).failed) return true;
  return false;
}

bool ReplicaLifecycle::decode_rescuable() const {
  if (prefill_ == 0 || groups_.empty() || groups_.back().lo != prefill_) return false;
  for (int r = prefill_; r < static_cast<int>(states_.size()); ++r)
    if (!at(r).failed) return true;
  return false;
}

bool ReplicaLifecycle::waiting_for_replica(double t_out, bool orphans, bool parked) const {
  if (!orphans && !parked) return false;
  if (std::isfinite(t_out)) return true;
  return (orphans && rescuable()) || (parked && decode_rescuable());
}

void ReplicaLifecycle::end(double now) {
  for (const auto& s : states_)
    if (s.power != Power::kOff) replica_s_ += now - s.on_since;
  peak_ = std::max(peak_, on_count());
}

}  // namespace fleetsim::serving_detail
