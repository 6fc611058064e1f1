// Feature `serving`: the scenario's [[service]]s on the training cluster (sim/serving/cluster_services.hpp):
// their replicas hold GPUs in the run, then their requests are simulated on those placements. Writes
// requests.csv, serving_timeseries.csv and the summary's "services" and "services_gpus_held" entries.
// With the network fidelity, disaggregated services' KV transfers run on its SimGrid network
// (sim/serving/kv_fabric.hpp), after it: the serving feature attaches after failures, which attaches
// after the fidelities.
#include <cstdio>
#include <memory>
#include <set>

#include "sim/app/feature.hpp"
#include "sim/engine/engine_config.hpp"
#include "sim/failures/failure_config.hpp"
#include "sim/network/network_hook.hpp"
#include "sim/serving/cluster_services.hpp"

namespace fleetsim {
namespace {

class ServingFeature final : public Feature {
 public:
  ServingFeature(std::vector<ServiceSpec> specs, const Scenario& sc)
      : services_(std::move(specs), sc.cluster, EngineConfig::from(sc.execution.settings), sc.power,
                  NetworkFidelityConfig::from(sc.execution.settings).has_value(),
                  FailureConfig::from(sc.failures, sc.seed, sc.cluster.nodes.size()).has_value()) {
    for (const auto& w : services_.warnings()) std::fprintf(stderr, "warning: %s\n", w.c_str());
  }
  void attach(Simulation& sim) override { services_.attach(sim); }
  void complete() override { services_.run(); }
  void write(FeatureOutputs& out, const JobTable& /*jobs*/) const override {
    {
      auto f = out.open("requests.csv");
      services_.write_requests(f);
    }
    {
      auto f = out.open("serving_timeseries.csv");
      services_.write_series(f);
    }
    out.entry("services") = services_.summary();
    out.entry("services_gpus_held") = services_.gpus_held();
  }

 private:
  ClusterServices services_;
};

std::unique_ptr<Feature> make(const Scenario& sc) {
  if (sc.services.empty()) return nullptr;
  std::vector<ServiceSpec> specs;
  std::set<std::string> names;
  for (std::size_t i = 0; i < sc.services.size(); ++i) {
    const auto& t = sc.services[i];
    specs.push_back(service_spec(t.service, t.requests, static_cast<int>(i), sc.seed, sc.file));
    if (!names.insert(specs.back().name).second)
      throw t.service.error("name", "duplicate service name '" + specs.back().name + "'");
  }
  return std::make_unique<ServingFeature>(std::move(specs), sc);
}

// After failures: held spares are out of service before the replicas are placed.
const FeatureRegistrar kServing{{"serving",
                                 "[[service]]: LLM serving replicas on the training cluster",
                                 {"requests.csv", "serving_timeseries.csv"},
                                 {"failures"},
                                 make}};

}  // namespace
}  // namespace fleetsim
