#pragma once
// Request-level, iteration-level simulation of LLM serving replicas, as vLLM's v1 engine runs them
// (issue 14). Each replica loops over engine steps scheduled by its ReplicaScheduler (running requests
// first, then waiting ones first come first served under the token budget, max_num_seqs and the free
// KV blocks, chunked prefill, recompute preemption) over its KvCacheManager (paged blocks, free-block
// queue, prefix cache); a step lasts ServingStepModel::step_s of its batch. Arrivals go through the
// service's Router (`routing`, one file per policy in routers/) to the replicas that can take them
// now; the autoscaler and failover outages (ReplicaLifecycle) switch replicas on and off; with
// prefill/decode disaggregation a request's KV crosses to a decode replica after its prefill
// (KvHandoff). sim/serving/README.md describes the rooms. Pure discrete-event code (no SimGrid):
// replicas advance step by step in time order.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "models/serving/step_model.hpp"
#include "workloads/base/options.hpp"
#include "workloads/requests/request_trace.hpp"

namespace fleetsim {

/// A replica out of service (a hardware failure or maintenance drain on its node, from the cluster
/// run): at down_s its step in flight is lost and its running and waiting requests, KV lost, go to the
/// surviving replicas through the router (or wait for one); it serves again from up_s (inf: never).
/// Disaggregated: KV in flight to a decode replica that goes down leaves again, at once, from its
/// prefill replica (which holds it until a transfer lands) for another ready decode replica, or waits
/// there for one; KV on a prefill replica that goes down (in flight or waiting) is lost, and its
/// request is prefilled again (prompt and tokens so far) through the router, its TTFT unchanged.
struct ReplicaOutage {
  int replica = 0;
  double down_s = 0;
  double up_s = INFINITY;
};

/// The path a request's KV takes from a prefill replica to a decode replica.
struct KvLink {
  double bytes_per_s = INFINITY;  ///< aggregate over the replica's GPUs
  double latency_s = 0;
  double seconds(double bytes) const { return latency_s + (bytes > 0 ? bytes / bytes_per_s : 0.0); }
};

/// A replica switched on by the autoscaler (or on from the start) until it is switched off: it loads its
/// model from on_s, serves from ready_s, and is off from off_s (inf: on to the end).
struct PowerWindow {
  double on_s = 0;
  double ready_s = 0;
  double off_s = INFINITY;
};

struct ServingEngineConfig {
  int replicas = 1;
  int max_num_seqs = 256;
  int max_num_batched_tokens = 2048;
  int block_size = 16;
  long kv_blocks = 0;           ///< KV blocks per replica (> 0)
  bool prefix_caching = false;  ///< reuse cached prompt blocks named by the requests' block hashes
  int hash_block_tokens = 0;    ///< tokens per trace block hash (0: block_size)
  double step_overhead_s = 0;   ///< CPU time per engine step on top of the GPU time
  /// Replicas step in lockstep in consecutive groups of this many (the data-parallel ranks of an MoE
  /// model, whose MoE layers share the experts; vLLM runs an idle rank's step on a dummy batch): a
  /// group's step starts when all its replicas are free and lasts as long as its longest replica's
  /// step, each timed with BatchShape::group_tokens = the group's new tokens. 1: independent.
  int lockstep = 1;
  /// The router's name (sim/serving/router.hpp: `fleetsim policies` lists them): round-robin,
  /// least-outstanding, prefix-aware, vllm-dp, or any registered one. Unknown: InputError listing them.
  std::string routing = "round-robin";
  /// Where a router reads keys of its own (the service's table); empty: their defaults.
  Options router_options;
  double sample_every_s = 1;  ///< period of the queue/KV time series
  /// Autoscaler (off when min_replicas is 0 or >= replicas): min_replicas run from the start; every
  /// scale_interval_s, when the waiting requests per ready replica exceed scale_up_queue, one more
  /// replica starts and serves after model_load_s; when nothing waits, an idle ready replica above
  /// min_replicas stops. Replicas never exceed `replicas`.
  int min_replicas = 0;
  /// Disaggregated services scale each group by its own signal instead (min_replicas unused): the
  /// prefill group [0, prefill_replicas) when 0 < min_prefill_replicas < prefill_replicas, the decode
  /// group when 0 < min_decode_replicas < its size; each group's waiting requests (arrivals on the
  /// prefill replicas; landed KV waiting to decode on the decode replicas) per ready replica of the
  /// group against scale_up_queue. A replica stops only with no KV transfer from or to it.
  int min_prefill_replicas = 0;
  int min_decode_replicas = 0;
  double scale_interval_s = 10;
  double scale_up_queue = 4;
  double model_load_s = 60;
  /// Disaggregation (off at 0): replicas [0, prefill_replicas) prefill, the rest decode.
  int prefill_replicas = 0;
  double kv_bytes_per_token = 0;  ///< KV of one token, whole model (bytes moved per prompt token)
  KvLink kv_link;                 ///< every prefill -> decode pair, unless kv_links is given
  std::vector<KvLink> kv_links;   ///< per pair, prefill-major: [p * decode_replicas + d]
  /// Failover moved replicas: from t_s on, `links` (laid out as kv_links) replace kv_links; time order.
  struct KvLinksChange {
    double t_s = 0;
    std::vector<KvLink> links;
  };
  std::vector<KvLinksChange> kv_link_changes;
  /// A request's KV transfer as measured elsewhere (on the cluster's network, sim/serving/kv_fabric.hpp):
  /// request i's transfer from prefill replica `from` to decode replica `to` takes `seconds` instead of
  /// its link's time; to another pair (or another prefill replica) it takes the link's time x
  /// `slowdown`. Empty, or a request's entry with from < 0: the link's time.
  struct KvMeasured {
    int from = -1;
    int to = -1;
    double seconds = 0;
    double slowdown = 1;
  };
  std::vector<KvMeasured> kv_measured;  ///< per request (input order)
  /// Per replica, its speed share (step time / share; MPS co-location interference); empty: all 1.
  std::vector<double> replica_speed;
  /// Per replica, a time-varying factor on that speed (training jobs joining and leaving its MPS GPU),
  /// in time order: from t_s on, steps take step / (speed x factor). A step keeps the factor in force
  /// when it starts. Empty (or a replica's list empty): 1.
  struct SpeedChange {
    double t_s = 0;
    double factor = 1;
  };
  std::vector<std::vector<SpeedChange>> replica_speed_changes;
  /// Failover (empty: none): outages of replicas, any order.
  std::vector<ReplicaOutage> outages;
};

struct RequestOutcome {
  int replica = -1;
  double arrival_s = 0;
  double first_token_s = -1;  ///< -1: never produced one
  double end_s = -1;          ///< -1: not finished
  int preemptions = 0;
  int cached_tokens = 0;     ///< prompt tokens served from the prefix cache
  int decode_replica = -1;   ///< disaggregated: where it decoded (-1: colocated, or never got there)
  double kv_transfer_s = 0;  ///< disaggregated: the KV transfer that reached its decode replica
  int kv_from = -1;          ///< its prefill replica (-1: none)
  double kv_sent_s = -1;     ///< when it left
  double kv_bytes = 0;       ///< the bytes it moved
};

struct ServingSample {
  double t = 0;
  int replica = 0;
  int running = 0;
  int waiting = 0;
  double kv_used = 0;  ///< share of KV blocks in use, [0, 1]
};

struct ServingResult {
  std::vector<RequestOutcome> requests;  ///< in the order of the input requests
  std::vector<ServingSample> samples;
  long steps = 0;
  double busy_s = 0;      ///< summed over replicas: time spent in steps
  double replica_s = 0;   ///< summed over replicas: time switched on (loading, serving or idle)
  int peak_replicas = 0;  ///< most replicas on at once
  double end_s = 0;
  /// Per outage (config order): requests it sent to another replica (running and waiting ones).
  std::vector<long> rerouted;
  /// Per replica, when it was switched on and off, in time order (failover outages not counted).
  std::vector<std::vector<PowerWindow>> windows;
};

/// Runs `requests` (sorted by arrival) on `config.replicas` identical replicas.
ServingResult simulate_serving(const std::vector<ServingRequest>& requests, const ServingStepModel& model,
                               const ServingEngineConfig& config);

}  // namespace fleetsim
