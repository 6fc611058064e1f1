// Feature `failures`: hardware failures, repair, checkpointing, hot spares and maintenance windows
// from the [failures] keys (sim/failures/failure_hook.hpp). Writes failures.csv, failure_jobs.csv and
// the summary's "failures" entry.
#include <cstdio>
#include <memory>

#include "sim/app/feature.hpp"
#include "sim/failures/failure_hook.hpp"

namespace fleetsim {
namespace {

class FailuresFeature final : public Feature {
 public:
  explicit FailuresFeature(FailureConfig config) : hook_(std::move(config)) {}
  void attach(Simulation& sim) override { sim.attach(hook_); }
  void write(FeatureOutputs& out, const JobTable& /*jobs*/) const override {
    if (!hook_.mapping_note().empty()) std::fprintf(stderr, "warning: %s\n", hook_.mapping_note().c_str());
    {
      auto f = out.open("failures.csv");
      hook_.write_csv(f);
    }
    {
      auto f = out.open("failure_jobs.csv");
      hook_.write_jobs_csv(f);
    }
    out.entry("failures") = hook_.summary();
  }

 private:
  FailureHook hook_;
};

// After the fidelities: nodes taken out of service switch the network's SimGrid hosts off (a tenant);
// the summary's "failures" entry follows "network".
const FeatureRegistrar kFailures{{"failures",
                                  "node failures, repair, checkpoints, spares and maintenance ([failures])",
                                  {"failures.csv", "failure_jobs.csv"},
                                  {"fabric", "network"},
                                  [](const Scenario& sc) -> std::unique_ptr<Feature> {
                                    auto config =
                                        FailureConfig::from(sc.failures, sc.seed, sc.cluster.nodes.size());
                                    if (!config) return nullptr;
                                    return std::make_unique<FailuresFeature>(std::move(*config));
                                  }}};

}  // namespace
}  // namespace fleetsim
