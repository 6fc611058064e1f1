// Rule exposed_communication: collectives that no compute kernel overlaps take more than a share of
// the step. The fix is bounded, not predicted: the trace does not say which gradients are ready
// when, so a reordering cannot be simulated; the replay with every collective's transfer removed
// gives what any overlap (or a faster network) could at most buy.
#include <cmath>
#include <limits>

#include "sim/diagnosis/rule.hpp"
#include "sim/diagnosis/rules/rule_util.hpp"

namespace fleetsim::diagnosis {
namespace {

std::optional<Finding> check(const JobAnalysis& a, const Thresholds& t) {
  const double share =
      rule_util::mean_share(a, [](const RankStats& r) { return r.step.exposed_communication; });
  const double min_share = t["exposed_communication.min_share"];
  if (!(share > min_share)) return std::nullopt;
  Finding f;
  f.value = share;
  f.threshold = min_share;
  f.unit = "share of step";
  const double comm = rule_util::mean_share(a, [](const RankStats& r) { return r.step.communication; });
  f.evidence = rule_util::pct(share) + " of the step is communication not overlapped by compute (" +
               rule_util::pct(comm) + " in collectives in all)";
  Fix fix;
  fix.description =
      "overlap communication with compute (DDP bucketing, FSDP prefetch) or a faster network: "
      "bound from the replay with the collectives' transfers taking no time";
  fix.estimate = "upper bound";
  fix.what_if.speedup[static_cast<std::size_t>(replay::KernelClass::communication)] =
      std::numeric_limits<double>::infinity();
  f.fix = std::move(fix);
  return f;
}

const RuleRegistrar kRule{{
    "exposed_communication",
    "exposed communication: collectives not overlapped by compute take more than min_share of the step",
    {{"exposed_communication.min_share", "share of step", 0.10,
      "non-overlapped communication per step above which it fires",
      "PyTorch profiler TensorBoard plugin (torch_tb_profiler run.py, _analyze_distributed_metrics: "
      "communication > 10% of the step)"}},
    check,
}};

}  // namespace
}  // namespace fleetsim::diagnosis
