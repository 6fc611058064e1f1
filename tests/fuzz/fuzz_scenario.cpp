// libFuzzer harness: scenario TOML (tests/fuzz/README.md). The input is a scenario file; it is loaded
// as `fleetsim run` loads it (relative paths resolve against a scratch folder), then what the run
// checks before it simulates: the policy and placer by name with their options, the job model's
// name, the failure, network and fabric settings, and each service's settings.
#include <cstddef>
#include <cstdint>
#include <string>

#include "models/job/job_model.hpp"
#include "sim/app/scenario.hpp"
#include "sim/cluster/placer.hpp"
#include "sim/engine/policy.hpp"
#include "sim/failures/failure_config.hpp"
#include "sim/network/network_hook.hpp"
#include "sim/serving/service.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fleetsim;
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_input_error_only([&] {
    const Scenario sc = parse_scenario(text, "fuzz.toml", fuzz::scratch().string());
    const auto scheduler =
        schedulers().create(sc.scheduler.policy, SchedulerParams{sc.seed, &sc.scheduler.options}, sc.file);
    const auto placer = placers().create(sc.scheduler.placement,
                                         PlacerParams{sc.seed, &sc.scheduler.placement_options}, sc.file);
    sc.scheduler.options.check_all_used("scheduling policy");
    sc.scheduler.placement_options.check_all_used("placement policy");
    if (sc.execution.job_model != "auto" && !job_models().contains(sc.execution.job_model)) return;
    NetworkFidelityConfig::from(sc.execution.settings);
    NetworkFidelityConfig::from(sc.execution.settings, "fabric");
    FailureConfig::from(sc.failures, sc.seed, sc.cluster.nodes.size());
    for (std::size_t i = 0; i < sc.services.size(); ++i)
      service_spec(sc.services[i].service, sc.services[i].requests, static_cast<int>(i), sc.seed, sc.file);
  });
  return 0;
}
