#pragma once
// One serving replica's scheduler, as vLLM v1's Scheduler: each engine step it schedules its running
// requests first, in admission order (one decode token each, or the next prefill chunk), then admits
// waiting requests first come first served while the step's token budget (max_num_batched_tokens),
// max_num_seqs and the free KV blocks allow, chunking prefills to the budget. A running request that
// cannot get a block preempts the latest-admitted running request (recompute preemption: its KV is
// freed and computed again when it is re-admitted), and no waiting request is admitted in that step.
// A waiting request is admitted only when the KV cache holds its whole known sequence (vLLM's
// scheduler_reserve_full_isl). Its KV blocks come from the replica's KvCacheManager, which it owns.
// It knows nothing of time, routing or the other replicas: the engine (serving_engine.cpp) times
// the steps it schedules.
#include <deque>
#include <utility>
#include <vector>

#include "models/serving/step_model.hpp"
#include "sim/serving/kv_cache_manager.hpp"
#include "sim/serving/sequence.hpp"

namespace fleetsim::serving_detail {

/// What a step did to its requests (ReplicaScheduler::finish).
struct StepOutput {
  std::vector<int> first_token;  ///< sampled their first token (their prefill ended)
  std::vector<int> finished;     ///< sampled their last token (their blocks are freed)
  /// Prefill-only replica (disaggregation): sampled their first token and leave the replica, their
  /// KV blocks still held here (KvHold::blocks) until the hand-off takes them.
  std::vector<int> prefilled;
};

class ReplicaScheduler {
 public:
  /// Replica `replica` under `config` (max_num_seqs, max_num_batched_tokens and the KV cache), over the
  /// engine's requests `seqs`; `prefill_only`: requests leave once their prefill is done.
  ReplicaScheduler(int replica, const ServingEngineConfig& config, std::vector<Sequence>& seqs,
                   bool prefill_only);

  /// Request `id` joins the back of the waiting queue.
  void add(int id) { waiting_.push_back(id); }
  /// Schedules the next step (see above); false when there is nothing to run.
  bool schedule();
  /// The step scheduled: (request, tokens) in schedule order.
  const std::vector<std::pair<int, int>>& scheduled() const { return scheduled_; }
  int scheduled_tokens() const;
  /// The scheduled step as the step model takes it (new tokens and KV per prefill chunk, KV per decode).
  void describe(BatchShape& shape) const;
  /// The scheduled step ended: its tokens are computed, and requests that computed all their known
  /// tokens sample the next one. Valid until the next call.
  const StepOutput& finish();
  /// An outage: the step in flight and every request's KV are lost, the cache is emptied. Returns the
  /// requests it held, running ones (in admission order) then waiting ones, none computed any more.
  std::vector<int> evict();

  int running() const { return static_cast<int>(running_.size()); }
  int waiting() const { return static_cast<int>(waiting_.size()); }
  bool empty() const { return running_.empty() && waiting_.empty(); }
  KvCacheManager& kv() { return kv_; }
  const KvCacheManager& kv() const { return kv_; }

 private:
  /// Admits waiting request `id` and schedules its first chunk within `budget`; false: not admitted.
  bool admit(int id, int& budget);
  /// Preempts the latest-admitted running request (the back of running_).
  void preempt_last();

  KvCacheManager kv_;
  std::vector<Sequence>& seqs_;
  int max_num_seqs_;
  int max_num_batched_tokens_;
  bool prefill_only_;
  std::deque<int> waiting_;
  std::vector<int> running_;  ///< admission order (the last is preempted first)
  std::vector<std::pair<int, int>> scheduled_;
  StepOutput out_;  ///< reused: no allocation per step
};

}  // namespace fleetsim::serving_detail
