#include "sim/failures/failure_process.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <numeric>

#include "sim/cluster/cluster_state.hpp"
#include "workloads/base/sampler.hpp"

namespace fleetsim {

FailureProcess::FailureProcess(const FailureConfig& config, const ClusterState& cluster,
                               const FaultTrace* trace)
    : config_(config), trace_(trace), state_(config.seed * 0x9E3779B97F4A7C15ULL + 0xFA11ULL) {
  nodes_ = cluster.node_count();
  if (trace_ != nullptr) {
    // Trace node i -> cluster node i mod N (round-robin) or perm[i mod N] (random).
    std::vector<int> order(static_cast<std::size_t>(nodes_));
    std::iota(order.begin(), order.end(), 0);
    if (config_.trace_mapping == "random")
      for (int i = nodes_ - 1; i > 0; --i)
        std::swap(order[static_cast<std::size_t>(i)],
                  order[static_cast<std::size_t>(std::min(i, static_cast<int>(uniform() * (i + 1))))]);
    const auto names = static_cast<int>(trace_->nodes.size());
    std::map<std::string, int> index;
    for (int i = 0; i < names; ++i) {
      index[trace_->nodes[static_cast<std::size_t>(i)]] = i;
      trace_node_.push_back(order[static_cast<std::size_t>(i % std::max(1, nodes_))]);
    }
    if (names > nodes_)
      mapping_note_ =
          "fault trace " + trace_->file + " names " + std::to_string(names) + " nodes, the cluster has " +
          std::to_string(nodes_) + ": trace node i (in order of first appearance) runs on cluster node " +
          (config_.trace_mapping == "random" ? "perm[i mod " : "i mod ") + std::to_string(nodes_) +
          (config_.trace_mapping == "random" ? "] (a seeded permutation)" : " (round-robin)") +
          ", so several trace nodes share one cluster node";
    for (std::size_t f = 0; f < trace_->faults.size(); ++f)
      queue_.push({trace_->faults[f].start_s, seq_++, static_cast<int>(f)});
    for (const auto& f : trace_->faults)
      fault_node_.push_back(trace_node_[static_cast<std::size_t>(index[f.node])]);
    if (trace_->span_s > 0 && names > 0)
      mean_node_rate_ =
          static_cast<double>(trace_->faults.size()) / (static_cast<double>(names) * trace_->span_s);
    return;
  }
  node_factor_.assign(static_cast<std::size_t>(nodes_), 1.0);
  if (config_.lemon_fraction > 0) {
    const int lemons = static_cast<int>(std::lround(config_.lemon_fraction * nodes_));
    std::vector<int> order(static_cast<std::size_t>(nodes_));
    std::iota(order.begin(), order.end(), 0);
    for (int i = 0; i < lemons; ++i) {
      const int j = i + std::min(nodes_ - i - 1, static_cast<int>(uniform() * (nodes_ - i)));
      std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
      node_factor_[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = config_.lemon_multiplier;
    }
  }
  double factors = 0;
  for (double f : node_factor_) factors += f;
  mean_node_rate_ = nodes_ > 0 ? config_.node_rate_per_s * factors / nodes_ : 0;
  if (config_.domain == "leaf") {
    std::map<int, std::vector<int>> leaves;
    for (int n = 0; n < nodes_; ++n) leaves[cluster.node_leaf(n)].push_back(n);
    for (auto& [leaf, members] : leaves) domain_nodes_.push_back(std::move(members));
    if (!domain_nodes_.empty() && nodes_ > 0)
      mean_node_rate_ += config_.domain_rate_per_s * static_cast<double>(domain_nodes_.size()) / nodes_;
  }
  for (int n = 0; n < nodes_; ++n) arm(n, 0);
  for (std::size_t d = 0; d < domain_nodes_.size(); ++d) arm(nodes_ + static_cast<int>(d), 0);
}

double FailureProcess::uniform() {  // splitmix64: the same stream on every platform
  const std::uint64_t z = splitmix64(state_);
  state_ += kSplitMixGamma;
  return (static_cast<double>(z >> 11) + 0.5) * 0x1.0p-53;  // in (0, 1)
}

double FailureProcess::normal() {  // Box-Muller, one value per two draws
  const double u1 = uniform(), u2 = uniform();
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

double FailureProcess::interarrival(double rate) {
  if (!(rate > 0)) return std::numeric_limits<double>::infinity();
  const double mean = 1.0 / rate;
  const double e = -std::log(uniform());  // Exp(1)
  if (config_.interarrival != "weibull") return mean * e;
  const double k = config_.weibull_shape;
  return mean / std::tgamma(1 + 1 / k) * std::pow(e, 1 / k);  // Weibull(k) with this mean
}

double FailureProcess::repair(const RepairConfig& r) {
  double t = 0;
  if (r.kind == "empirical") {
    const auto n = r.samples_s.size();
    t = r.samples_s[std::min(n - 1, static_cast<std::size_t>(uniform() * static_cast<double>(n)))];
  } else {
    t = r.median_s * std::exp(r.sigma * normal());
  }
  if (r.manual_probability > 0 && uniform() < r.manual_probability)
    t += r.manual_median_s * std::exp(r.manual_sigma * normal());
  return t;
}

int FailureProcess::pick_component(int /*node*/) {
  const auto& rates = config_.component_rates;
  const double total = std::accumulate(rates.begin(), rates.end(), 0.0);
  double x = uniform() * total;
  for (std::size_t c = 0; c < rates.size(); ++c) {
    if (x < rates[c]) return static_cast<int>(c);
    x -= rates[c];
  }
  return static_cast<int>(rates.size()) - 1;
}

void FailureProcess::arm(int unit, double from_s) {
  const double rate = unit < nodes_ ? config_.node_rate_per_s * node_factor_[static_cast<std::size_t>(unit)]
                                    : config_.domain_rate_per_s;
  const double t = from_s + interarrival(rate);
  if (std::isfinite(t)) queue_.push({t, seq_++, unit});
}

double FailureProcess::next_s() const {
  return queue_.empty() ? std::numeric_limits<double>::infinity() : queue_.top().time_s;
}

FailureEvent FailureProcess::pop() {
  const Pending p = queue_.top();
  queue_.pop();
  FailureEvent e;
  e.time_s = p.time_s;
  if (trace_ != nullptr) {
    const FaultRecord& f = trace_->faults[static_cast<std::size_t>(p.unit)];
    e.nodes = {fault_node_[static_cast<std::size_t>(p.unit)]};
    e.repaired_s = f.end_s;
    e.component = f.component;
    ++replayed_;
    return e;
  }
  if (p.unit < nodes_) {
    e.nodes = {p.unit};
    e.component = config_.components[static_cast<std::size_t>(pick_component(p.unit))];
    e.repaired_s = p.time_s + repair(config_.repair);
  } else {
    e.domain = p.unit - nodes_;
    e.nodes = domain_nodes_[static_cast<std::size_t>(e.domain)];
    e.component = "switch";
    e.repaired_s = p.time_s + repair(config_.domain_repair);
  }
  arm(p.unit, e.repaired_s);  // renewal: the unit can fail again once repaired
  return e;
}

}  // namespace fleetsim
