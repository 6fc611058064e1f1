// The serving engine's event loop (ServingEngine): arrivals routed by the service's Router, each
// replica's steps (scheduled by its ReplicaScheduler over its KvCacheManager, timed by the step model),
// the autoscaler's and failover's events (ReplicaLifecycle) and disaggregated KV landings (KvHandoff),
// in time order. Its parts decide; it moves the requests between them.
#include "sim/serving/serving_engine.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <memory>
#include <queue>
#include <span>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "sim/serving/kv_handoff.hpp"
#include "sim/serving/replica_lifecycle.hpp"
#include "sim/serving/replica_scheduler.hpp"
#include "sim/serving/router.hpp"
#include "sim/serving/sequence.hpp"

namespace fleetsim::serving_detail {
namespace {

/// A step in flight: (end, replica, the replica's epoch when it began); a lockstep group's step:
/// (end, its first replica, kGroupStep).
using StepEvent = std::tuple<double, int, long>;
using StepQueue = std::priority_queue<StepEvent, std::vector<StepEvent>, std::greater<>>;
constexpr long kGroupStep = -1;

class ServingEngine {
 public:
  ServingEngine(const std::vector<ServingRequest>& reqs, const ServingStepModel& model,
                const ServingEngineConfig& c);

  ServingResult run();

 private:
  struct Replica {
    ReplicaScheduler scheduler;
    bool busy = false;  ///< a step in flight
    long epoch = 0;     ///< bumped by each outage: its step in flight no longer counts
    double next_sample = 0;
  };
  Replica& at(int r) { return replicas_[static_cast<std::size_t>(r)]; }
  int count() const { return static_cast<int>(replicas_.size()); }

  /// The replica for request `req` among those that can take it now; -1: none (it waits, orphans_).
  int route(int req);
  /// Routes request `req` now and wakes its replica.
  void send(int req, double now);
  /// Routes `ids` in order, then wakes the replicas that got them (one step can take them all).
  void send_all(const std::vector<int>& ids, double now);
  void arrive(int req, int r);
  /// Parked KV and requests waiting for a replica go to the replicas ready now.
  void resend_orphans(double now);
  /// The decode replicas ready now (disaggregated), for the KV hand-off.
  std::span<const RouteCandidate> decoders();

  void sample(int r, double now);
  bool schedule(int r, double now);
  /// The replica's time-varying speed factor at `now` (ServingEngineConfig::replica_speed_changes).
  double speed_factor(int r, double now) const;
  /// The duration of the step in shape_ on replica r, at its speed.
  double step_time(int r, double now) const;
  void start(int r, double now);
  /// ServingEngineConfig::lockstep: group g's replicas step together when all are free.
  void start_group(int g, double now);
  void finish(int r, double now);

  /// Outage k begins: the replica's step in flight is lost, its requests lose their KV and are routed
  /// again (in admission order, then queue order) to the replicas still up.
  void go_down(int k, double now);
  /// Outage k ends: the replica serves again (its model loaded), and requests waiting for a replica go.
  void come_back(int k, double now);
  void decide(double now);
  /// A KV transfer lands: the prefill replica frees the blocks, the decode replica queues the request.
  void land(double now);

  const std::vector<ServingRequest>& reqs_;
  const ServingStepModel& model_;
  const ServingEngineConfig c_;
  std::vector<Sequence> seqs_;
  int prefill_;  ///< prefill replicas (0: colocated)
  int front_;    ///< replicas that take arrivals
  std::vector<Replica> replicas_;
  ReplicaLifecycle lifecycle_;
  KvHandoff handoff_;
  std::unique_ptr<Router> router_;
  ServingResult result_;
  StepQueue steps_;
  BatchShape shape_;                     ///< reused: no allocation per step
  std::vector<RouteCandidate> choices_;  ///< reused by route() and decoders()
  std::vector<int> orphans_;             ///< requests waiting for any replica to be up
};

int replicas_of(const ServingEngineConfig& c) {
  return std::max(1, c.replicas);
}
int prefill_of(const ServingEngineConfig& c) {
  return c.prefill_replicas > 0 && c.prefill_replicas < replicas_of(c) ? c.prefill_replicas : 0;
}

ServingEngine::ServingEngine(const std::vector<ServingRequest>& reqs, const ServingStepModel& model,
                             const ServingEngineConfig& c)
    : reqs_(reqs),
      model_(model),
      c_(c),
      seqs_(reqs.size()),
      prefill_(prefill_of(c)),
      front_(prefill_ > 0 ? prefill_ : replicas_of(c)),
      lifecycle_(c_, replicas_of(c), prefill_),
      handoff_(c_, replicas_of(c), prefill_, seqs_),
      router_(routers().create(c.routing, RouterParams{front_, &c_.router_options})) {
  replicas_.reserve(static_cast<std::size_t>(replicas_of(c)));
  for (int r = 0; r < replicas_of(c); ++r)
    replicas_.push_back({ReplicaScheduler(r, c_, seqs_, r < prefill_)});
  result_.requests.resize(reqs.size());
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    seqs_[i].prompt = std::max(1, reqs[i].input_tokens);
    seqs_[i].out = std::max(1, reqs[i].output_tokens);
    seqs_[i].block_hashes = &reqs[i].block_hashes;
    result_.requests[i].arrival_s = reqs[i].arrival_s;
  }
  result_.rerouted.assign(c_.outages.size(), 0);
}

ServingResult ServingEngine::run() {
  std::size_t next = 0;
  double now = 0;
  while (true) {
    const double t_arr = next < reqs_.size() ? reqs_[next].arrival_s : INFINITY;
    const double t_step = steps_.empty() ? INFINITY : std::get<0>(steps_.top());
    const double t_xfer = handoff_.next_landing();
    const double t_out = lifecycle_.next_outage();
    if (!std::isfinite(t_arr) && !std::isfinite(t_step) && !std::isfinite(t_xfer) &&
        !lifecycle_.waiting_for_replica(t_out, !orphans_.empty(), handoff_.parked()))
      break;
    const double t_scale = lifecycle_.next_tick();
    if (t_out <= t_arr && t_out <= t_step && t_out <= t_xfer && t_out <= t_scale) {
      now = t_out;
      const OutageEvent e = lifecycle_.pop_outage();
      if (e.down)
        go_down(e.outage, now);
      else
        come_back(e.outage, now);
      continue;
    }
    if (t_xfer <= t_arr && t_xfer <= t_step && t_xfer <= t_scale) {
      now = t_xfer;
      land(now);
      continue;
    }
    if (t_scale < t_arr && t_scale < t_step) {
      now = t_scale;
      const bool decision = lifecycle_.tick(now);
      resend_orphans(now);
      if (decision) decide(now);
      continue;
    }
    if (t_arr <= t_step) {
      now = t_arr;
      send(static_cast<int>(next), now);
      ++next;
    } else {
      const auto [t, r, epoch] = steps_.top();
      steps_.pop();
      now = t;
      if (epoch == kGroupStep) {
        const int hi = std::min(count(), r + c_.lockstep);
        for (int m = r; m < hi; ++m) finish(m, now);
        start_group(r / c_.lockstep, now);
        continue;
      }
      if (epoch != at(r).epoch) continue;  // lost in an outage
      finish(r, now);
      start(r, now);
    }
  }
  result_.end_s = now;
  lifecycle_.end(now);
  result_.replica_s = lifecycle_.replica_s();
  result_.peak_replicas = lifecycle_.peak_replicas();
  result_.windows = lifecycle_.windows();
  for (std::size_t i = 0; i < seqs_.size(); ++i) {
    result_.requests[i].preemptions = seqs_[i].preemptions;
    result_.requests[i].cached_tokens = seqs_[i].cached_tokens;
  }
  handoff_.report(result_.requests);
  return std::move(result_);
}

int ServingEngine::route(int req) {
  choices_.clear();
  for (int r = 0; r < front_; ++r) {
    if (!lifecycle_.ready(r)) continue;
    const ReplicaScheduler& s = at(r).scheduler;
    choices_.push_back({r, s.running(), s.waiting(), &s.kv().prefix_cache()});
  }
  // None ready: replica 0 takes it unless it is in an outage (with the autoscaler it may be loading,
  // or switched off); else it waits for a replica.
  if (choices_.empty()) return lifecycle_.failed(0) ? -1 : 0;
  const std::size_t i = router_->pick(reqs_[static_cast<std::size_t>(req)], choices_);
  if (i >= choices_.size())
    throw std::logic_error("serving: routing '" + c_.routing + "' picked no candidate");
  return choices_[i].replica;
}

std::span<const RouteCandidate> ServingEngine::decoders() {
  choices_.clear();
  if (prefill_ == 0) return {};
  for (int d = prefill_; d < count(); ++d) {
    if (!lifecycle_.ready(d)) continue;
    const ReplicaScheduler& s = at(d).scheduler;
    choices_.push_back({d, s.running(), s.waiting(), &s.kv().prefix_cache()});
  }
  return choices_;
}

void ServingEngine::send(int req, double now) {
  const int r = route(req);
  if (r < 0) {
    orphans_.push_back(req);
    return;
  }
  arrive(req, r);
  if (!at(r).busy) start(r, now);
}

void ServingEngine::send_all(const std::vector<int>& ids, double now) {
  std::vector<int> woken;
  for (int id : ids) {
    const int r = route(id);
    if (r < 0) {
      orphans_.push_back(id);
      continue;
    }
    arrive(id, r);
    if (std::find(woken.begin(), woken.end(), r) == woken.end()) woken.push_back(r);
  }
  for (int r : woken)
    if (!at(r).busy) start(r, now);
}

void ServingEngine::arrive(int req, int r) {
  result_.requests[static_cast<std::size_t>(req)].replica = r;
  const Sequence& s = seqs_[static_cast<std::size_t>(req)];
  ReplicaScheduler& sched = at(r).scheduler;
  // Can never fit (prepare_service counts these and the run warns): rejected, never ends.
  if (sched.kv().blocks_for(static_cast<long long>(s.prompt) + s.out) > sched.kv().total_blocks()) return;
  sched.add(req);
}

void ServingEngine::resend_orphans(double now) {
  if (handoff_.parked()) handoff_.dispatch_parked(now, decoders());
  if (orphans_.empty()) return;
  std::vector<int> waiting;
  waiting.swap(orphans_);
  send_all(waiting, now);
}

void ServingEngine::sample(int r, double now) {
  Replica& rep = at(r);
  if (now + 1e-12 < rep.next_sample) return;
  result_.samples.push_back(
      {now, r, rep.scheduler.running(), rep.scheduler.waiting(), rep.scheduler.kv().used()});
  rep.next_sample = (std::floor(now / c_.sample_every_s) + 1) * c_.sample_every_s;
}

bool ServingEngine::schedule(int r, double now) {
  sample(r, now);
  return at(r).scheduler.schedule();
}

double ServingEngine::speed_factor(int r, double now) const {
  if (static_cast<std::size_t>(r) >= c_.replica_speed_changes.size()) return 1.0;
  const auto& changes = c_.replica_speed_changes[static_cast<std::size_t>(r)];
  const auto it =
      std::upper_bound(changes.begin(), changes.end(), now,
                       [](double t, const ServingEngineConfig::SpeedChange& c) { return t < c.t_s; });
  return it == changes.begin() ? 1.0 : std::prev(it)->factor;
}

double ServingEngine::step_time(int r, double now) const {
  const double speed =
      (c_.replica_speed.empty() ? 1.0
                                : c_.replica_speed[static_cast<std::size_t>(r) % c_.replica_speed.size()]) *
      speed_factor(r, now);
  return model_.step_s(shape_) / speed + c_.step_overhead_s;
}

void ServingEngine::start(int r, double now) {
  if (c_.lockstep > 1) {
    start_group(r / c_.lockstep, now);
    return;
  }
  if (!schedule(r, now)) return;
  Replica& rep = at(r);
  rep.scheduler.describe(shape_);
  const double d = step_time(r, now);
  rep.busy = true;
  ++result_.steps;
  result_.busy_s += d;
  steps_.push({now + d, r, rep.epoch});
}

void ServingEngine::start_group(int g, double now) {
  const int lo = g * c_.lockstep;
  const int hi = std::min(count(), lo + c_.lockstep);
  for (int m = lo; m < hi; ++m)
    if (at(m).busy) return;  // its step is still running
  bool any = false;
  int tokens = 0, most = 0;  // the group's new tokens, and the most of one rank (vLLM pads to it)
  for (int m = lo; m < hi; ++m) {
    if (!schedule(m, now)) continue;
    any = true;
    const int own = at(m).scheduler.scheduled_tokens();
    tokens += own;
    most = std::max(most, own);
  }
  if (!any) return;
  double d = 0;
  for (int m = lo; m < hi; ++m) {
    if (at(m).scheduler.scheduled().empty()) continue;  // a dummy step
    at(m).scheduler.describe(shape_);
    shape_.group_tokens = tokens;
    shape_.group_max_tokens = most;
    d = std::max(d, step_time(m, now));
    ++result_.steps;
  }
  for (int m = lo; m < hi; ++m) at(m).busy = true;
  result_.busy_s += d * (hi - lo);
  steps_.push({now + d, lo, kGroupStep});
}

void ServingEngine::finish(int r, double now) {
  Replica& rep = at(r);
  const StepOutput& out = rep.scheduler.finish();
  for (int id : out.first_token) result_.requests[static_cast<std::size_t>(id)].first_token_s = now;
  for (int id : out.finished) result_.requests[static_cast<std::size_t>(id)].end_s = now;
  if (!out.prefilled.empty()) {
    const auto to = decoders();
    for (int id : out.prefilled) handoff_.hand_off(id, r, now, to);
  }
  rep.busy = false;
}

void ServingEngine::go_down(int k, double now) {
  const int r = c_.outages[static_cast<std::size_t>(k)].replica;
  if (!lifecycle_.go_down(r, now)) return;
  Replica& rep = at(r);
  ++rep.epoch;
  rep.busy = false;
  std::vector<int> moved = rep.scheduler.evict();
  handoff_.drop(r, now, decoders(), moved);  // disaggregated: KV in flight from it lost, to it sent elsewhere
  result_.rerouted[static_cast<std::size_t>(k)] += static_cast<long>(moved.size());
  send_all(moved, now);
}

void ServingEngine::come_back(int k, double now) {
  const int r = c_.outages[static_cast<std::size_t>(k)].replica;
  const ReplicaLifecycle::Return back = lifecycle_.come_back(r, now);
  if (back == ReplicaLifecycle::Return::kNotDown) return;
  resend_orphans(now);
  if (back == ReplicaLifecycle::Return::kServes && !at(r).busy) start(r, now);
}

void ServingEngine::decide(double now) {
  std::vector<ReplicaActivity> activity(replicas_.size());
  for (int r = 0; r < count(); ++r) {
    const Replica& rep = at(r);
    activity[static_cast<std::size_t>(r)] = {static_cast<std::size_t>(rep.scheduler.waiting()),
                                             !rep.busy && rep.scheduler.empty() && !handoff_.busy(r)};
  }
  lifecycle_.decide(now, activity, !orphans_.empty(), handoff_.parked());
}

void ServingEngine::land(double now) {
  const KvHandoff::Landing l = handoff_.land();
  if (l.id < 0) return;  // cancelled by an outage
  Replica& from = at(l.from);
  from.scheduler.kv().free(l.blocks);
  if (!from.busy && !lifecycle_.failed(l.from)) start(l.from, now);
  Replica& to = at(l.to);
  to.scheduler.add(l.id);
  if (!to.busy) start(l.to, now);
}

}  // namespace
}  // namespace fleetsim::serving_detail

namespace fleetsim {

ServingResult simulate_serving(const std::vector<ServingRequest>& requests, const ServingStepModel& model,
                               const ServingEngineConfig& config) {
  return serving_detail::ServingEngine(requests, model, config).run();
}

}  // namespace fleetsim
