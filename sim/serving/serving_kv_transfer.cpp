// The serving engine's disaggregated KV hand-off: a prefill replica's KV leaves for a decode replica.
// Failover: KV in flight to a decode replica that goes down leaves again from its prefill replica
// (which still holds it) for another decode replica; KV whose prefill replica goes down (in flight
// or waiting) is lost, and its request is prefilled again. With no decode replica ready, KV waits on
// its prefill replica (blocks held) until one is.
#include <algorithm>
#include <cmath>

#include "sim/serving/serving_engine_impl.hpp"

namespace fleetsim::serving_detail {

const KvLink& Engine::link(int p, int d, double now) const {
  const std::vector<KvLink>* links = &c_.kv_links;
  for (const auto& change : c_.kv_link_changes) {
    if (change.t_s > now) break;
    links = &change.links;
  }
  if (links->empty()) return c_.kv_link;
  const std::size_t decode = replicas_.size() - static_cast<std::size_t>(prefill_);
  return (*links)[static_cast<std::size_t>(p) * decode + static_cast<std::size_t>(d - prefill_)];
}

int Engine::pick_decode(int p, double now) const {
  int best = -1;
  auto load = [&](int d) {
    const Replica& x = replicas_[static_cast<std::size_t>(d)];
    return x.running.size() + x.waiting.size() + static_cast<std::size_t>(x.incoming);
  };
  for (int d = prefill_; d < static_cast<int>(replicas_.size()); ++d) {
    const Replica& x = replicas_[static_cast<std::size_t>(d)];
    if (x.failed || x.power != Power::kReady) continue;
    if (best < 0 || load(d) < load(best) ||
        (load(d) == load(best) && link(p, d, now).bytes_per_s > link(p, best, now).bytes_per_s))
      best = d;
  }
  return best;
}

void Engine::hand_off(Replica& rep, int r, int id, double now) {
  Seq& s = seqs_[static_cast<std::size_t>(id)];
  rep.running.erase(std::find(rep.running.begin(), rep.running.end(), id));
  s.xfer_from = r;
  s.xfer_blocks = s.blocks;
  s.blocks = 0;
  ++rep.outgoing;
  send_or_park(id, now);
}

void Engine::send_or_park(int id, double now) {
  Seq& s = seqs_[static_cast<std::size_t>(id)];
  const int d = pick_decode(s.xfer_from, now);
  if (d < 0) {  // no decode replica ready (outages, or the autoscaler has none on): the KV waits
    s.parked = true;
    parked_.push_back(id);
    return;
  }
  send_kv(id, d, now);
}

void Engine::send_kv(int id, int d, double now) {
  Seq& s = seqs_[static_cast<std::size_t>(id)];
  ++replicas_[static_cast<std::size_t>(d)].incoming;
  RequestOutcome& o = result_.requests[static_cast<std::size_t>(id)];
  o.decode_replica = d;
  o.kv_transfer_s =
      link(s.xfer_from, d, now).seconds(static_cast<double>(s.computed) * c_.kv_bytes_per_token);
  s.xfer_end = now + o.kv_transfer_s;
  xfers_.push({s.xfer_end, id});
}

void Engine::dispatch_parked(double now) {
  std::size_t sent = 0;
  for (; sent < parked_.size(); ++sent) {
    const int id = parked_[sent];
    Seq& s = seqs_[static_cast<std::size_t>(id)];
    const int d = pick_decode(s.xfer_from, now);
    if (d < 0) break;
    s.parked = false;
    send_kv(id, d, now);
  }
  parked_.erase(parked_.begin(), parked_.begin() + static_cast<long>(sent));
}

void Engine::cancel_transfer(int id) {
  const Seq& s = seqs_[static_cast<std::size_t>(id)];
  RequestOutcome& o = result_.requests[static_cast<std::size_t>(id)];
  cancelled_.emplace_back(s.xfer_end, id);
  --replicas_[static_cast<std::size_t>(o.decode_replica)].incoming;
  o.decode_replica = -1;
  o.kv_transfer_s = 0;
}

void Engine::drop_transfers(int r, double now, std::vector<int>& lost) {
  if (prefill_ == 0) return;
  std::vector<int> again;
  for (int id = 0; id < static_cast<int>(seqs_.size()); ++id) {
    Seq& s = seqs_[static_cast<std::size_t>(id)];
    if (s.xfer_from < 0) continue;
    if (s.xfer_from == r) {  // its KV was on r: lost
      if (s.parked)
        parked_.erase(std::find(parked_.begin(), parked_.end(), id));
      else
        cancel_transfer(id);
      s.parked = false;
      s.xfer_from = -1;
      s.xfer_blocks = 0;
      s.blocks = 0;
      s.computed = 0;
      lost.push_back(id);
    } else if (!s.parked && result_.requests[static_cast<std::size_t>(id)].decode_replica == r) {
      cancel_transfer(id);  // its destination went down: its prefill replica sends it again
      again.push_back(id);
    }
  }
  for (int id : again) send_or_park(id, now);
}

void Engine::land(int id, double now, StepQueue& steps) {
  if (const auto it = std::find(cancelled_.begin(), cancelled_.end(), std::make_pair(now, id));
      it != cancelled_.end()) {
    cancelled_.erase(it);  // a transfer cancelled by an outage
    return;
  }
  Seq& s = seqs_[static_cast<std::size_t>(id)];
  const int from = s.xfer_from;
  Replica& src = replicas_[static_cast<std::size_t>(from)];
  pool(src).release(s.xfer_blocks, 0);  // a transfer from a replica that failed was cancelled
  src.free_blocks += s.xfer_blocks;
  --src.outgoing;
  if (!src.busy && !src.failed) start(from, now, steps);
  s.xfer_blocks = 0;
  s.xfer_from = -1;
  const int d = result_.requests[static_cast<std::size_t>(id)].decode_replica;
  Replica& to = replicas_[static_cast<std::size_t>(d)];
  --to.incoming;
  to.waiting.push_back(id);
  if (!to.busy) start(d, now, steps);
}

}  // namespace fleetsim::serving_detail
