#pragma once
// Which of a service's replicas serve, and when: the autoscaler (ServingEngineConfig::min_replicas and
// the disaggregated groups' min_prefill_replicas / min_decode_replicas) switching replicas on (serving
// after model_load_s) and off, and failover outages (ReplicaOutage) taking them out of service. It
// decides and keeps the books (replica time switched on, peak); the engine (serving_engine.cpp) moves
// the requests.
#include <cstddef>
#include <vector>

#include "sim/serving/serving_engine.hpp"

namespace fleetsim::serving_detail {

/// What the autoscaler sees of one replica at a decision.
struct ReplicaActivity {
  std::size_t waiting = 0;  ///< requests queued on it
  bool idle = false;        ///< no step, no request, no KV transfer from or to it
};

/// An outage's start (down) or end, in time order.
struct OutageEvent {
  double t = 0;
  bool down = true;
  int outage = 0;  ///< index in ServingEngineConfig::outages
};

class ReplicaLifecycle {
 public:
  /// `replicas` replicas, the first `prefill` of them prefill-only (0: colocated).
  ReplicaLifecycle(const ServingEngineConfig& config, int replicas, int prefill);

  /// Switched on, model loaded, not in an outage: it can take requests.
  bool ready(int r) const { return at(r).power == Power::kReady; }
  bool failed(int r) const { return at(r).failed; }

  /// The next outage event's time (inf: none left), and popping it.
  double next_outage() const;
  OutageEvent pop_outage() { return outages_[next_outage_++]; }

  /// The autoscaler's next time: a decision, or a replica's model loaded (inf: no autoscaler).
  double next_tick() const;
  /// At next_tick(): replicas whose model has loaded become ready. True when a decision is due now.
  bool tick(double now);
  /// The autoscaler's decision at `now`, one per group (see ServingEngineConfig): `activity` per
  /// replica; `orphans`: requests wait for any replica to take arrivals; `parked`: KV waits for a
  /// decode replica.
  void decide(double now, const std::vector<ReplicaActivity>& activity, bool orphans, bool parked);

  /// Replica r's outage begins at `now`; false when it cannot (no such replica, or already down).
  bool go_down(int r, double now);
  enum class Return { kNotDown, kStaysOff, kServes };
  /// Replica r's outage ends: it serves again, unless the autoscaler had switched it off before.
  Return come_back(int r, double now);

  /// Requests wait for a replica (`orphans`, or `parked` KV) that an outage's end (the next outage
  /// event at t_out) or the autoscaler will bring: the run goes on.
  bool waiting_for_replica(double t_out, bool orphans, bool parked) const;

  /// The run ends at `now`: replicas still on count their time.
  void end(double now);
  double replica_s() const { return replica_s_; }
  /// Per replica, when the autoscaler had it on (on from the start: a window from 0, ready at 0).
  const std::vector<std::vector<PowerWindow>>& windows() const { return windows_; }
  int peak_replicas() const { return peak_; }

 private:
  enum class Power { kOff, kLoading, kReady };
  struct State {
    Power power = Power::kReady;
    double ready_at = 0;           ///< kLoading: when it starts serving
    double on_since = 0;           ///< when it was switched on
    bool failed = false;           ///< in an outage
    Power before = Power::kReady;  ///< in an outage: its power when the outage began
  };
  /// Replicas [lo, hi) that the autoscaler switches on and off together, at least `min` on.
  struct Group {
    int lo = 0;
    int hi = 0;
    int min = 0;
  };

  const State& at(int r) const { return states_[static_cast<std::size_t>(r)]; }
  void decide(const Group& g, double now, const std::vector<ReplicaActivity>& activity, bool orphans,
              bool parked);
  int on_count() const;
  double next_ready() const;
  /// Requests waiting for any replica will be served without another outage ending: the autoscaler
  /// can switch on (or route to) a replica taking arrivals that is not in an outage.
  bool rescuable() const;
  /// The same for parked KV: the decode group is autoscaled and has a replica not in an outage.
  bool decode_rescuable() const;

  std::vector<State> states_;
  std::vector<Group> groups_;  ///< the autoscaled groups
  int prefill_;
  int front_;                  ///< replicas taking arrivals
  bool front_scaled_ = false;  ///< the replicas taking arrivals are autoscaled
  double scale_interval_s_, scale_up_queue_, model_load_s_;
  double next_decision_;
  std::vector<OutageEvent> outages_;
  std::size_t next_outage_ = 0;
  double replica_s_ = 0;
  int peak_ = 0;
  std::vector<std::vector<PowerWindow>> windows_;
};

}  // namespace fleetsim::serving_detail
