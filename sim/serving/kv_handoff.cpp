#include "sim/serving/kv_handoff.hpp"

#include <algorithm>

namespace fleetsim::serving_detail {

KvHandoff::KvHandoff(const ServingEngineConfig& c, int replicas, int prefill, std::vector<Sequence>& seqs)
    : c_(c),
      replicas_(replicas),
      prefill_(prefill),
      seqs_(seqs),
      transfers_(seqs.size()),
      incoming_(static_cast<std::size_t>(replicas), 0),
      outgoing_(static_cast<std::size_t>(replicas), 0) {}

const KvLink& KvHandoff::link(int p, int d, double now) const {
  const std::vector<KvLink>* links = &c_.kv_links;
  for (const auto& change : c_.kv_link_changes) {
    if (change.t_s > now) break;
    links = &change.links;
  }
  if (links->empty()) return c_.kv_link;
  const auto decode = static_cast<std::size_t>(replicas_ - prefill_);
  return (*links)[static_cast<std::size_t>(p) * decode + static_cast<std::size_t>(d - prefill_)];
}

int KvHandoff::pick(int p, double now, std::span<const RouteCandidate> decoders) const {
  int best = -1;
  std::size_t best_load = 0;
  for (const RouteCandidate& c : decoders) {
    const std::size_t load = static_cast<std::size_t>(c.outstanding()) +
                             static_cast<std::size_t>(incoming_[static_cast<std::size_t>(c.replica)]);
    if (best < 0 || load < best_load ||
        (load == best_load && link(p, c.replica, now).bytes_per_s > link(p, best, now).bytes_per_s)) {
      best = c.replica;
      best_load = load;
    }
  }
  return best;
}

void KvHandoff::hand_off(int id, int from, double now, std::span<const RouteCandidate> decoders) {
  Sequence& s = seqs_[static_cast<std::size_t>(id)];
  Transfer& t = transfers_[static_cast<std::size_t>(id)];
  t.from = from;
  t.blocks = s.kv.blocks;
  s.kv.blocks = 0;
  ++outgoing_[static_cast<std::size_t>(from)];
  send_or_park(id, now, decoders);
}

void KvHandoff::send_or_park(int id, double now, std::span<const RouteCandidate> decoders) {
  Transfer& t = transfers_[static_cast<std::size_t>(id)];
  const int d = pick(t.from, now, decoders);
  if (d < 0) {  // no decode replica ready (outages, or the autoscaler has none on): the KV waits
    t.parked = true;
    parked_.push_back(id);
    return;
  }
  send(id, d, now);
}

void KvHandoff::send(int id, int d, double now) {
  Transfer& t = transfers_[static_cast<std::size_t>(id)];
  ++incoming_[static_cast<std::size_t>(d)];
  t.to = d;
  t.src = t.from;
  t.sent = now;
  t.bytes = static_cast<double>(seqs_[static_cast<std::size_t>(id)].computed) * c_.kv_bytes_per_token;
  t.seconds = link(t.from, d, now).seconds(t.bytes);
  if (static_cast<std::size_t>(id) < c_.kv_measured.size()) {
    const auto& m = c_.kv_measured[static_cast<std::size_t>(id)];
    if (m.from == t.from && m.to == d)
      t.seconds = m.seconds;
    else if (m.from >= 0)
      t.seconds *= m.slowdown;
  }
  t.end = now + t.seconds;
  flights_.push({t.end, id});
}

void KvHandoff::dispatch_parked(double now, std::span<const RouteCandidate> decoders) {
  std::size_t sent = 0;
  for (; sent < parked_.size(); ++sent) {
    const int id = parked_[sent];
    Transfer& t = transfers_[static_cast<std::size_t>(id)];
    const int d = pick(t.from, now, decoders);
    if (d < 0) break;
    t.parked = false;
    send(id, d, now);
  }
  parked_.erase(parked_.begin(), parked_.begin() + static_cast<long>(sent));
}

void KvHandoff::cancel(int id) {
  Transfer& t = transfers_[static_cast<std::size_t>(id)];
  cancelled_.emplace_back(t.end, id);
  --incoming_[static_cast<std::size_t>(t.to)];
  t.to = -1;
  t.seconds = 0;
}

void KvHandoff::drop(int r, double now, std::span<const RouteCandidate> decoders, std::vector<int>& lost) {
  outgoing_[static_cast<std::size_t>(r)] = 0;  // its blocks went with its KV cache
  if (prefill_ == 0) return;
  std::vector<int> again;
  for (int id = 0; id < static_cast<int>(transfers_.size()); ++id) {
    Transfer& t = transfers_[static_cast<std::size_t>(id)];
    if (t.from < 0) continue;
    if (t.from == r) {  // its KV was on r: lost
      if (t.parked)
        parked_.erase(std::find(parked_.begin(), parked_.end(), id));
      else
        cancel(id);
      t.parked = false;
      t.from = -1;
      t.blocks = 0;
      Sequence& s = seqs_[static_cast<std::size_t>(id)];
      s.kv.blocks = 0;
      s.computed = 0;
      lost.push_back(id);
    } else if (!t.parked && t.to == r) {
      cancel(id);  // its destination went down: its prefill replica sends it again
      again.push_back(id);
    }
  }
  for (int id : again) send_or_park(id, now, decoders);
}

KvHandoff::Landing KvHandoff::land() {
  const auto [end, id] = flights_.top();
  flights_.pop();
  if (const auto it = std::find(cancelled_.begin(), cancelled_.end(), std::make_pair(end, id));
      it != cancelled_.end()) {
    cancelled_.erase(it);  // a transfer cancelled by an outage
    return {};
  }
  Transfer& t = transfers_[static_cast<std::size_t>(id)];
  const Landing out{id, t.from, t.to, t.blocks};
  --outgoing_[static_cast<std::size_t>(t.from)];
  --incoming_[static_cast<std::size_t>(t.to)];
  t.blocks = 0;
  t.from = -1;
  return out;
}

void KvHandoff::report(std::vector<RequestOutcome>& outcomes) const {
  for (std::size_t i = 0; i < transfers_.size(); ++i) {
    outcomes[i].decode_replica = transfers_[i].to;
    outcomes[i].kv_transfer_s = transfers_[i].seconds;
    if (transfers_[i].to < 0) continue;
    outcomes[i].kv_from = transfers_[i].src;
    outcomes[i].kv_sent_s = transfers_[i].sent;
    outcomes[i].kv_bytes = transfers_[i].bytes;
  }
}

}  // namespace fleetsim::serving_detail
