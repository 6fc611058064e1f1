// Feature `network`: [execution] fidelity = "network": every multi-GPU job's all-reduces as SimGrid
// ptasks on the cluster's fabric (sim/network/network_hook.hpp). Writes links.csv, link_tiers.csv and
// the summary's "network" entry, with the nodes and leaf switches it switched off in SimGrid while
// failures held them (it is a node tenant).
#include <cstdio>
#include <memory>

#include "sim/app/feature.hpp"
#include "sim/network/network_hook.hpp"
#include "sim/network/network_report.hpp"

namespace fleetsim {
namespace {

class NetworkFeature final : public Feature {
 public:
  NetworkFeature(const ClusterSpec& cluster, const NetworkFidelityConfig& config)
      : network_(cluster, config) {}
  void attach(Simulation& sim) override {
    sim.attach(network_);
    sim.add_tenant(network_);  // SimGrid hosts and links off while nodes are out of service
  }
  void write(FeatureOutputs& out, const JobTable& jobs) const override {
    const NetworkReport report = network_.report();
    {
      auto f = out.open("links.csv");
      write_links_csv(f, report);
    }
    {
      auto f = out.open("link_tiers.csv");
      write_link_tiers_csv(f, report);
    }
    auto& s = out.entry("network");
    s = network_summary(report, jobs);
    if (!network_.node_switches().empty()) {
      auto& sw = s["nodes_switched_off"];
      sw = nlohmann::ordered_json::array();
      for (const auto& x : network_.node_switches())
        sw.push_back(
            {{"node", x.node}, {"off_s", x.off_s}, {"on_s", x.on_s}, {"hosts_seen_off", x.seen_off}});
    }
    if (!network_.leaf_switches().empty()) {
      auto& sw = s["leaves_switched_off"];
      sw = nlohmann::ordered_json::array();
      for (const auto& x : network_.leaf_switches())
        sw.push_back({{"leaf", x.leaf},
                      {"off_s", x.off_s},
                      {"on_s", x.on_s},
                      {"uplinks", x.links},
                      {"uplinks_seen_off", x.seen_off}});
    }
  }

 private:
  NetworkFidelity network_;
};

const FeatureRegistrar kNetwork{{"network",
                                 "execution.fidelity = network: all-reduces as SimGrid ptasks on the fabric",
                                 {"links.csv", "link_tiers.csv"},
                                 {},
                                 [](const Scenario& sc) -> std::unique_ptr<Feature> {
                                   const auto config = NetworkFidelityConfig::from(sc.execution.settings);
                                   if (!config) return nullptr;
                                   return std::make_unique<NetworkFeature>(sc.cluster, *config);
                                 }}};

}  // namespace
}  // namespace fleetsim
