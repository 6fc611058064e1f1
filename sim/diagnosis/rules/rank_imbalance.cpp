// Rule rank_imbalance: one rank's GPU compute per step exceeds the median rank's by more than a
// share (a straggler: the others wait for it in their collectives). Fix: balance the work: the
// replay re-times every rank's compute kernels that exceed the median down to the median rank's
// compute time; collectives then start when the balanced ranks arrive.
#include <algorithm>

#include "sim/diagnosis/rule.hpp"
#include "sim/diagnosis/rules/rule_util.hpp"

namespace fleetsim::diagnosis {
namespace {

double median_compute(const JobAnalysis& a) {
  std::vector<double> c;
  for (const auto& r : a.ranks) c.push_back(r.step.compute);
  std::sort(c.begin(), c.end());
  if (c.empty()) return 0;
  const std::size_t h = c.size() / 2;
  return c.size() % 2 == 1 ? c[h] : 0.5 * (c[h - 1] + c[h]);
}

std::optional<Finding> check(const JobAnalysis& a, const Thresholds& t) {
  if (a.ranks.size() < 2) return std::nullopt;
  const double min_spread = t["rank_imbalance.min_spread"];
  if (!(a.compute_spread > min_spread)) return std::nullopt;
  Finding f;
  f.value = a.compute_spread;
  f.threshold = min_spread;
  f.unit = "max / median - 1";
  double lo = 1e300, hi = 0;
  for (const auto& r : a.ranks) {
    lo = std::min(lo, r.step_s);
    hi = std::max(hi, r.step_s);
  }
  f.evidence = "rank " + std::to_string(a.slowest_rank) + " computes " + rule_util::pct(a.compute_spread) +
               " longer per step than the median rank; step times across ranks span " +
               rule_util::pct(lo > 0 ? hi / lo - 1 : 0);
  Fix fix;
  fix.description =
      "balance the ranks' work (data sharding, pipeline stage split): the slower ranks' compute "
      "kernels re-timed to the median rank's compute time";
  fix.estimate = "prediction";
  fix.adjust = [](const JobAnalysis& job, replay::Retiming& r) {
    const double med = median_compute(job);
    const auto& g = job.graph;
    for (const auto& rs : job.ranks) {
      if (!(rs.step.compute > med) || med <= 0) continue;
      const double scale = med / rs.step.compute;
      for (std::size_t v = 0; v < boost::num_vertices(g.g); ++v) {
        const auto& n = g.g[v];
        if (n.rank == rs.rank && n.kind == replay::NodeKind::kernel) r.factor[v] *= scale;
      }
    }
  };
  f.fix = std::move(fix);
  return f;
}

const RuleRegistrar kRule{{
    "rank_imbalance",
    "rank imbalance: the slowest rank's GPU compute per step exceeds the median rank's by more than "
    "min_spread",
    {{"rank_imbalance.min_spread", "max / median - 1", 0.10,
      "spread of GPU compute per step across ranks above which it fires",
      "HTA straggler analysis (compares ranks' step composition); spread: fleetsim's choice"}},
    check,
}};

}  // namespace
}  // namespace fleetsim::diagnosis
