#include "models/job/job_model.hpp"

#include <algorithm>
#include <utility>

#include "workloads/base/keys.hpp"

namespace fleetsim {
namespace {

using K = KeyKind;
const KeyRegistrar kKeys{
    {
        {"execution", "job_model", K::kString, "", "auto",
         "job model (fleetsim policies lists them), or auto: the first of kernels (profiles given), "
         "throughput (the trace has steps and a table is given), trace"},
        {"execution", "reference_gpu", K::kString, "", "v100",
         "throughput: table GPU type scaled by FP32 peak for GPU types absent from the table; kernels: the "
         "GPU type trace durations were measured on",
         "throughput, kernels"},
    },
    {
        {"execution", "throughputs",
         "execution.throughputs was split (one key, one meaning): write execution.throughput_table = the "
         "Gavel throughput JSON (throughput job model) or execution.pollux_profiles = the folder of Pollux "
         "profiles (pollux job model)"},
    }};

struct AutoEntry {
  int priority;
  std::string name;
  JobModelAutoRule rule;
};

std::vector<AutoEntry>& auto_rules() {
  static std::vector<AutoEntry> rules;
  return rules;
}

}  // namespace

JobModelRegistry& job_models() {
  static JobModelRegistry registry("job model");
  return registry;
}

JobModelRegistrar::JobModelRegistrar(std::string name, std::string description, JobModelRegistry::Factory f,
                                     int auto_priority, JobModelAutoRule auto_rule) {
  if (auto_rule) auto_rules().push_back({auto_priority, name, std::move(auto_rule)});
  job_models().add(std::move(name), std::move(description), std::move(f));
}

std::string auto_job_model(const JobModelParams& params, const std::vector<JobSpec>& jobs) {
  std::vector<const AutoEntry*> order;
  for (const auto& e : auto_rules()) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](const AutoEntry* a, const AutoEntry* b) {
    return a->priority != b->priority ? a->priority > b->priority : a->name < b->name;
  });
  for (const AutoEntry* e : order)
    if (e->rule(params, jobs)) return e->name;
  return "trace";
}

}  // namespace fleetsim
