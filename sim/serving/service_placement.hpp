#pragma once
// What a service's engine takes from where ServiceReservations placed its replicas (issue 14):
// - disaggregation: the KV link of every prefill -> decode replica pair. Same node: each GPU's
//   intra-node link (network.intra_node_gbps), one hop of link_latency_s. Different nodes: each GPU's
//   share of its NIC (nic_gbps / gpus_per_nic), at most the node's NICs, 2 hops under one leaf, 4 via
//   the spine. A TP replica moves its KV shards in parallel (bandwidth x GPUs). Contention with other
//   traffic and oversubscription are not modelled. kv_link_gbps > 0 overrides the placement.
// - MPS: each replica's speed share: execution.colocation_slowdown per other replica (of any service)
//   holding a share of the same GPU, and, over time, per training job given a fraction of that GPU
//   (ServiceReservations::occupancy; the engine slows those jobs by the same factor per replica).
// Both follow the placements each replica held over time (ServiceReservations::placements): a
// replica moved by failover serves at its first placement's speed and links until the move, then at
// the new one's (and a replica that stayed slows down when a moved one joins its GPU).
#include <vector>

#include "sim/cluster/cluster_state.hpp"
#include "sim/platform/cluster_spec.hpp"
#include "sim/serving/service_hook.hpp"
#include "sim/serving/serving_engine.hpp"

namespace fleetsim {

struct ServiceSpec;

/// Per replica, its placements in time order (ServiceReservations::placements).
using PlacementHistory = std::vector<std::vector<PlacementChange>>;

/// `mine`: the placements of this service's replicas (in replica order); `all`: every reserved
/// replica's (of all services); `occupancy`: per replica of this service, the training jobs on its GPU
/// over time. Sets engine.kv_links (and kv_link_changes), engine.replica_speed and
/// engine.replica_speed_changes.
void apply_placement(const ServiceSpec& spec, const ClusterSpec& cluster, const PlacementHistory& mine,
                     const PlacementHistory& all, const std::vector<std::vector<OccupancyChange>>& occupancy,
                     double colocation_slowdown, ServingEngineConfig& engine);

}  // namespace fleetsim
