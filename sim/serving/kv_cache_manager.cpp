#include "sim/serving/kv_cache_manager.hpp"

#include <algorithm>

namespace fleetsim::serving_detail {
namespace {

int hash_tokens_of(const ServingEngineConfig& c) {
  return c.hash_block_tokens > 0 ? c.hash_block_tokens : c.block_size;
}

}  // namespace

KvCacheManager::KvCacheManager(int replica, const ServingEngineConfig& c)
    : replica_(replica),
      total_(c.kv_blocks),
      block_size_(c.block_size),
      hash_tokens_(hash_tokens_of(c)),
      prefix_caching_(c.prefix_caching),
      // As many hashes as the blocks hold tokens.
      cache_entries_(static_cast<std::size_t>(static_cast<double>(c.kv_blocks) * c.block_size /
                                              std::max(1, hash_tokens_of(c)))),
      free_(c.kv_blocks),
      cache_(c.prefix_caching ? cache_entries_ : 0) {
  pool_.reset(total_);
}

void KvCacheManager::allocate(KvHold& kv, long n) {
  if (n <= 0) return;
  pool_.take(n);
  free_ -= n;
  kv.blocks += n;
}

void KvCacheManager::free(KvHold& kv) {
  free(kv.blocks);
  kv.blocks = 0;
}

void KvCacheManager::free(long blocks) {
  pool_.release(blocks, 0);
  free_ += blocks;
}

void KvCacheManager::preempt(KvHold& kv, int computed) {
  const long keep = prefix_caching_ ? std::min(kv.blocks, static_cast<long>(computed / block_size_)) : 0;
  kv.ticket = pool_.release(kv.blocks - keep, keep);
  kv.replica = replica_;
  kv.generation = generation_;
  free_ += kv.blocks;
  kv.blocks = 0;
}

int KvCacheManager::computed_prefix(Sequence& s) {
  const int tokens = s.prompt + s.generated;
  long own = 0;  // its leading blocks still cached since its preemption here
  int cached = 0;
  if (prefix_caching_ && s.computed == 0) {
    if (own_ticket(s.kv))
      own = std::min(pool_.cached(s.kv.ticket), static_cast<long>((tokens - 1) / block_size_));
    cached = static_cast<int>(own) * block_size_;
    if (s.generated == 0) {
      const auto hits = cache_.match(*s.block_hashes);
      cached = std::max(cached, std::min(static_cast<int>(hits) * hash_tokens_, s.prompt - 1));
    }
  }
  if (own_ticket(s.kv)) {
    pool_.claim(s.kv.ticket, own);
    free_ -= own;
    s.kv.blocks += own;
  }
  s.kv.ticket = -1;
  return cached;
}

void KvCacheManager::cache_prompt(const Sequence& s) {
  if (prefix_caching_) cache_.insert(*s.block_hashes);
}

void KvCacheManager::reset() {
  ++generation_;
  free_ = total_;
  pool_.reset(total_);
  cache_ = PrefixCache(prefix_caching_ ? cache_entries_ : 0);
}

}  // namespace fleetsim::serving_detail
