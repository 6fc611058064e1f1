// Rule launch_bound: the GPU idles while the host launches many kernels shorter than their own
// launch calls (HTA's "short kernels"): the step is bound by the host. Fix: capture the step's
// launches in a CUDA graph. The replay removes the host's launch calls and the host gaps between
// them, except where the host waits for the GPU (a synchronisation ends a capturable sequence) and
// the gap right after such a wait (host work that a graph does not capture, e.g. the optimizer's
// scalar reads, input handling). An upper bound: every sequence between synchronisations captured.
#include "sim/diagnosis/rule.hpp"
#include "sim/diagnosis/rules/rule_util.hpp"

namespace fleetsim::diagnosis {
namespace {

std::optional<Finding> check(const JobAnalysis& a, const Thresholds& t) {
  const double idle = rule_util::mean_share(a, [](const RankStats& r) { return r.step.idle; });
  double short_share = 0, kernels = 0, kernel_us = 0, launch_us = 0;
  for (const auto& r : a.ranks) {
    short_share += r.short_kernel_share;
    kernels += r.kernels;
    kernel_us += r.median_kernel_us;
    launch_us += r.median_launch_us;
  }
  const double nr = a.ranks.empty() ? 1.0 : static_cast<double>(a.ranks.size());
  short_share /= nr;
  const double min_short = t["launch_bound.min_short_share"], min_idle = t["launch_bound.min_idle_share"];
  if (!(short_share >= min_short) || !(idle >= min_idle)) return std::nullopt;
  Finding f;
  f.value = short_share;
  f.threshold = min_short;
  f.unit = "share of kernels";
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "; %.0f kernels per step, median %.1f us against a median launch call of %.1f us",
                kernels / nr, kernel_us / nr, launch_us / nr);
  f.evidence = rule_util::pct(short_share) +
               " of the kernels are shorter than their launch call while the GPU idles " +
               rule_util::pct(idle) + " of the step" + buf;
  Fix fix;
  fix.description =
      "capture the step in a CUDA graph (torch.cuda.graphs, torch.compile mode=\"reduce-overhead\"): "
      "host launch calls and the gaps between them removed, synchronisations kept";
  fix.estimate = "upper bound";
  fix.adjust = [](const JobAnalysis& job, replay::Retiming& r) {
    const auto& g = job.graph;
    const std::size_t n = boost::num_vertices(g.g);
    if (r.gap_scale.empty()) r.gap_scale.assign(n, 1.0);
    for (std::size_t v = 0; v < n; ++v) {
      if (g.g[v].kind != replay::NodeKind::cpu || rule_util::waits_for_gpu(g, v)) continue;
      r.factor[v] = 0;
      std::size_t prev = 0;
      double gap = 0;
      if (rule_util::host_gap(g, v, prev, gap) && !rule_util::waits_for_gpu(g, prev)) r.gap_scale[v] = 0;
    }
  };
  f.fix = std::move(fix);
  return f;
}

const RuleRegistrar kRule{{
    "launch_bound",
    "launch-bound steps: short kernels (shorter than their launch call) while the GPU idles",
    {{"launch_bound.min_short_share", "share of kernels", 0.5,
      "share of kernels shorter than their launch call at or above which it fires",
      "HTA cuda_kernel_launch_stats (short kernels: GPU duration < CPU launch duration); share: fleetsim's "
      "choice"},
     {"launch_bound.min_idle_share", "share of step", 0.2,
      "GPU idle share of the step at or above which it fires",
      "fleetsim's choice (the GPU must starve for the host to bound the step)"}},
    check,
}};

}  // namespace
}  // namespace fleetsim::diagnosis
