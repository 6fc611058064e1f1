#pragma once
// One serving replica's KV cache, as vLLM v1's KVCacheManager over its BlockPool: kv_blocks paged blocks
// of block_size tokens, handed out from a free-block queue (free_block_queue.hpp: freed blocks join its
// back, new ones come from its front, evicting what was cached in them), and with prefix caching the
// prompt-prefix cache (prefix_cache.hpp) of the trace's block hashes. The replica's scheduler
// (replica_scheduler.hpp) asks it for blocks; it knows nothing of steps or routing.
#include <cstddef>

#include "sim/serving/free_block_queue.hpp"
#include "sim/serving/prefix_cache.hpp"
#include "sim/serving/sequence.hpp"
#include "sim/serving/serving_engine.hpp"

namespace fleetsim::serving_detail {

class KvCacheManager {
 public:
  /// Replica `replica`'s cache, sized by config.kv_blocks, block_size, prefix_caching, hash_block_tokens.
  KvCacheManager(int replica, const ServingEngineConfig& config);

  long blocks_for(long long tokens) const {
    return static_cast<long>((tokens + block_size_ - 1) / block_size_);
  }
  long total_blocks() const { return total_; }
  long free_blocks() const { return free_; }
  /// Share of the blocks in use, [0, 1] (0 without blocks).
  double used() const { return total_ > 0 ? 1.0 - static_cast<double>(free_) / total_ : 0; }
  bool prefix_caching() const { return prefix_caching_; }
  /// The prompt-prefix cache, for routers to look into (PrefixCache::peek).
  const PrefixCache& prefix_cache() const { return cache_; }

  /// The request gets `n` more blocks (nothing when n <= 0) from the front of the free queue.
  void allocate(KvHold& kv, long n);
  /// All the request's blocks go back to the free queue, findable no more (it finished).
  void free(KvHold& kv);
  /// `blocks` held for a request that left (its KV transfer landed) go back to the free queue.
  void free(long blocks);
  /// The request is preempted: its blocks go back to the free queue; with prefix caching its full
  /// blocks of `computed` tokens stay findable through kv.ticket until reused (vLLM frees a request's
  /// blocks last first, so its leading blocks are evicted last).
  void preempt(KvHold& kv, int computed);
  /// Admitting `s` (vLLM's get_computed_blocks): with prefix caching and no KV computed, its own blocks
  /// still cached since a preemption here, or on its first admission its prompt's block hashes found
  /// in the prefix cache, whichever covers more (never the whole sequence: the last token is
  /// computed). Claims its own cached blocks. Returns the tokens whose KV is found.
  int computed_prefix(Sequence& s);
  /// The request's prompt is computed (its first token sampled): its block hashes join the prefix cache.
  void cache_prompt(const Sequence& s);
  /// An outage: every block free, nothing cached; tickets of before no longer count.
  void reset();

 private:
  bool own_ticket(const KvHold& kv) const {
    return kv.ticket >= 0 && kv.replica == replica_ && kv.generation == generation_;
  }

  int replica_;
  long total_;
  int block_size_;
  int hash_tokens_;  ///< tokens per trace block hash
  bool prefix_caching_;
  std::size_t cache_entries_;
  long free_;
  long generation_ = 0;  ///< bumped by each outage
  FreeBlockQueue pool_;
  PrefixCache cache_;
};

}  // namespace fleetsim::serving_detail
