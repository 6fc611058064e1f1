#pragma once
// The prompt-prefix cache of one serving replica (kv_cache_manager.hpp): trace block hashes, least
// recently used evicted first.
#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

namespace fleetsim {

/// Prompt-prefix cache of one replica: trace block hashes, least recently used evicted first.
class PrefixCache {
 public:
  explicit PrefixCache(std::size_t capacity) : capacity_(capacity) {}
  /// Leading hashes of `h` present in the cache (refreshing them).
  std::size_t match(const std::vector<std::uint64_t>& h) {
    std::size_t n = 0;
    while (n < h.size()) {
      auto it = where_.find(h[n]);
      if (it == where_.end()) break;
      lru_.splice(lru_.begin(), lru_, it->second);
      ++n;
    }
    return n;
  }
  std::size_t peek(const std::vector<std::uint64_t>& h) const {
    std::size_t n = 0;
    while (n < h.size() && where_.count(h[n]) > 0) ++n;
    return n;
  }
  void insert(const std::vector<std::uint64_t>& h) {
    for (auto v : h) {
      if (auto it = where_.find(v); it != where_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second);
        continue;
      }
      if (capacity_ == 0) return;
      if (where_.size() >= capacity_) {
        where_.erase(lru_.back());
        lru_.pop_back();
      }
      lru_.push_front(v);
      where_[v] = lru_.begin();
    }
  }

 private:
  std::size_t capacity_;
  std::list<std::uint64_t> lru_;
  std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> where_;
};

}  // namespace fleetsim
