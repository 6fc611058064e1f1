#pragma once
// A request as the serving engine's parts see it (sim/serving/serving_engine.cpp): its tokens, how far
// its KV is computed, and the KV blocks it holds. One per input request, indexed like them; requests
// move between replicas (failover, disaggregation), their state stays here.
#include <cstdint>
#include <vector>

namespace fleetsim::serving_detail {

/// A request's KV blocks on its replica, as that replica's KvCacheManager accounts them.
struct KvHold {
  long blocks = 0;  ///< blocks held
  /// Preempted with prefix caching: its cached blocks in the free queue of replica `replica` (ticket -1:
  /// none), findable while that replica's KV cache is still the same generation (no outage since).
  long ticket = -1;
  int replica = -1;
  long generation = 0;
};

struct Sequence {
  int prompt = 0;         ///< prompt tokens, >= 1
  int out = 0;            ///< output tokens, >= 1
  int computed = 0;       ///< tokens whose KV is computed
  int generated = 0;      ///< output tokens sampled
  int preemptions = 0;    ///< RequestOutcome::preemptions
  int cached_tokens = 0;  ///< RequestOutcome::cached_tokens
  KvHold kv;
  const std::vector<std::uint64_t>* block_hashes = nullptr;  ///< the request's prompt block hashes
};

}  // namespace fleetsim::serving_detail
