#include "models/serving/parallel_layout.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

namespace fleetsim::serving {

bool replicated_dense(const std::string& module) {
  return module == "embedding" || module == "layernorm" || module == "final_layernorm" ||
         module == "input_layernorm" || module == "post_attention_layernorm";
}

bool replicated_per_sequence(const std::string& module) {
  return module == "sampler";
}

double expected_max_normal(int n) {
  static constexpr std::array<double, 9> kTable{0,         0,         0.5641896, 0.8462844, 1.0293754,
                                                1.1629645, 1.2672064, 1.3521784, 1.4236003};
  if (n < static_cast<int>(kTable.size())) return kTable[static_cast<std::size_t>(std::max(0, n))];
  const double l = std::sqrt(2 * std::log(n));
  return l - (std::log(std::log(n)) + std::log(4 * std::numbers::pi)) / (2 * l) + 0.5772157 / l;
}

double busiest_rank_pairs(double tokens, int experts, int top_k, int ranks, double popularity_cv) {
  if (tokens <= 0 || ranks <= 1 || experts <= 0 || top_k <= 0) return tokens * top_k / std::max(1, ranks);
  const double E = experts, k = std::min(top_k, experts), r = ranks;
  const double pairs = tokens * k;
  const double mean = pairs / r;
  // One token's count on a rank: hypergeometric, k draws from E experts of which E / r are local.
  const double per_token = E > 1 ? k * (1 / r) * (1 - 1 / r) * (E - k) / (E - 1) : 0;
  const double noise = tokens * per_token;
  // A rank's share of the traffic from unequal popularity: std cv / sqrt(E r) (E / r experts).
  const double skew = pairs * popularity_cv / std::sqrt(E * r);
  const double sd = std::sqrt(noise + skew * skew);
  // The ranks' deviations sum to zero: E[max] = z_r sd / sqrt(1 - 1 / r).
  const double busiest = mean + expected_max_normal(ranks) * sd / std::sqrt(1 - 1 / r);
  return std::min(busiest, tokens * std::min(k, E / r));
}

}  // namespace fleetsim::serving
