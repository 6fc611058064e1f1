// Feature `fabric`: [execution] fidelity = "fabric": jobs slowed by the fair rates of their rings on
// shared fabric links, without SimGrid traffic (sim/network/fabric_fidelity.hpp). Writes links.csv,
// link_tiers.csv and the summary's "network" entry.
#include <memory>

#include "sim/app/feature.hpp"
#include "sim/network/fabric_fidelity.hpp"
#include "sim/network/network_hook.hpp"
#include "sim/network/network_report.hpp"

namespace fleetsim {
namespace {

class FabricFeature final : public Feature {
 public:
  FabricFeature(const ClusterSpec& cluster, const NetworkFidelityConfig& config) : fabric_(cluster, config) {}
  void attach(Simulation& sim) override { sim.attach(fabric_); }
  void write(FeatureOutputs& out, const JobTable& jobs) const override {
    const NetworkReport report = fabric_.report();
    {
      auto f = out.open("links.csv");
      write_links_csv(f, report);
    }
    {
      auto f = out.open("link_tiers.csv");
      write_link_tiers_csv(f, report);
    }
    out.entry("network") = network_summary(report, jobs);
  }

 private:
  FabricFidelity fabric_;
};

const FeatureRegistrar kFabric{{"fabric",
                                "execution.fidelity = fabric: jobs slowed by fair ring rates on shared links",
                                {"links.csv", "link_tiers.csv"},
                                {},
                                [](const Scenario& sc) -> std::unique_ptr<Feature> {
                                  const auto config =
                                      NetworkFidelityConfig::from(sc.execution.settings, "fabric");
                                  if (!config) return nullptr;
                                  return std::make_unique<FabricFeature>(sc.cluster, *config);
                                }}};

}  // namespace
}  // namespace fleetsim
