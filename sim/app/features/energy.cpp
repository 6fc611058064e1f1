// Feature `energy`: GPU, node and network energy and cost over the run, from the [power] keys
// (sim/metrics/energy.hpp); its figures join summary.json's headline figures.
#include <memory>

#include "sim/app/feature.hpp"
#include "sim/metrics/energy.hpp"

namespace fleetsim {
namespace {

class EnergyFeature final : public Feature {
 public:
  EnergyFeature(const PowerConfig& power, const ClusterSpec& cluster) : energy_(power, cluster) {}
  void attach(Simulation& sim) override { sim.add_observer(energy_); }
  void write(FeatureOutputs& out, const JobTable& jobs) const override {
    const auto completed = static_cast<long>(jobs.stats().jct.size());
    const nlohmann::ordered_json figures = energy_figures(energy_, completed);
    for (const auto& [key, value] : figures.items()) out.figures()[key] = value;
  }

 private:
  EnergyObserver energy_;
};

const FeatureRegistrar kEnergy{{"energy",
                                "GPU, node and network energy and cost of the run ([power] keys)",
                                {},
                                {},
                                [](const Scenario& sc) -> std::unique_ptr<Feature> {
                                  return std::make_unique<EnergyFeature>(sc.power, sc.cluster);
                                }}};

}  // namespace
}  // namespace fleetsim
