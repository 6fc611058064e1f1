// `fleetsim size` over replica layouts (issue 14 item 5): parse_layout, with_layout and sizing a
// service at a TP degree or a MIG instance on another GPU type.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "sim/app/scenario.hpp"
#include "sim/serving/sizing.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;

namespace {

const std::string kData = std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/serving";

ServiceSpec tiny_moe(const std::filesystem::path& dir) {
  const std::string toml =
      "[cluster]\n[[cluster.pool]]\nnodes = 1\ngpus_per_node = 1\ngpu = \"A100-80GB\"\n"
      "[[service]]\nname = \"moe\"\nmodel = \"" +
      kData + "/tiny-moe-config.json\"\nprofiles = \"" + kData +
      "/tiny-moe/bf16\"\ngpu = \"A100-80GB\"\nkv_cache_gib = 0.0001\nmax_num_seqs = 4\nslo_ttft_ms = 1\n"
      "slo_tpot_ms = 1\n[service.requests]\nformat = \"generator\"\narrival = \"poisson\"\nrate_per_s = "
      "3000\n"
      "requests = 300\ninput_tokens = 30\noutput_tokens = 20\n";
  const Scenario sc = parse_scenario(toml, (dir / "s.toml").string(), dir.string());
  return service_spec(sc.services[0].service, sc.services[0].requests, 0, sc.seed, sc.file);
}

}  // namespace

TEST_CASE("sizing layouts: tp<N> and mig:<profile> parse, anything else names the option") {
  CHECK(parse_layout("tp2", "--layouts").tensor_parallel == 2);
  CHECK(parse_layout("tp2", "--layouts").name() == "tp2");
  CHECK(parse_layout("mig:3g", "--layouts").mig == "3g");
  CHECK(parse_layout("mig:3g", "--layouts").name() == "mig:3g");
  for (const char* bad : {"tp", "tp0", "2", "mig:", "tpx"})
    CHECK_THROWS_AS(parse_layout(bad, "--layouts"), InputError);
}

TEST_CASE("sizing layouts: MIG 7g sizes like the whole GPU, a 2g slice counts 2/7 of a GPU") {
  const auto dir = test::temp_dir("size-layouts");
  const ServiceSpec spec = tiny_moe(dir);
  const SizingResult whole = size_service(with_layout(spec, "A100-80GB", {1, ""}), 0.9, {1}, 32);
  const SizingResult g7 = size_service(with_layout(spec, "A100-80GB", {1, "7g"}), 0.9, {1}, 32);
  REQUIRE(whole.fewest[0] > 0);
  CHECK(g7.fewest[0] == whole.fewest[0]);
  const SizingResult g2 = size_service(with_layout(spec, "A100-80GB", {1, "2g"}), 0.9, {1}, 64);
  REQUIRE(g2.fewest[0] > 0);
  CHECK(g2.fewest[0] >= whole.fewest[0]);
  for (const auto& p : g2.curve) CHECK(p.gpus == doctest::Approx(p.replicas * 2.0 / 7));
  // TP 2 (profiled for tiny-moe): two GPUs per replica.
  const SizingResult tp2 = size_service(with_layout(spec, "A100-80GB", {2, ""}), 0.9, {1}, 32);
  for (const auto& p : tp2.curve) CHECK(p.gpus == doctest::Approx(2.0 * p.replicas));
  // A layout the GPU or the profiles cannot run is an input error (fleetsim size lists it unavailable).
  CHECK_THROWS_AS(with_layout(spec, "RTX4090", {1, "2g"}), InputError);
  CHECK_THROWS_AS(size_service(with_layout(spec, "A100-80GB", {4, ""}), 0.9, {1}, 4), InputError);
  std::filesystem::remove_all(dir);
}
