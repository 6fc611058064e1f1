#pragma once
// SlotPool: objects in reusable slots with stable addresses (a std::deque that never shrinks, and
// a list of released slots). The engine keeps its live jobs' state in one, and TraceJobs the jobs
// of a streamed trace it holds, so memory follows what is in use rather than everything ever seen.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace fleetsim {

template <class T>
class SlotPool {
 public:
  /// A slot holding a fresh T{} (a released slot if any, else a new one).
  std::int32_t acquire() {
    if (free_.empty()) {
      items_.emplace_back();
      return static_cast<std::int32_t>(items_.size() - 1);
    }
    const std::int32_t k = free_.back();
    free_.pop_back();
    items_[static_cast<std::size_t>(k)] = T{};
    return k;
  }
  /// Slot k may be reused; references to it are no longer valid for its old occupant.
  void release(std::int32_t k) { free_.push_back(k); }
  T& operator[](std::int32_t k) { return items_[static_cast<std::size_t>(k)]; }
  const T& operator[](std::int32_t k) const { return items_[static_cast<std::size_t>(k)]; }
  /// Slots in use.
  std::size_t in_use() const { return items_.size() - free_.size(); }
  void clear() {
    items_.clear();
    free_.clear();
  }

 private:
  std::deque<T> items_;  ///< std::deque: an element keeps its address as others are added
  std::vector<std::int32_t> free_;
};

}  // namespace fleetsim
