#include "sim/serving/serving_engine.hpp"

#include "sim/serving/prefix_cache.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>
#include <tuple>
#include <utility>

namespace fleetsim {
namespace {

struct Seq {
  int prompt = 0;
  int out = 0;
  int computed = 0;   ///< tokens whose KV is computed
  int generated = 0;  ///< output tokens sampled
  long blocks = 0;    ///< KV blocks held
  bool admitted_once = false;
  int xfer_from = -1;    ///< disaggregated: the prefill replica its KV is leaving
  long xfer_blocks = 0;  ///< blocks that replica holds until the transfer ends
  long xfer_epoch = 0;   ///< that replica's epoch when the transfer began
};

enum class Power { kOff, kLoading, kReady };

struct Replica {
  Power power = Power::kReady;
  double ready_at = 0;  ///< kLoading: when it starts serving
  double on_since = 0;  ///< when it was switched on
  std::deque<int> waiting;
  std::vector<int> running;  ///< admission order (the last is preempted first)
  long free_blocks = 0;
  bool busy = false;
  std::vector<std::pair<int, int>> scheduled;  ///< (request, tokens) of the step in flight
  double next_sample = 0;
  PrefixCache cache{0};
  int incoming = 0;     ///< disaggregated decode replica: KV transfers on their way to it
  bool failed = false;  ///< in an outage (failover)
  long epoch = 0;       ///< bumped by each outage: its step in flight no longer counts
};

/// A step in flight: (end, replica, the replica's epoch when it began).
using StepEvent = std::tuple<double, int, long>;
/// An outage's start (down) or end, in time order.
struct OutageEvent {
  double t = 0;
  bool down = true;
  int outage = 0;
};

class Engine {
 public:
  Engine(const std::vector<ServingRequest>& reqs, const ServingStepModel& model, const ServingEngineConfig& c)
      : reqs_(reqs),
        model_(model),
        c_(c),
        seqs_(reqs.size()),
        replicas_(static_cast<std::size_t>(std::max(1, c.replicas))) {
    const int hash_tokens = c_.hash_block_tokens > 0 ? c_.hash_block_tokens : c_.block_size;
    cache_entries_ = static_cast<std::size_t>(static_cast<double>(c_.kv_blocks) * c_.block_size /
                                              std::max(1, hash_tokens));
    for (auto& r : replicas_) {
      r.free_blocks = c_.kv_blocks;
      r.cache = PrefixCache(c_.prefix_caching ? cache_entries_ : 0);
    }
    const int n = static_cast<int>(replicas_.size());
    prefill_ = c_.prefill_replicas > 0 && c_.prefill_replicas < n ? c_.prefill_replicas : 0;
    front_ = prefill_ > 0 ? prefill_ : n;
    autoscale_ = prefill_ == 0 && c_.min_replicas > 0 && c_.min_replicas < n;
    if (autoscale_)
      for (std::size_t r = static_cast<std::size_t>(c_.min_replicas); r < replicas_.size(); ++r)
        replicas_[r].power = Power::kOff;
    result_.requests.resize(reqs.size());
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      seqs_[i].prompt = std::max(1, reqs[i].input_tokens);
      seqs_[i].out = std::max(1, reqs[i].output_tokens);
      result_.requests[i].arrival_s = reqs[i].arrival_s;
    }
    result_.rerouted.assign(c_.outages.size(), 0);
    for (std::size_t k = 0; k < c_.outages.size(); ++k) {
      out_events_.push_back({c_.outages[k].down_s, true, static_cast<int>(k)});
      if (std::isfinite(c_.outages[k].up_s))
        out_events_.push_back({c_.outages[k].up_s, false, static_cast<int>(k)});
    }
    std::stable_sort(out_events_.begin(), out_events_.end(),
                     [](const OutageEvent& a, const OutageEvent& b) { return a.t < b.t; });
  }

  ServingResult run() {
    std::priority_queue<StepEvent, std::vector<StepEvent>, std::greater<>> steps;
    std::size_t next = 0;
    double now = 0;
    double next_eval = autoscale_ ? c_.scale_interval_s : INFINITY;
    while (true) {
      const double t_arr = next < reqs_.size() ? reqs_[next].arrival_s : INFINITY;
      const double t_step = steps.empty() ? INFINITY : std::get<0>(steps.top());
      const double t_xfer = xfers_.empty() ? INFINITY : xfers_.top().first;
      const double t_out = next_out_ < out_events_.size() ? out_events_[next_out_].t : INFINITY;
      if (!std::isfinite(t_arr) && !std::isfinite(t_step) && !std::isfinite(t_xfer) &&
          (orphans_.empty() || !std::isfinite(t_out)))
        break;
      const double t_scale = std::min(next_eval, next_ready());
      if (t_out <= t_arr && t_out <= t_step && t_out <= t_xfer && t_out <= t_scale) {
        now = t_out;
        const OutageEvent e = out_events_[next_out_++];
        if (e.down)
          go_down(e.outage, now, steps);
        else
          come_back(e.outage, now, steps);
        continue;
      }
      if (t_xfer <= t_arr && t_xfer <= t_step && t_xfer <= t_scale) {
        now = t_xfer;
        const int id = xfers_.top().second;
        xfers_.pop();
        land(id, now, steps);
        continue;
      }
      if (t_scale < t_arr && t_scale < t_step) {
        now = t_scale;
        for (auto& rep : replicas_)
          if (rep.power == Power::kLoading && rep.ready_at <= now) rep.power = Power::kReady;
        resend_orphans(now, steps);
        if (now >= next_eval) {
          scale(now);
          next_eval = now + c_.scale_interval_s;
        }
        continue;
      }
      if (t_arr <= t_step) {
        now = t_arr;
        send(static_cast<int>(next), now, steps);
        ++next;
      } else {
        const auto [t, r, epoch] = steps.top();
        steps.pop();
        now = t;
        if (epoch != replicas_[static_cast<std::size_t>(r)].epoch) continue;  // lost in an outage
        finish(r, now);
        start(r, now, steps);
      }
    }
    result_.end_s = now;
    for (const auto& rep : replicas_)
      if (rep.power != Power::kOff) result_.replica_s += now - rep.on_since;
    result_.peak_replicas = std::max(result_.peak_replicas, on_count());
    return std::move(result_);
  }

 private:
  long blocks_for(int tokens) const { return (tokens + c_.block_size - 1) / c_.block_size; }

  double next_ready() const {
    double t = INFINITY;
    for (const auto& rep : replicas_)
      if (rep.power == Power::kLoading) t = std::min(t, rep.ready_at);
    return t;
  }

  int on_count() const {
    int n = 0;
    for (const auto& rep : replicas_) n += rep.power != Power::kOff ? 1 : 0;
    return n;
  }

  /// The autoscaler's decision at `now` (see ServingEngineConfig).
  void scale(double now) {
    int ready = 0, loading = 0;
    std::size_t waiting = 0;
    for (const auto& rep : replicas_) {
      ready += rep.power == Power::kReady ? 1 : 0;
      loading += rep.power == Power::kLoading ? 1 : 0;
      if (rep.power == Power::kReady) waiting += rep.waiting.size();
    }
    if (static_cast<double>(waiting) > c_.scale_up_queue * std::max(ready, 1) && loading == 0) {
      for (auto& rep : replicas_)
        if (rep.power == Power::kOff && !rep.failed) {
          rep.power = Power::kLoading;
          rep.ready_at = now + c_.model_load_s;
          rep.on_since = now;
          result_.peak_replicas = std::max(result_.peak_replicas, on_count());
          return;
        }
      return;
    }
    if (waiting > 0 || ready <= c_.min_replicas) return;
    for (std::size_t r = replicas_.size(); r-- > 0;) {
      Replica& rep = replicas_[r];
      if (rep.power == Power::kReady && !rep.busy && rep.running.empty() && rep.waiting.empty()) {
        rep.power = Power::kOff;
        result_.replica_s += now - rep.on_since;
        return;
      }
    }
  }

  /// Routing among the ready replicas only (with the autoscaler): round-robin cycles over them;
  /// least-outstanding and prefix-aware choose among them as usual.
  int route_ready(int req) {
    std::vector<int> ready;
    for (int r = 0; r < static_cast<int>(replicas_.size()); ++r)
      if (replicas_[static_cast<std::size_t>(r)].power == Power::kReady) ready.push_back(r);
    if (ready.empty()) return replicas_[0].failed ? -1 : 0;
    auto outstanding = [&](int r) {
      const Replica& x = replicas_[static_cast<std::size_t>(r)];
      return x.running.size() + x.waiting.size();
    };
    if (c_.routing == Routing::kRoundRobin) return ready[static_cast<std::size_t>(rr_++) % ready.size()];
    int best = ready.front();
    std::size_t best_hit = 0;
    for (int r : ready) {
      const std::size_t hit = c_.routing == Routing::kPrefixAware
                                  ? replicas_[static_cast<std::size_t>(r)].cache.peek(
                                        reqs_[static_cast<std::size_t>(req)].block_hashes)
                                  : 0;
      if (hit > best_hit || (hit == best_hit && outstanding(r) < outstanding(best))) {
        best = r;
        best_hit = hit;
      }
    }
    return best;
  }

  int route(int req) {
    if (autoscale_) return route_ready(req);
    const int n = front_;
    auto up = [&](int r) { return !replicas_[static_cast<std::size_t>(r)].failed; };
    if (n == 1) return up(0) ? 0 : -1;
    auto outstanding = [&](int r) {
      const Replica& x = replicas_[static_cast<std::size_t>(r)];
      return x.running.size() + x.waiting.size();
    };
    switch (c_.routing) {
      case Routing::kRoundRobin:
        for (int k = 0; k < n; ++k) {
          const int r = rr_++ % n;
          if (up(r)) return r;
        }
        return -1;
      case Routing::kLeastOutstanding: {
        int best = -1;
        for (int r = 0; r < n; ++r)
          if (up(r) && (best < 0 || outstanding(r) < outstanding(best))) best = r;
        return best;
      }
      case Routing::kPrefixAware: {
        int best = -1;
        std::size_t best_hit = 0;
        for (int r = 0; r < n; ++r) {
          if (!up(r)) continue;
          const std::size_t hit = replicas_[static_cast<std::size_t>(r)].cache.peek(
              reqs_[static_cast<std::size_t>(req)].block_hashes);
          if (best < 0 || hit > best_hit || (hit == best_hit && outstanding(r) < outstanding(best))) {
            best = r;
            best_hit = hit;
          }
        }
        return best;
      }
    }
    return 0;
  }

  /// Routes request `req` now and wakes its replica; with every replica down it waits (orphans_).
  template <typename Queue>
  void send(int req, double now, Queue& steps) {
    const int r = route(req);
    if (r < 0) {
      orphans_.push_back(req);
      return;
    }
    arrive(req, r);
    if (!replicas_[static_cast<std::size_t>(r)].busy) start(r, now, steps);
  }

  /// Routes `ids` in order, then wakes the replicas that got them (one step can take them all).
  template <typename Queue>
  void send_all(const std::vector<int>& ids, double now, Queue& steps) {
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
      if (!replicas_[static_cast<std::size_t>(r)].busy) start(r, now, steps);
  }

  template <typename Queue>
  void resend_orphans(double now, Queue& steps) {
    if (orphans_.empty()) return;
    std::vector<int> waiting;
    waiting.swap(orphans_);
    send_all(waiting, now, steps);
  }

  /// Outage k begins: the replica's step in flight is lost, its requests lose their KV and are routed
  /// again (in admission order, then queue order) to the replicas still up.
  template <typename Queue>
  void go_down(int k, double now, Queue& steps) {
    const int r = c_.outages[static_cast<std::size_t>(k)].replica;
    if (r < 0 || r >= static_cast<int>(replicas_.size())) return;
    Replica& rep = replicas_[static_cast<std::size_t>(r)];
    if (rep.failed) return;
    if (rep.power != Power::kOff) result_.replica_s += now - rep.on_since;
    rep.failed = true;
    rep.power = Power::kOff;
    ++rep.epoch;
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
    result_.rerouted[static_cast<std::size_t>(k)] += static_cast<long>(moved.size());
    send_all(moved, now, steps);
  }

  /// Outage k ends: the replica serves again (its model loaded), and requests waiting for a replica go.
  template <typename Queue>
  void come_back(int k, double now, Queue& steps) {
    const int r = c_.outages[static_cast<std::size_t>(k)].replica;
    if (r < 0 || r >= static_cast<int>(replicas_.size())) return;
    Replica& rep = replicas_[static_cast<std::size_t>(r)];
    if (!rep.failed) return;
    rep.failed = false;
    rep.power = Power::kReady;
    rep.on_since = now;
    result_.peak_replicas = std::max(result_.peak_replicas, on_count());
    resend_orphans(now, steps);
    if (!rep.busy) start(r, now, steps);
  }

  void arrive(int req, int r) {
    RequestOutcome& o = result_.requests[static_cast<std::size_t>(req)];
    o.replica = r;
    const Seq& s = seqs_[static_cast<std::size_t>(req)];
    if (blocks_for(s.prompt + s.out) > c_.kv_blocks) return;  // can never fit: rejected, never ends
    replicas_[static_cast<std::size_t>(r)].waiting.push_back(req);
  }

  void preempt(Replica& rep, int victim) {
    Seq& v = seqs_[static_cast<std::size_t>(victim)];
    rep.free_blocks += v.blocks;
    v.blocks = 0;
    v.computed = 0;
    ++result_.requests[static_cast<std::size_t>(victim)].preemptions;
    rep.running.pop_back();
    rep.waiting.push_front(victim);
  }

  void sample(Replica& rep, int r, double now) {
    if (now + 1e-12 < rep.next_sample) return;
    result_.samples.push_back(
        {now, r, static_cast<int>(rep.running.size()), static_cast<int>(rep.waiting.size()),
         c_.kv_blocks > 0 ? 1.0 - static_cast<double>(rep.free_blocks) / c_.kv_blocks : 0});
    rep.next_sample = (std::floor(now / c_.sample_every_s) + 1) * c_.sample_every_s;
  }

  template <typename Queue>
  void start(int r, double now, Queue& steps) {
    Replica& rep = replicas_[static_cast<std::size_t>(r)];
    rep.busy = false;
    rep.scheduled.clear();
    sample(rep, r, now);
    int budget = c_.max_num_batched_tokens;
    bool preempted = false;
    // Running requests first, in admission order.
    for (std::size_t i = 0; i < rep.running.size() && budget > 0;) {
      const int id = rep.running[i];
      Seq& s = seqs_[static_cast<std::size_t>(id)];
      const int n = std::min(s.prompt + s.generated - s.computed, budget);
      const long need = blocks_for(s.computed + n) - s.blocks;
      bool self_preempted = false;
      while (need > rep.free_blocks) {
        const int victim = rep.running.back();
        preempt(rep, victim);
        preempted = true;
        if (victim == id) {
          self_preempted = true;
          break;
        }
      }
      if (self_preempted) break;
      rep.free_blocks -= need;
      s.blocks += need;
      rep.scheduled.emplace_back(id, n);
      budget -= n;
      ++i;
    }
    // Then waiting requests, first come first served, unless this step preempted.
    while (!preempted && budget > 0 && !rep.waiting.empty() &&
           static_cast<int>(rep.running.size()) < c_.max_num_seqs) {
      const int id = rep.waiting.front();
      Seq& s = seqs_[static_cast<std::size_t>(id)];
      int cached = 0;
      if (c_.prefix_caching && s.computed == 0 && s.generated == 0) {
        const int hash_tokens = c_.hash_block_tokens > 0 ? c_.hash_block_tokens : c_.block_size;
        const auto hits = rep.cache.match(reqs_[static_cast<std::size_t>(id)].block_hashes);
        cached = std::min(static_cast<int>(hits) * hash_tokens, s.prompt - 1);
      }
      const int n = std::min(s.prompt + s.generated - s.computed - cached, budget);
      const long need = blocks_for(s.computed + cached + n) - s.blocks;
      if (need > rep.free_blocks) break;
      rep.waiting.pop_front();
      s.computed += cached;
      result_.requests[static_cast<std::size_t>(id)].cached_tokens += cached;
      rep.free_blocks -= need;
      s.blocks += need;
      rep.running.push_back(id);
      rep.scheduled.emplace_back(id, n);
      budget -= n;
    }
    if (rep.scheduled.empty()) return;
    BatchShape& shape = shape_;  // reused: no allocation per step
    shape.prefills.clear();
    shape.decode_kv.clear();
    for (const auto& [id, n] : rep.scheduled) {
      const Seq& s = seqs_[static_cast<std::size_t>(id)];
      if (s.generated > 0 && n == 1 && s.computed == s.prompt + s.generated - 1)
        shape.decode_kv.push_back(s.computed);
      else
        shape.prefills.push_back({n, s.computed});
    }
    const double speed = c_.replica_speed.empty()
                             ? 1.0
                             : c_.replica_speed[static_cast<std::size_t>(r) % c_.replica_speed.size()];
    const double d = model_.step_s(shape) / speed + c_.step_overhead_s;
    rep.busy = true;
    ++result_.steps;
    result_.busy_s += d;
    steps.push({now + d, r, rep.epoch});
  }

  void finish(int r, double now) {
    Replica& rep = replicas_[static_cast<std::size_t>(r)];
    std::vector<int>& done = done_;
    done.clear();
    std::vector<int>& leaving = leaving_;
    leaving.clear();
    for (const auto& [id, n] : rep.scheduled) {
      Seq& s = seqs_[static_cast<std::size_t>(id)];
      s.computed += n;
      if (s.computed < s.prompt + s.generated) continue;
      ++s.generated;
      RequestOutcome& o = result_.requests[static_cast<std::size_t>(id)];
      if (s.generated == 1) {
        o.first_token_s = now;
        if (c_.prefix_caching) rep.cache.insert(reqs_[static_cast<std::size_t>(id)].block_hashes);
      }
      if (s.generated >= s.out) {
        o.end_s = now;
        done.push_back(id);
      } else if (r < prefill_) {
        leaving.push_back(id);
      }
    }
    for (int id : leaving) hand_off(rep, r, id, now);
    for (int id : done) {
      Seq& s = seqs_[static_cast<std::size_t>(id)];
      rep.free_blocks += s.blocks;
      s.blocks = 0;
      rep.running.erase(std::find(rep.running.begin(), rep.running.end(), id));
    }
    rep.scheduled.clear();
    rep.busy = false;
  }

  const KvLink& link(int p, int d) const {
    if (c_.kv_links.empty()) return c_.kv_link;
    const std::size_t decode = replicas_.size() - static_cast<std::size_t>(prefill_);
    return c_.kv_links[static_cast<std::size_t>(p) * decode + static_cast<std::size_t>(d - prefill_)];
  }

  /// Disaggregated: request `id` has its first token on prefill replica `r`; its KV leaves for the
  /// least outstanding decode replica (ties: the fastest link, then the lowest index).
  void hand_off(Replica& rep, int r, int id, double now) {
    Seq& s = seqs_[static_cast<std::size_t>(id)];
    rep.running.erase(std::find(rep.running.begin(), rep.running.end(), id));
    s.xfer_from = r;
    s.xfer_blocks = s.blocks;
    s.xfer_epoch = rep.epoch;
    s.blocks = 0;
    int best = prefill_;
    auto load = [&](int d) {
      const Replica& x = replicas_[static_cast<std::size_t>(d)];
      return x.running.size() + x.waiting.size() + static_cast<std::size_t>(x.incoming);
    };
    auto failed = [&](int d) { return replicas_[static_cast<std::size_t>(d)].failed; };
    for (int d = prefill_ + 1; d < static_cast<int>(replicas_.size()); ++d)
      if (failed(best) && !failed(d))
        best = d;
      else if (failed(d))
        continue;
      else if (load(d) < load(best) ||
               (load(d) == load(best) && link(r, d).bytes_per_s > link(r, best).bytes_per_s))
        best = d;
    ++replicas_[static_cast<std::size_t>(best)].incoming;
    RequestOutcome& o = result_.requests[static_cast<std::size_t>(id)];
    o.decode_replica = best;
    o.kv_transfer_s = link(r, best).seconds(static_cast<double>(s.computed) * c_.kv_bytes_per_token);
    xfers_.push({now + o.kv_transfer_s, id});
  }

  /// A KV transfer ends: the prefill replica frees the blocks, the decode replica queues the request.
  template <typename Queue>
  void land(int id, double now, Queue& steps) {
    Seq& s = seqs_[static_cast<std::size_t>(id)];
    const int from = s.xfer_from;
    Replica& src = replicas_[static_cast<std::size_t>(from)];
    if (s.xfer_epoch == src.epoch) {  // else an outage already freed the source's blocks
      src.free_blocks += s.xfer_blocks;
      if (!src.busy && !src.failed) start(from, now, steps);
    }
    s.xfer_blocks = 0;
    const int d = result_.requests[static_cast<std::size_t>(id)].decode_replica;
    Replica& to = replicas_[static_cast<std::size_t>(d)];
    --to.incoming;
    if (to.failed) {  // its decode replica went down on the way: KV lost, routed again
      s.computed = 0;
      send(id, now, steps);
      return;
    }
    to.waiting.push_back(id);
    if (!to.busy) start(d, now, steps);
  }

  const std::vector<ServingRequest>& reqs_;
  const ServingStepModel& model_;
  ServingEngineConfig c_;
  std::vector<Seq> seqs_;
  std::vector<Replica> replicas_;
  ServingResult result_;
  BatchShape shape_;
  bool autoscale_ = false;
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
};

}  // namespace

ServingResult simulate_serving(const std::vector<ServingRequest>& requests, const ServingStepModel& model,
                               const ServingEngineConfig& config) {
  return Engine(requests, model, config).run();
}

}  // namespace fleetsim
