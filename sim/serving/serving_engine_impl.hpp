#pragma once
// The serving engine's internals (sim/serving/serving_engine.hpp is the interface), shared by its
// parts: serving_engine.cpp (event loop, routing, batching steps), serving_lifecycle.cpp (replicas
// switched on and off: the autoscaler and failover outages) and serving_kv_transfer.cpp
// (disaggregated prefill -> decode KV hand-off). Not for use outside those files.
#include <deque>
#include <functional>
#include <queue>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/serving/free_block_queue.hpp"
#include "sim/serving/prefix_cache.hpp"
#include "sim/serving/serving_engine.hpp"

namespace fleetsim::serving_detail {

struct Seq {
  int prompt = 0;
  int out = 0;
  int computed = 0;   ///< tokens whose KV is computed
  int generated = 0;  ///< output tokens sampled
  long blocks = 0;    ///< KV blocks held
  bool admitted_once = false;
  int xfer_from = -1;    ///< disaggregated: the prefill replica its KV is leaving
  long xfer_blocks = 0;  ///< blocks that replica holds until the transfer ends
  double xfer_end = 0;   ///< when its transfer in flight lands
  bool parked = false;   ///< its KV waits on the prefill replica for a decode replica to be ready
  /// Preempted with prefix caching: its cached blocks in that replica's free queue, in that epoch.
  long cache_ticket = -1;
  int cache_replica = -1;
  long cache_epoch = 0;
};

enum class Power { kOff, kLoading, kReady };

struct Replica {
  Power power = Power::kReady;
  double ready_at = 0;  ///< kLoading: when it starts serving
  double on_since = 0;  ///< when it was switched on
  std::deque<int> waiting;
  std::vector<int> running;  ///< admission order (the last is preempted first)
  long free_blocks = 0;
  FreeBlockQueue pool;   ///< the order free blocks are reused in (free_blocks of them)
  long pool_epoch = -1;  ///< the epoch `pool` was last reset for
  bool busy = false;
  std::vector<std::pair<int, int>> scheduled;  ///< (request, tokens) of the step in flight
  double next_sample = 0;
  PrefixCache cache{0};
  int incoming = 0;     ///< disaggregated decode replica: KV transfers on their way to it
  int outgoing = 0;     ///< disaggregated prefill replica: KV transfers leaving it (blocks still held)
  bool failed = false;  ///< in an outage (failover)
  long epoch = 0;       ///< bumped by each outage: its step in flight and transfers out no longer count
  Power before = Power::kReady;  ///< in an outage: its power when the outage began
};

/// Replicas [lo, hi) that the autoscaler switches on and off together, at least `min` on.
struct Group {
  int lo = 0;
  int hi = 0;
  int min = 0;
};

/// A step in flight: (end, replica, the replica's epoch when it began); a lockstep group's step:
/// (end, its first replica, kGroupStep).
using StepEvent = std::tuple<double, int, long>;
using StepQueue = std::priority_queue<StepEvent, std::vector<StepEvent>, std::greater<>>;
constexpr long kGroupStep = -1;
/// An outage's start (down) or end, in time order.
struct OutageEvent {
  double t = 0;
  bool down = true;
  int outage = 0;
};

class Engine {
 public:
  Engine(const std::vector<ServingRequest>& reqs, const ServingStepModel& model,
         const ServingEngineConfig& c);

  ServingResult run();

 private:
  long blocks_for(long long tokens) const {
    return static_cast<long>((tokens + c_.block_size - 1) / c_.block_size);
  }

  /// The replica's time-varying speed factor at `now` (ServingEngineConfig::replica_speed_changes).
  double speed_factor(int r, double now) const;

  /// Requests waiting for any replica will be served without another outage ending: the autoscaler
  /// can switch on (or route to) a replica taking arrivals that is not in an outage.
  bool rescuable() const;

  /// The same for parked KV: the decode group is autoscaled and has a replica not in an outage.
  bool decode_rescuable() const;

  double next_ready() const;

  int on_count() const;

  /// The autoscaler's decisions at `now` (see ServingEngineConfig), one per group.
  void scale(double now);

  void scale(const Group& g, double now);

  /// Routing among the ready replicas only (with the autoscaler): round-robin cycles over them;
  /// least-outstanding and prefix-aware choose among them as usual.
  int route_ready(int req);

  int route(int req);

  /// Routes request `req` now and wakes its replica; with every replica down it waits (orphans_).
  void send(int req, double now, StepQueue& steps);

  /// Routes `ids` in order, then wakes the replicas that got them (one step can take them all).
  void send_all(const std::vector<int>& ids, double now, StepQueue& steps);

  void resend_orphans(double now, StepQueue& steps);

  /// Outage k begins: the replica's step in flight is lost, its requests lose their KV and are routed
  /// again (in admission order, then queue order) to the replicas still up.
  void go_down(int k, double now, StepQueue& steps);

  /// Outage k ends: the replica serves again (its model loaded), and requests waiting for a replica go.
  void come_back(int k, double now, StepQueue& steps);

  void arrive(int req, int r);

  /// The replica's free queue, reset to free_blocks anonymous blocks after an outage.
  FreeBlockQueue& pool(Replica& rep);

  /// Request `id` gets `n` more blocks from the front of the replica's free queue.
  void allocate(Replica& rep, int id, long n);

  /// Admits waiting request `id` if the KV cache holds its whole known sequence (vLLM's
  /// scheduler_reserve_full_isl); schedules its first chunk within `budget`. False: not admitted.
  bool admit(Replica& rep, int r, int id, int& budget);

  void preempt(Replica& rep, int r, int victim);

  void sample(Replica& rep, int r, double now);

  /// Schedules replica r's next step into rep.scheduled (running requests, then waiting ones); false
  /// when it has nothing to run.
  bool schedule(int r, double now);

  /// shape_ from replica r's scheduled step.
  void fill_shape(int r);

  /// The duration of replica r's scheduled step (shape_), at its speed.
  double step_time(int r, double now) const;

  void start(int r, double now, StepQueue& steps);

  /// ServingEngineConfig::lockstep: group g's replicas step together when all are free.
  void start_group(int g, double now, StepQueue& steps);

  void finish(int r, double now);

  /// The KV link from prefill replica p to decode replica d at `now` (failover may have moved them).
  const KvLink& link(int p, int d, double now) const;

  /// The least outstanding ready decode replica for KV leaving prefill replica p (ties: the fastest
  /// link, then the lowest index); -1: none ready (outages, or the autoscaler has none on).
  int pick_decode(int p, double now) const;

  /// Disaggregated: request `id` has its first token on prefill replica `r`; its KV leaves for
  /// pick_decode(), or, with no decode replica ready, waits on `r` (parked_, its blocks held).
  void hand_off(Replica& rep, int r, int id, double now);

  /// Starts the transfer of request `id`'s KV (held by its prefill replica) to decode replica d.
  void send_kv(int id, int d, double now);

  /// Request `id`'s KV (held by its prefill replica) leaves for pick_decode(), or, with no decode
  /// replica ready, waits there (parked_).
  void send_or_park(int id, double now);

  /// Parked KV leaves for decode replicas that are ready now (in the order it was parked).
  void dispatch_parked(double now);

  /// Replica r goes down: KV transfers to it leave again from their prefill replica for another
  /// decode replica (or park there); KV held by it (in flight or parked) is lost and its requests
  /// are appended to `lost` (to be prefilled again).
  void drop_transfers(int r, double now, std::vector<int>& lost);

  /// Forgets request `id`'s transfer in flight (land() ignores it when its time comes).
  void cancel_transfer(int id);

  /// A KV transfer ends: the prefill replica frees the blocks, the decode replica queues the request.
  void land(int id, double now, StepQueue& steps);

  /// Requests wait for a replica (orphans_, parked_) that an outage's end or the autoscaler will
  /// bring (t_out: the next outage event): the run goes on.
  bool waiting_for_replica(double t_out) const;

  const std::vector<ServingRequest>& reqs_;
  const ServingStepModel& model_;
  ServingEngineConfig c_;
  std::vector<Seq> seqs_;
  std::vector<Replica> replicas_;
  ServingResult result_;
  BatchShape shape_;
  std::vector<Group> groups_;  ///< the autoscaled groups
  bool autoscale_ = false;     ///< any group autoscaled
  bool front_scaled_ = false;  ///< the replicas taking arrivals are autoscaled: route to ready ones
  int rr_ = 0;
  int prefill_ = 0;  ///< prefill replicas (0: colocated)
  int front_ = 1;    ///< replicas that take arrivals
  std::priority_queue<std::pair<double, int>, std::vector<std::pair<double, int>>, std::greater<>>
      xfers_;  ///< (end, request) of KV transfers in flight
  std::vector<int> done_, leaving_;
  std::size_t cache_entries_ = 0;
  std::vector<OutageEvent> out_events_;
  std::size_t next_out_ = 0;
  std::vector<int> orphans_;  ///< requests waiting for any replica to be up
  std::vector<int> parked_;   ///< disaggregated: KV on a prefill replica waiting for a decode replica
  std::vector<std::pair<double, int>> cancelled_;  ///< (end, request) of transfers cancelled in flight
};

}  // namespace fleetsim::serving_detail
