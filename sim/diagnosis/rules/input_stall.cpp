// Rule input_stall: the host spends more than a share of the step in the DataLoader. Fix: the input
// pipeline prefetches (DataLoader num_workers > 0, pin_memory): the host gaps that the DataLoader
// ops filled before a GPU launch are removed, the rest of the host's time stays.
#include <algorithm>

#include "sim/diagnosis/rule.hpp"
#include "sim/diagnosis/rules/rule_util.hpp"

namespace fleetsim::diagnosis {
namespace {

// Seconds of DataLoader time inside each CPU call's preceding host gap, per vertex.
std::vector<double> loader_in_gaps(const JobAnalysis& a) {
  const auto& g = a.graph;
  const std::size_t n = boost::num_vertices(g.g);
  std::vector<double> cut(n, 0.0);
  std::vector<std::vector<HostInterval>> loaders;
  for (const auto* t : g.traces) loaders.push_back(dataloader_intervals(*t));
  for (std::size_t v = 0; v < n; ++v) {
    const auto& node = g.g[v];
    if (node.kind != replay::NodeKind::cpu) continue;
    std::size_t prev = 0;
    double gap = 0;
    if (!rule_util::host_gap(g, v, prev, gap) || gap <= 0) continue;
    const double lo = g.g[prev].end, hi = node.start;
    const std::int64_t tid = g.event(node).tid;
    for (const auto& d : loaders[static_cast<std::size_t>(node.trace)]) {
      if (d.tid != tid) continue;
      const double a0 = (d.lo - g.origin_us) * 1e-6, b0 = (d.hi - g.origin_us) * 1e-6;
      cut[v] += std::max(0.0, std::min(hi, b0) - std::max(lo, a0));
    }
    cut[v] = std::min(cut[v], gap);
  }
  return cut;
}

std::optional<Finding> check(const JobAnalysis& a, const Thresholds& t) {
  const double share = rule_util::mean_share(a, [](const RankStats& r) { return r.dataloader_s; });
  const double min_share = t["input_stall.min_share"];
  if (!(share > min_share)) return std::nullopt;
  Finding f;
  f.value = share;
  f.threshold = min_share;
  f.unit = "share of step";
  f.evidence = rule_util::pct(share) + " of the step is spent in the DataLoader on the host";
  const std::vector<double> cut = loader_in_gaps(a);
  double total = 0;
  for (double c : cut) total += c;
  if (total <= 0) {
    f.not_simulated =
        "the DataLoader ops do not sit between GPU launches of their thread: what hiding them buys the GPU "
        "cannot be told from the trace";
    return f;
  }
  Fix fix;
  fix.description =
      "prefetch input batches (DataLoader num_workers > 0, pin_memory=True): DataLoader time "
      "removed from the host gaps between GPU launches";
  fix.estimate = "prediction";
  fix.adjust = [cut](const JobAnalysis& job, replay::Retiming& r) {
    const auto& g = job.graph;
    r.gap_scale.assign(boost::num_vertices(g.g), 1.0);
    for (std::size_t v = 0; v < cut.size(); ++v) {
      if (cut[v] <= 0) continue;
      std::size_t prev = 0;
      double gap = 0;
      if (rule_util::host_gap(g, v, prev, gap) && gap > 0)
        r.gap_scale[v] = std::max(0.0, (gap - cut[v]) / gap);
    }
  };
  f.fix = std::move(fix);
  return f;
}

const RuleRegistrar kRule{{
    "input_stall",
    "input pipeline stall: the DataLoader takes more than min_share of the step",
    {{"input_stall.min_share", "share of step", 0.05,
      "DataLoader time on the host per step above which it fires",
      "PyTorch profiler TensorBoard plugin (torch_tb_profiler run.py, analyze: DataLoader > 5% of the "
      "step)"}},
    check,
}};

}  // namespace
}  // namespace fleetsim::diagnosis
