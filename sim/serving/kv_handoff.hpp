#pragma once
// Prefill/decode disaggregation's KV hand-off (DistServe, Splitwise): when a request's prefill samples
// its first token on a prefill replica, its KV (computed tokens x kv_bytes_per_token) crosses the link
// to a decode replica (the least outstanding, counting transfers on their way to it; ties the fastest
// link, then the lowest-numbered): latency + bytes / bandwidth. The prefill replica holds the KV blocks
// until the transfer lands; with no decode replica ready the KV waits there (parked). Failover: KV in
// flight to a decode replica that goes down leaves again from its prefill replica for another; KV on a
// prefill replica that goes down (in flight or parked) is lost, and its request is prefilled again.
// The engine (serving_engine.cpp) hands it the decode replicas ready now and acts on the landings.
#include <cmath>
#include <cstddef>
#include <functional>
#include <queue>
#include <span>
#include <utility>
#include <vector>

#include "sim/serving/router.hpp"
#include "sim/serving/sequence.hpp"
#include "sim/serving/serving_engine.hpp"

namespace fleetsim::serving_detail {

class KvHandoff {
 public:
  /// `replicas` replicas, the first `prefill` prefill-only, over the engine's requests `seqs`.
  KvHandoff(const ServingEngineConfig& config, int replicas, int prefill, std::vector<Sequence>& seqs);

  /// Request `id` sampled its first token on prefill replica `from`, which still holds its blocks
  /// (KvHold::blocks, taken over here): its KV leaves for a decoder, or parks on `from` when there is none.
  /// `decoders`: the decode replicas ready now, in replica order.
  void hand_off(int id, int from, double now, std::span<const RouteCandidate> decoders);
  /// Parked KV leaves for decoders ready now, in the order it was parked.
  void dispatch_parked(double now, std::span<const RouteCandidate> decoders);
  /// Replica r goes down at `now`: KV on its way to it leaves again from its prefill replica (for one of
  /// `decoders`, or parks); KV held by it (in flight or parked) is lost, its requests (none computed any
  /// more) appended to `lost`.
  void drop(int r, double now, std::span<const RouteCandidate> decoders, std::vector<int>& lost);

  /// A transfer's KV reaches its decode replica: the prefill replica `from` frees `blocks`, and
  /// request `id` waits on `to`.
  struct Landing {
    int id = -1;  ///< -1: a transfer cancelled by an outage (nothing to do)
    int from = -1;
    int to = -1;
    long blocks = 0;
  };
  /// The next landing's time (inf: none in flight), and taking it.
  double next_landing() const { return flights_.empty() ? INFINITY : flights_.top().first; }
  Landing land();

  bool parked() const { return !parked_.empty(); }
  /// Transfers from or to replica r (in flight, or parked on it).
  bool busy(int r) const {
    return incoming_[static_cast<std::size_t>(r)] > 0 || outgoing_[static_cast<std::size_t>(r)] > 0;
  }
  /// Writes each request's decode replica and last KV transfer time into `outcomes`.
  void report(std::vector<RequestOutcome>& outcomes) const;

 private:
  struct Transfer {
    int from = -1;        ///< the prefill replica its KV is leaving (-1: none)
    long blocks = 0;      ///< blocks that replica holds until the transfer lands
    double end = 0;       ///< when its transfer in flight lands
    bool parked = false;  ///< its KV waits on `from` for a decode replica to be ready
    int to = -1;          ///< RequestOutcome::decode_replica
    double seconds = 0;   ///< RequestOutcome::kv_transfer_s
    int src = -1;         ///< RequestOutcome::kv_from (kept after landing)
    double sent = -1;     ///< RequestOutcome::kv_sent_s
    double bytes = 0;     ///< RequestOutcome::kv_bytes
  };

  /// The KV link from prefill replica p to decode replica d at `now` (failover may have moved them).
  const KvLink& link(int p, int d, double now) const;
  /// The decoder for KV leaving prefill replica p; -1: none.
  int pick(int p, double now, std::span<const RouteCandidate> decoders) const;
  void send_or_park(int id, double now, std::span<const RouteCandidate> decoders);
  void send(int id, int d, double now);
  /// Forgets request `id`'s transfer in flight (land() ignores it when its time comes).
  void cancel(int id);

  const ServingEngineConfig& c_;
  int replicas_;
  int prefill_;
  std::vector<Sequence>& seqs_;
  std::vector<Transfer> transfers_;  ///< per request
  std::vector<int> incoming_;        ///< per replica: transfers on their way to it
  std::vector<int> outgoing_;        ///< per replica: transfers leaving it (blocks still held)
  std::priority_queue<std::pair<double, int>, std::vector<std::pair<double, int>>, std::greater<>>
      flights_;  ///< (end, request) of KV transfers in flight
  std::vector<int> parked_;
  std::vector<std::pair<double, int>> cancelled_;  ///< (end, request) of transfers cancelled in flight
};

}  // namespace fleetsim::serving_detail
