// The serving engine's replicas switched on and off: the autoscaler (groups of replicas, see
// ServingEngineConfig) and failover outages (ReplicaOutage), and requests waiting for any replica
// (or, disaggregated, KV waiting for a decode replica).
#include <algorithm>
#include <cmath>

#include "sim/serving/serving_engine_impl.hpp"

namespace fleetsim::serving_detail {

bool Engine::rescuable() const {
  if (!front_scaled_) return false;
  for (int r = 0; r < front_; ++r)
    if (!replicas_[static_cast<std::size_t>(r)].failed) return true;
  return false;
}

bool Engine::decode_rescuable() const {
  if (prefill_ == 0 || groups_.empty() || groups_.back().lo != prefill_) return false;
  for (std::size_t r = static_cast<std::size_t>(prefill_); r < replicas_.size(); ++r)
    if (!replicas_[r].failed) return true;
  return false;
}

bool Engine::waiting_for_replica(double t_out) const {
  if (orphans_.empty() && parked_.empty()) return false;
  if (std::isfinite(t_out)) return true;
  return (!orphans_.empty() && rescuable()) || (!parked_.empty() && decode_rescuable());
}

double Engine::next_ready() const {
  double t = INFINITY;
  for (const auto& rep : replicas_)
    if (rep.power == Power::kLoading) t = std::min(t, rep.ready_at);
  return t;
}

int Engine::on_count() const {
  int n = 0;
  for (const auto& rep : replicas_) n += rep.power != Power::kOff ? 1 : 0;
  return n;
}

void Engine::scale(double now) {
  for (const Group& g : groups_) scale(g, now);
}

void Engine::scale(const Group& g, double now) {
  const auto lo = replicas_.begin() + g.lo, hi = replicas_.begin() + g.hi;
  int ready = 0, loading = 0;
  std::size_t waiting = 0;
  for (auto it = lo; it != hi; ++it) {
    ready += it->power == Power::kReady ? 1 : 0;
    loading += it->power == Power::kLoading ? 1 : 0;
    if (it->power == Power::kReady) waiting += it->waiting.size();
  }
  // Requests waiting for any replica (every ready one taking arrivals is in an outage), or KV waiting
  // for a decode replica (every ready one is in an outage): switch one on.
  const bool stranded = ready == 0 && ((g.lo == 0 && !orphans_.empty()) ||
                                       (prefill_ > 0 && g.lo == prefill_ && !parked_.empty()));
  if ((stranded || static_cast<double>(waiting) > c_.scale_up_queue * std::max(ready, 1)) && loading == 0) {
    for (auto it = lo; it != hi; ++it)
      if (Replica& rep = *it; rep.power == Power::kOff && !rep.failed) {
        rep.power = Power::kLoading;
        rep.ready_at = now + c_.model_load_s;
        rep.on_since = now;
        result_.peak_replicas = std::max(result_.peak_replicas, on_count());
        return;
      }
    return;
  }
  if (waiting > 0 || ready <= g.min) return;
  for (auto it = hi; it-- != lo;) {
    Replica& rep = *it;
    if (rep.power == Power::kReady && !rep.busy && rep.running.empty() && rep.waiting.empty() &&
        rep.incoming == 0 && rep.outgoing == 0) {
      rep.power = Power::kOff;
      result_.replica_s += now - rep.on_since;
      return;
    }
  }
}

void Engine::resend_orphans(double now, StepQueue& steps) {
  dispatch_parked(now);
  if (orphans_.empty()) return;
  std::vector<int> waiting;
  waiting.swap(orphans_);
  send_all(waiting, now, steps);
}

void Engine::go_down(int k, double now, StepQueue& steps) {
  const int r = c_.outages[static_cast<std::size_t>(k)].replica;
  if (r < 0 || r >= static_cast<int>(replicas_.size())) return;
  Replica& rep = replicas_[static_cast<std::size_t>(r)];
  if (rep.failed) return;
  if (rep.power != Power::kOff) result_.replica_s += now - rep.on_since;
  rep.failed = true;
  rep.before = rep.power;
  rep.power = Power::kOff;  // the autoscaler leaves a failed replica alone (never powers it on)
  ++rep.epoch;
  rep.outgoing = 0;  // the blocks of its KV transfers in flight are freed below (land() checks epoch)
  rep.busy = false;
  rep.scheduled.clear();
  std::vector<int> moved(rep.running.begin(), rep.running.end());
  moved.insert(moved.end(), rep.waiting.begin(), rep.waiting.end());
  rep.running.clear();
  rep.waiting.clear();
  rep.free_blocks = c_.kv_blocks;
  rep.cache = PrefixCache(c_.prefix_caching ? cache_entries_ : 0);
  for (int id : moved) {
    Seq& s = seqs_[static_cast<std::size_t>(id)];
    s.blocks = 0;
    s.computed = 0;  // KV lost: prefill again (prompt and tokens generated so far)
  }
  drop_transfers(r, now, moved);  // disaggregated: KV in flight from it lost, to it sent elsewhere
  result_.rerouted[static_cast<std::size_t>(k)] += static_cast<long>(moved.size());
  send_all(moved, now, steps);
}

void Engine::come_back(int k, double now, StepQueue& steps) {
  const int r = c_.outages[static_cast<std::size_t>(k)].replica;
  if (r < 0 || r >= static_cast<int>(replicas_.size())) return;
  Replica& rep = replicas_[static_cast<std::size_t>(r)];
  if (!rep.failed) return;
  rep.failed = false;
  // Re-placed and loaded: it serves again, unless the autoscaler had switched it off before the
  // outage (then it stays off until the autoscaler wants it).
  if (rep.before == Power::kOff) {
    resend_orphans(now, steps);
    return;
  }
  rep.power = Power::kReady;
  rep.on_since = now;
  result_.peak_replicas = std::max(result_.peak_replicas, on_count());
  resend_orphans(now, steps);
  if (!rep.busy) start(r, now, steps);
}

}  // namespace fleetsim::serving_detail
