#pragma once
// Internal to models/serving: how a tensor- or expert-parallel layout changes the profiled
// per-GPU work (step_model.cpp; the rules are in models/serving/README.md).
#include <string>

namespace fleetsim::serving {

/// A module sharded `factor` ways more than profiled: a kernel keeps its fixed cost `floor_us` (the
/// profile's cheapest kernel: launch and the smallest pass) and the rest shrinks by `factor`.
struct Shard {
  double factor = 1;
  double floor_us = 0;
  double operator()(double us) const {
    return factor == 1 || us <= floor_us ? us : floor_us + (us - floor_us) / factor;
  }
};

/// Modules vLLM replicates on every tensor-parallel rank (whole hidden size per token): embedding
/// lookups and the RMSNorms of the residual stream; everything else in dense.csv (projections,
/// rotary embedding, activation, Qwen3's per-head q/k norms) is split by heads or columns.
bool replicated_dense(const std::string& module);
/// The sampler runs on the whole vocabulary on every rank; lm_head is split by vocabulary.
bool replicated_per_sequence(const std::string& module);

/// Waves of a kernel of `ctas` thread blocks on `sms` multiprocessors, never below one.
inline double waves(double ctas, double sms) {
  return ctas > sms ? ctas / sms : 1.0;
}

/// E[max] of n independent standard normals (exact table to 8, Gumbel asymptote above).
double expected_max_normal(int n);

/// Expected token-expert pairs on the busiest of `ranks` expert-parallel ranks when `tokens` tokens
/// each pick `top_k` distinct experts of `experts` (E / ranks whole experts a rank): the mean
/// tokens x top_k / ranks plus E[max] of the ranks' deviations, from the routing's multinomial noise
/// (each token's count on a rank is hypergeometric) and from unequal expert popularity (coefficient
/// of variation `popularity_cv` across experts); at most tokens x min(top_k, E / ranks).
double busiest_rank_pairs(double tokens, int experts, int top_k, int ranks, double popularity_cv);

}  // namespace fleetsim::serving
