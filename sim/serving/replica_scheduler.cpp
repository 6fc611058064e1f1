#include "sim/serving/replica_scheduler.hpp"

#include <algorithm>

namespace fleetsim::serving_detail {

ReplicaScheduler::ReplicaScheduler(int replica, const ServingEngineConfig& c, std::vector<Sequence>& seqs,
                                   bool prefill_only)
    : kv_(replica, c),
      seqs_(seqs),
      max_num_seqs_(c.max_num_seqs),
      max_num_batched_tokens_(c.max_num_batched_tokens),
      prefill_only_(prefill_only) {}

bool ReplicaScheduler::schedule() {
  scheduled_.clear();
  int budget = max_num_batched_tokens_;
  bool preempted = false;
  // Running requests first, in admission order.
  for (std::size_t i = 0; i < running_.size() && budget > 0;) {
    const int id = running_[i];
    Sequence& s = seqs_[static_cast<std::size_t>(id)];
    const int n = std::min(s.prompt + s.generated - s.computed, budget);
    const long need = kv_.blocks_for(s.computed + n) - s.kv.blocks;
    bool self_preempted = false;
    while (need > kv_.free_blocks()) {
      const int victim = running_.back();
      preempt_last();
      preempted = true;
      if (victim == id) {
        self_preempted = true;
        break;
      }
    }
    if (self_preempted) break;
    kv_.allocate(s.kv, need);
    scheduled_.emplace_back(id, n);
    budget -= n;
    ++i;
  }
  // Then waiting requests, first come first served, unless this step preempted.
  while (!preempted && budget > 0 && !waiting_.empty() && static_cast<int>(running_.size()) < max_num_seqs_) {
    if (!admit(waiting_.front(), budget)) break;
    waiting_.pop_front();
  }
  return !scheduled_.empty();
}

bool ReplicaScheduler::admit(int id, int& budget) {
  Sequence& s = seqs_[static_cast<std::size_t>(id)];
  const int tokens = s.prompt + s.generated;
  // The whole known sequence must fit the free blocks (a request's own cached blocks among them).
  if (kv_.blocks_for(tokens) - s.kv.blocks > kv_.free_blocks()) return false;
  const int cached = kv_.computed_prefix(s);
  const int n = std::min(tokens - s.computed - cached, budget);
  s.computed += cached;
  s.cached_tokens += cached;
  kv_.allocate(s.kv, kv_.blocks_for(s.computed + n) - s.kv.blocks);
  running_.push_back(id);
  scheduled_.emplace_back(id, n);
  budget -= n;
  return true;
}

void ReplicaScheduler::preempt_last() {
  const int victim = running_.back();
  Sequence& v = seqs_[static_cast<std::size_t>(victim)];
  kv_.preempt(v.kv, v.computed);
  v.computed = 0;
  ++v.preemptions;
  running_.pop_back();
  waiting_.push_front(victim);
}

int ReplicaScheduler::scheduled_tokens() const {
  int tokens = 0;
  for (const auto& sched : scheduled_) tokens += sched.second;
  return tokens;
}

void ReplicaScheduler::describe(BatchShape& shape) const {
  shape.prefills.clear();
  shape.decode_kv.clear();
  shape.group_tokens = 0;
  shape.group_max_tokens = 0;
  for (const auto& [id, n] : scheduled_) {
    const Sequence& s = seqs_[static_cast<std::size_t>(id)];
    if (s.generated > 0 && n == 1 && s.computed == s.prompt + s.generated - 1)
      shape.decode_kv.push_back(s.computed);
    else
      shape.prefills.push_back({n, s.computed});
  }
}

const StepOutput& ReplicaScheduler::finish() {
  out_.first_token.clear();
  out_.finished.clear();
  out_.prefilled.clear();
  for (const auto& [id, n] : scheduled_) {
    Sequence& s = seqs_[static_cast<std::size_t>(id)];
    s.computed += n;
    if (s.computed < s.prompt + s.generated) continue;
    ++s.generated;
    if (s.generated == 1) {
      out_.first_token.push_back(id);
      kv_.cache_prompt(s);
    }
    if (s.generated >= s.out)
      out_.finished.push_back(id);
    else if (prefill_only_)
      out_.prefilled.push_back(id);
  }
  for (int id : out_.prefilled) running_.erase(std::find(running_.begin(), running_.end(), id));
  for (int id : out_.finished) {
    kv_.free(seqs_[static_cast<std::size_t>(id)].kv);
    running_.erase(std::find(running_.begin(), running_.end(), id));
  }
  scheduled_.clear();
  return out_;
}

std::vector<int> ReplicaScheduler::evict() {
  scheduled_.clear();
  std::vector<int> held(running_.begin(), running_.end());
  held.insert(held.end(), waiting_.begin(), waiting_.end());
  running_.clear();
  waiting_.clear();
  kv_.reset();
  for (int id : held) {
    Sequence& s = seqs_[static_cast<std::size_t>(id)];
    s.kv.blocks = 0;
    s.computed = 0;  // KV lost: prefill again (prompt and tokens generated so far)
  }
  return held;
}

}  // namespace fleetsim::serving_detail
