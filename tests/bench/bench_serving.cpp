// Speed of LLM serving (issue 14), in process (the serving engine is pure discrete-event code):
//   - the measured vLLM run replayed (300 requests, Llama-3.1-8B on an RTX PRO 6000): target < 50 ms;
//   - the Azure conversation trace (19,366 requests) on 8 replicas: target < 2 s;
//   - fleetsim size over 1-64 replicas at 1x, 2x, 4x the Azure load: target < 30 s.
// Needs ../shared/data/serving (skips otherwise). Loading the profiles and the trace is outside the
// timed loop for the first two, inside it for sizing (as `fleetsim size` runs).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include "sim/app/scenario.hpp"
#include "sim/serving/sizing.hpp"

namespace {

using namespace fleetsim;

bool have_data(benchmark::State& state) {
  if (std::filesystem::exists(std::string(FLEETSIM_SHARED_DATA) + "/serving")) return true;
  state.SkipWithError("../shared/data/serving not present");
  for (auto _ : state) {
  }
  return false;
}

ServiceSpec spec_of(const std::string& scenario, const std::vector<std::string>& sets) {
  const Scenario sc = load_scenario(std::string(FLEETSIM_SOURCE_DIR) + "/scenarios/" + scenario, sets);
  return service_spec(sc.services[0].service, sc.services[0].requests, 0, sc.seed, sc.file);
}

void BM_serving_replay_300(benchmark::State& state) {
  if (!have_data(state)) return;
  const ServiceSpec spec = spec_of("serving-llama8b-rtxpro6000.toml", {});
  const PreparedService p = prepare_service(spec);
  long steps = 0;
  for (auto _ : state) steps = simulate_serving(p.requests, *p.model, p.engine).steps;
  state.counters["steps"] = static_cast<double>(steps);
}

void BM_serving_azure_8(benchmark::State& state) {
  if (!have_data(state)) return;
  const ServiceSpec spec = spec_of("serving-shared.toml", {});
  const PreparedService p = prepare_service(spec);
  long steps = 0;
  for (auto _ : state) steps = simulate_serving(p.requests, *p.model, p.engine).steps;
  state.counters["requests"] = static_cast<double>(p.requests.size());
  state.counters["steps"] = static_cast<double>(steps);
}

void BM_size_azure(benchmark::State& state) {
  if (!have_data(state)) return;
  const ServiceSpec spec = spec_of("serving-shared.toml", {});
  std::size_t runs = 0;
  for (auto _ : state) runs = size_service(spec, 0.99, {1, 2, 4}, 64).curve.size();
  state.counters["runs"] = static_cast<double>(runs);
}

}  // namespace

BENCHMARK(BM_serving_replay_300)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_serving_azure_8)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_size_azure)->Unit(benchmark::kMillisecond)->Iterations(1);

BENCHMARK_MAIN();
