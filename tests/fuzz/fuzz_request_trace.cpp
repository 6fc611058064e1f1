// libFuzzer harness: request traces for serving, every registered format (tests/fuzz/README.md). The
// input is a [service.requests] table's keys (TOML, e.g. `format = "azure"`), then a line "%%", then
// the trace file's bytes. The scenario loader and the service's settings check the keys as for
// `fleetsim run` (a tiny served model from tests/data/serving); then the reader reads the file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/app/scenario.hpp"
#include "sim/serving/service.hpp"
#include "tests/fuzz/fuzz_util.hpp"
#include "workloads/requests/request_trace.hpp"

namespace {
constexpr long long kMaxGenerated = 100000;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fleetsim;
  const auto in = fuzz::split_input(std::string_view(reinterpret_cast<const char*>(data), size));
  const std::string trace = fuzz::write_input("requests", in.file);
  const std::string serving = std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/serving";
  const std::string toml =
      "[cluster]\n[[cluster.pool]]\nnodes = 1\ngpus_per_node = 8\ngpu = \"H100\"\n"
      "[[service]]\nname = \"chat\"\nmodel = \"" +
      serving + "/tiny-config.json\"\nprofiles = \"" + serving +
      "/tiny\"\ngpu = \"H100\"\n[service.requests]\npath = \"" + trace + "\"\n" +
      fuzz::expand_src(in.settings) + "\n";
  fuzz::expect_input_error_only([&] {
    const Scenario sc = parse_scenario(toml, "fuzz.toml", fuzz::scratch().string());
    for (std::size_t i = 0; i < sc.services.size(); ++i) {
      const ServiceSpec spec = service_spec(sc.services[i].service, sc.services[i].requests,
                                            static_cast<int>(i), sc.seed, sc.file);
      const Options& o = spec.requests.settings;
      if (spec.requests.format == "generator" &&  // bounded: 10^8 generated requests are valid, and slow
          (o.integer("requests", 1000) > kMaxGenerated ||
           o.number("duration_s", 0) * o.number("rate_per_s", 10) * o.number("rate_scale", 1) >
               kMaxGenerated))
        continue;
      read_requests(spec.requests);
    }
  });
  return 0;
}
