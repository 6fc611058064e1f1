// The serving engine's disaggregated KV hand-off: a prefill replica's KV leaves for a decode replica.
#include <algorithm>
#include <cmath>

#include "sim/serving/serving_engine_impl.hpp"

namespace fleetsim::serving_detail {

const KvLink& Engine::link(int p, int d) const {
  if (c_.kv_links.empty()) return c_.kv_link;
  const std::size_t decode = replicas_.size() - static_cast<std::size_t>(prefill_);
  return c_.kv_links[static_cast<std::size_t>(p) * decode + static_cast<std::size_t>(d - prefill_)];
}

void Engine::hand_off(Replica& rep, int r, int id, double now) {
  Seq& s = seqs_[static_cast<std::size_t>(id)];
  rep.running.erase(std::find(rep.running.begin(), rep.running.end(), id));
  s.xfer_from = r;
  s.xfer_blocks = s.blocks;
  s.xfer_epoch = rep.epoch;
  s.blocks = 0;
  int best = -1;
  auto load = [&](int d) {
    const Replica& x = replicas_[static_cast<std::size_t>(d)];
    return x.running.size() + x.waiting.size() + static_cast<std::size_t>(x.incoming);
  };
  for (int d = prefill_; d < static_cast<int>(replicas_.size()); ++d) {
    const Replica& x = replicas_[static_cast<std::size_t>(d)];
    if (x.failed || x.power != Power::kReady) continue;
    if (best < 0 || load(d) < load(best) ||
        (load(d) == load(best) && link(r, d).bytes_per_s > link(r, best).bytes_per_s))
      best = d;
  }
  if (best < 0) {
    // No decode replica up and ready (outages): the KV goes to a failed one and land() routes the
    // request again from scratch; the first decode replica if none failed (never reached).
    best = prefill_;
    for (int d = prefill_; d < static_cast<int>(replicas_.size()); ++d)
      if (replicas_[static_cast<std::size_t>(d)].failed) {
        best = d;
        break;
      }
  }
  ++replicas_[static_cast<std::size_t>(best)].incoming;
  ++rep.outgoing;
  RequestOutcome& o = result_.requests[static_cast<std::size_t>(id)];
  o.decode_replica = best;
  o.kv_transfer_s = link(r, best).seconds(static_cast<double>(s.computed) * c_.kv_bytes_per_token);
  xfers_.push({now + o.kv_transfer_s, id});
}

void Engine::land(int id, double now, StepQueue& steps) {
  Seq& s = seqs_[static_cast<std::size_t>(id)];
  const int from = s.xfer_from;
  Replica& src = replicas_[static_cast<std::size_t>(from)];
  if (s.xfer_epoch == src.epoch) {  // else an outage already freed the source's blocks (and outgoing)
    pool(src).release(s.xfer_blocks, 0);
    src.free_blocks += s.xfer_blocks;
    --src.outgoing;
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

}  // namespace fleetsim::serving_detail
