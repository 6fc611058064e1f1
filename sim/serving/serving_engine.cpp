#include "sim/serving/serving_engine.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "sim/serving/serving_engine_impl.hpp"

namespace fleetsim::serving_detail {

Engine::Engine(const std::vector<ServingRequest>& reqs, const ServingStepModel& model,
               const ServingEngineConfig& c)
    : reqs_(reqs),
      model_(model),
      c_(c),
      seqs_(reqs.size()),
      replicas_(static_cast<std::size_t>(std::max(1, c.replicas))) {
  const int hash_tokens = c_.hash_block_tokens > 0 ? c_.hash_block_tokens : c_.block_size;
  cache_entries_ =
      static_cast<std::size_t>(static_cast<double>(c_.kv_blocks) * c_.block_size / std::max(1, hash_tokens));
  for (auto& r : replicas_) {
    r.free_blocks = c_.kv_blocks;
    r.cache = PrefixCache(c_.prefix_caching ? cache_entries_ : 0);
  }
  const int n = static_cast<int>(replicas_.size());
  prefill_ = c_.prefill_replicas > 0 && c_.prefill_replicas < n ? c_.prefill_replicas : 0;
  front_ = prefill_ > 0 ? prefill_ : n;
  auto add_group = [&](int lo, int hi, int min) {
    if (min <= 0 || min >= hi - lo) return;
    groups_.push_back({lo, hi, min});
    for (int r = lo + min; r < hi; ++r) replicas_[static_cast<std::size_t>(r)].power = Power::kOff;
  };
  if (prefill_ == 0) {
    add_group(0, n, c_.min_replicas);
  } else {
    add_group(0, prefill_, c_.min_prefill_replicas);
    add_group(prefill_, n, c_.min_decode_replicas);
  }
  autoscale_ = !groups_.empty();
  front_scaled_ = autoscale_ && groups_.front().lo == 0;
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

ServingResult Engine::run() {
  StepQueue steps;
  std::size_t next = 0;
  double now = 0;
  double next_eval = autoscale_ ? c_.scale_interval_s : INFINITY;
  while (true) {
    const double t_arr = next < reqs_.size() ? reqs_[next].arrival_s : INFINITY;
    const double t_step = steps.empty() ? INFINITY : std::get<0>(steps.top());
    const double t_xfer = xfers_.empty() ? INFINITY : xfers_.top().first;
    const double t_out = next_out_ < out_events_.size() ? out_events_[next_out_].t : INFINITY;
    if (!std::isfinite(t_arr) && !std::isfinite(t_step) && !std::isfinite(t_xfer) &&
        !waiting_for_replica(t_out))
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
      if (epoch == kGroupStep) {
        const int hi = std::min(static_cast<int>(replicas_.size()), r + c_.lockstep);
        for (int m = r; m < hi; ++m) finish(m, now);
        start_group(r / c_.lockstep, now, steps);
        continue;
      }
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

double Engine::speed_factor(int r, double now) const {
  if (static_cast<std::size_t>(r) >= c_.replica_speed_changes.size()) return 1.0;
  const auto& changes = c_.replica_speed_changes[static_cast<std::size_t>(r)];
  const auto it =
      std::upper_bound(changes.begin(), changes.end(), now,
                       [](double t, const ServingEngineConfig::SpeedChange& c) { return t < c.t_s; });
  return it == changes.begin() ? 1.0 : std::prev(it)->factor;
}

int Engine::route_ready(int req) {
  std::vector<int> ready;
  for (int r = 0; r < front_; ++r)
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

int Engine::route(int req) {
  if (front_scaled_) return route_ready(req);
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
    case Routing::kVllmDp: {
      auto score = [&](int r) {
        const Replica& x = replicas_[static_cast<std::size_t>(r)];
        return 4 * x.waiting.size() + x.running.size();
      };
      int best = -1;
      for (int r = 0; r < n; ++r)
        if (up(r) && (best < 0 || score(r) < score(best))) best = r;
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

void Engine::send(int req, double now, StepQueue& steps) {
  const int r = route(req);
  if (r < 0) {
    orphans_.push_back(req);
    return;
  }
  arrive(req, r);
  if (!replicas_[static_cast<std::size_t>(r)].busy) start(r, now, steps);
}

void Engine::send_all(const std::vector<int>& ids, double now, StepQueue& steps) {
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

void Engine::arrive(int req, int r) {
  RequestOutcome& o = result_.requests[static_cast<std::size_t>(req)];
  o.replica = r;
  const Seq& s = seqs_[static_cast<std::size_t>(req)];
  // Can never fit (prepare_service counts these and the run warns): rejected, never ends.
  if (blocks_for(static_cast<long long>(s.prompt) + s.out) > c_.kv_blocks) return;
  replicas_[static_cast<std::size_t>(r)].waiting.push_back(req);
}

FreeBlockQueue& Engine::pool(Replica& rep) {
  if (rep.pool_epoch != rep.epoch) {
    rep.pool.reset(rep.free_blocks);
    rep.pool_epoch = rep.epoch;
  }
  return rep.pool;
}

void Engine::allocate(Replica& rep, int id, long n) {
  if (n <= 0) return;
  pool(rep).take(n);
  rep.free_blocks -= n;
  seqs_[static_cast<std::size_t>(id)].blocks += n;
}

void Engine::preempt(Replica& rep, int r, int victim) {
  Seq& v = seqs_[static_cast<std::size_t>(victim)];
  // Its full blocks stay cached in the free queue (prefix caching): found again when re-admitted,
  // unless reused meanwhile.
  const long keep = c_.prefix_caching ? std::min(v.blocks, static_cast<long>(v.computed / c_.block_size)) : 0;
  v.cache_ticket = pool(rep).release(v.blocks - keep, keep);
  v.cache_replica = r;
  v.cache_epoch = rep.epoch;
  rep.free_blocks += v.blocks;
  v.blocks = 0;
  v.computed = 0;
  ++result_.requests[static_cast<std::size_t>(victim)].preemptions;
  rep.running.pop_back();
  rep.waiting.push_front(victim);
}

void Engine::sample(Replica& rep, int r, double now) {
  if (now + 1e-12 < rep.next_sample) return;
  result_.samples.push_back(
      {now, r, static_cast<int>(rep.running.size()), static_cast<int>(rep.waiting.size()),
       c_.kv_blocks > 0 ? 1.0 - static_cast<double>(rep.free_blocks) / c_.kv_blocks : 0});
  rep.next_sample = (std::floor(now / c_.sample_every_s) + 1) * c_.sample_every_s;
}

bool Engine::admit(Replica& rep, int r, int id, int& budget) {
  Seq& s = seqs_[static_cast<std::size_t>(id)];
  const int tokens = s.prompt + s.generated;
  // The whole known sequence must fit the free blocks (a request's own cached blocks among them).
  if (blocks_for(tokens) - s.blocks > rep.free_blocks) return false;
  long own = 0;  // its leading blocks still cached since its preemption here
  int cached = 0;
  if (c_.prefix_caching && s.computed == 0) {
    if (s.cache_ticket >= 0 && s.cache_replica == r && s.cache_epoch == rep.epoch)
      own = std::min(pool(rep).cached(s.cache_ticket), static_cast<long>((tokens - 1) / c_.block_size));
    cached = static_cast<int>(own) * c_.block_size;
    if (s.generated == 0) {
      const int hash_tokens = c_.hash_block_tokens > 0 ? c_.hash_block_tokens : c_.block_size;
      const auto hits = rep.cache.match(reqs_[static_cast<std::size_t>(id)].block_hashes);
      cached = std::max(cached, std::min(static_cast<int>(hits) * hash_tokens, s.prompt - 1));
    }
  }
  if (s.cache_ticket >= 0 && s.cache_replica == r && s.cache_epoch == rep.epoch) {
    pool(rep).claim(s.cache_ticket, own);
    rep.free_blocks -= own;
    s.blocks += own;
  }
  s.cache_ticket = -1;
  const int n = std::min(tokens - s.computed - cached, budget);
  s.computed += cached;
  result_.requests[static_cast<std::size_t>(id)].cached_tokens += cached;
  allocate(rep, id, blocks_for(s.computed + n) - s.blocks);
  rep.running.push_back(id);
  rep.scheduled.emplace_back(id, n);
  budget -= n;
  return true;
}

bool Engine::schedule(int r, double now) {
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
      preempt(rep, r, victim);
      preempted = true;
      if (victim == id) {
        self_preempted = true;
        break;
      }
    }
    if (self_preempted) break;
    allocate(rep, id, need);
    rep.scheduled.emplace_back(id, n);
    budget -= n;
    ++i;
  }
  // Then waiting requests, first come first served, unless this step preempted.
  while (!preempted && budget > 0 && !rep.waiting.empty() &&
         static_cast<int>(rep.running.size()) < c_.max_num_seqs) {
    if (!admit(rep, r, rep.waiting.front(), budget)) break;
    rep.waiting.pop_front();
  }
  return !rep.scheduled.empty();
}

void Engine::fill_shape(int r) {
  BatchShape& shape = shape_;  // reused: no allocation per step
  shape.prefills.clear();
  shape.decode_kv.clear();
  shape.group_tokens = 0;
  for (const auto& [id, n] : replicas_[static_cast<std::size_t>(r)].scheduled) {
    const Seq& s = seqs_[static_cast<std::size_t>(id)];
    if (s.generated > 0 && n == 1 && s.computed == s.prompt + s.generated - 1)
      shape.decode_kv.push_back(s.computed);
    else
      shape.prefills.push_back({n, s.computed});
  }
}

double Engine::step_time(int r, double now) const {
  const double speed =
      (c_.replica_speed.empty() ? 1.0
                                : c_.replica_speed[static_cast<std::size_t>(r) % c_.replica_speed.size()]) *
      speed_factor(r, now);
  return model_.step_s(shape_) / speed + c_.step_overhead_s;
}

void Engine::start(int r, double now, StepQueue& steps) {
  if (c_.lockstep > 1) {
    start_group(r / c_.lockstep, now, steps);
    return;
  }
  if (!schedule(r, now)) return;
  fill_shape(r);
  const double d = step_time(r, now);
  replicas_[static_cast<std::size_t>(r)].busy = true;
  ++result_.steps;
  result_.busy_s += d;
  steps.push({now + d, r, replicas_[static_cast<std::size_t>(r)].epoch});
}

void Engine::start_group(int g, double now, StepQueue& steps) {
  const int lo = g * c_.lockstep;
  const int hi = std::min(static_cast<int>(replicas_.size()), lo + c_.lockstep);
  for (int m = lo; m < hi; ++m)
    if (replicas_[static_cast<std::size_t>(m)].busy) return;  // its step is still running
  bool any = false;
  int tokens = 0;
  for (int m = lo; m < hi; ++m) {
    if (!schedule(m, now)) continue;
    any = true;
    for (const auto& sched : replicas_[static_cast<std::size_t>(m)].scheduled) tokens += sched.second;
  }
  if (!any) return;
  double d = 0;
  for (int m = lo; m < hi; ++m) {
    if (replicas_[static_cast<std::size_t>(m)].scheduled.empty()) continue;  // a dummy step
    fill_shape(m);
    shape_.group_tokens = tokens;
    d = std::max(d, step_time(m, now));
    ++result_.steps;
  }
  for (int m = lo; m < hi; ++m) replicas_[static_cast<std::size_t>(m)].busy = true;
  result_.busy_s += d * (hi - lo);
  steps.push({now + d, lo, kGroupStep});
}

void Engine::finish(int r, double now) {
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
    pool(rep).release(s.blocks, 0);
    rep.free_blocks += s.blocks;
    s.blocks = 0;
    rep.running.erase(std::find(rep.running.begin(), rep.running.end(), id));
  }
  rep.scheduled.clear();
  rep.busy = false;
}

}  // namespace fleetsim::serving_detail

namespace fleetsim {

ServingResult simulate_serving(const std::vector<ServingRequest>& requests, const ServingStepModel& model,
                               const ServingEngineConfig& config) {
  return serving_detail::Engine(requests, model, config).run();
}

}  // namespace fleetsim
