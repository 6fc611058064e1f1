#pragma once
// Replicas the autoscaler switches off give their GPUs to training (`[[service]] reclaim`).
//
// Three steps, each on what the one before decided:
// 1. first pass: the service alone, on its own replicas, the autoscaler deciding: when each replica is
//    switched on (model load from then), serves and is switched off (its PowerWindows);
// 2. the cluster run: each replica holds GPUs only inside its windows (ServiceReservations); switched
//    on, it takes GPUs back by preempting training jobs (`preempt`) or by waiting for free ones
//    (`wait`), and the windows it was granted are recorded;
// 3. the served run: the requests on the granted windows, the autoscaler's decisions replaced by
//    them: a replica serves from the time it got GPUs + its model load until it was switched off, and
//    is out of service (ServingEngine outages: requests on it are re-routed) otherwise.
// A replica's wait for GPUs thus delays its serving and costs the SLO; the autoscaler does not react
// to it (it decided in step 1, as an autoscaler counting a pending replica as on would), and the
// cluster run does not see serving outcomes.
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/serving/service.hpp"

namespace fleetsim {

/// The service's `reclaim` key. Not `hold`: the service must autoscale (min_replicas, or
/// min_prefill_replicas / min_decode_replicas) and its replicas hold whole GPUs. Throws InputError.
Reclaim reclaim_policy(const ServiceSpec& spec);

/// Step 1: per replica, when the autoscaler has it on, from the service run alone.
std::vector<std::vector<PowerWindow>> first_pass_windows(const PreparedService& prepared);

/// Step 3's settings: `granted` per replica (ServiceReservations::granted, this service's replicas)
/// become outages beside the failover ones already in `engine.outages` (merged where they overlap or
/// touch; `events` holds the failover outages' taker events, and on return one per merged outage,
/// the first failover event inside it or -1); the autoscaler is switched off.
void serve_granted(const std::vector<std::vector<PowerWindow>>& granted, ServingEngineConfig& engine,
                   std::vector<long>& events);

/// The summary's figures for a reclaiming service, from the granted windows: autoscaled, peak_replicas
/// (most replicas holding GPUs at once), gpu_hours (GPU time held until the service's last event),
/// reclaim (the policy), reclaim_jobs_preempted, reclaim_wait_s.
void reclaim_summary(const ServiceSpec& spec, Reclaim policy,
                     const std::vector<std::vector<PowerWindow>>& granted,
                     const std::vector<ReclaimStats>& stats, double end_s, nlohmann::ordered_json& summary);

}  // namespace fleetsim
