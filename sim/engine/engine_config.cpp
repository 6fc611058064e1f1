#include "sim/engine/engine_config.hpp"

#include "workloads/base/keys.hpp"

namespace fleetsim {
namespace {

using K = KeyKind;
const EngineConfig kDefaults;

std::string number_text(double x) {
  std::string s = std::to_string(x);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

const KeyRegistrar kEngine{{
    {"execution", "restart_overhead_s", K::kFloat, "s", number_text(kDefaults.restart_overhead_s),
     "fixed checkpoint-restore cost of a preempted job's restart", "", at_least(0)},
    {"execution", "start_overhead_s", K::kFloat, "s", number_text(kDefaults.start_overhead_s),
     "cost of a job's first start (launch, data loading) before it makes progress; Pollux's simulator "
     "charges 30 s on every allocation",
     "", at_least(0)},
    {"execution", "restart_s_per_gb", K::kFloat, "s/GB", number_text(kDefaults.restart_s_per_gb),
     "plus this many seconds per GB of model state", "", at_least(0)},
    {"execution", "state_gb_per_gpu", K::kFloat, "GB", number_text(kDefaults.state_gb_per_gpu),
     "model state per GPU of the job", "", at_least(0)},
    {"execution", "colocation_slowdown", K::kFloat, "", number_text(kDefaults.colocation_slowdown),
     "speed factor (0, 1] of a job per other job sharing its GPU where the job model has no measured "
     "pair rate (1 = no interference)",
     "", in_unit_interval()},
}};

}  // namespace

EngineConfig EngineConfig::from(const Options& execution) {
  EngineConfig c;
  c.restart_overhead_s = execution.number("restart_overhead_s", c.restart_overhead_s);
  c.start_overhead_s = execution.number("start_overhead_s", c.start_overhead_s);
  c.restart_s_per_gb = execution.number("restart_s_per_gb", c.restart_s_per_gb);
  c.state_gb_per_gpu = execution.number("state_gb_per_gpu", c.state_gb_per_gpu);
  c.colocation_slowdown = execution.number("colocation_slowdown", c.colocation_slowdown);
  return c;
}

}  // namespace fleetsim
