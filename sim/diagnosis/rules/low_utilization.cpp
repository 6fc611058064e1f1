// Rule low_utilization: the GPU is busy (any kernel, copy or collective running) for less than a share
// of the step. Not simulated by itself: the idle time's causes are what the idle-time breakdown and
// the other rules name (host launches, input stalls, exposed communication, synchronisation).
#include "sim/diagnosis/rule.hpp"
#include "sim/diagnosis/rules/rule_util.hpp"

namespace fleetsim::diagnosis {
namespace {

std::optional<Finding> check(const JobAnalysis& a, const Thresholds& t) {
  const double busy = 1 - rule_util::mean_share(a, [](const RankStats& r) { return r.step.idle; });
  const double max_busy = t["low_utilization.max_busy_share"];
  if (!(busy < max_busy) || a.ranks.empty()) return std::nullopt;
  Finding f;
  f.value = busy;
  f.threshold = max_busy;
  f.unit = "share of step";
  double host = 0, kernel = 0, other = 0;
  for (const auto& r : a.ranks) {
    host += r.hta.idle.host_wait_us;
    kernel += r.hta.idle.kernel_wait_us;
    other += r.hta.idle.other_us;
  }
  const double idle = host + kernel + other;
  f.evidence =
      "the GPU is busy " + rule_util::pct(busy) + " of the step" +
      (idle > 0 ? "; its idle time (HTA's breakdown, all streams) is " + rule_util::pct(host / idle) +
                      " waiting on the host, " + rule_util::pct(kernel / idle) +
                      " between back-to-back kernels, " + rule_util::pct(other / idle) + " other"
                : std::string());
  f.not_simulated =
      "low utilization is a symptom: its fix depends on the cause (the other findings and the idle-time "
      "breakdown name it; a larger batch is not in the trace)";
  return f;
}

const RuleRegistrar kRule{{
    "low_utilization",
    "low GPU utilization: the GPU is busy less than max_busy_share of the step",
    {{"low_utilization.max_busy_share", "share of step", 0.5,
      "GPU busy share of the step (1 - idle) below which it fires",
      "PyTorch profiler TensorBoard plugin (torch_tb_profiler run.py, _analyze_gpu_metrics: utilization < "
      "0.5)"}},
    check,
}};

}  // namespace
}  // namespace fleetsim::diagnosis
