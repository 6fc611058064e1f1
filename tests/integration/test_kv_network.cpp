// Disaggregated KV transfers on the cluster's network (sim/serving/kv_fabric.hpp) through a whole run:
// two servers of two A100s, the prefill replica on one and the decode replica on the other (most-free
// placement), a 2-GPU training job across both, network fidelity. Times worked out by hand; the
// sharing itself is checked on a bare platform in tests/unit/test_kv_fabric.cpp.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;

namespace {

const std::string kData = std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/serving";

struct TwoServers {
  std::filesystem::path dir = test::temp_dir("kv-network");
  ~TwoServers() { std::filesystem::remove_all(dir); }
  nlohmann::ordered_json run(const std::string& service_keys, const std::string& fidelity = "network",
                             int nodes = 2) {
    test::write_file(dir / "jobs.csv", "id,submit,duration,gpus\nA,0,100,2\n");
    test::write_file(dir / "r.jsonl",
                     "{\"input_toks\": 24, \"output_toks\": 3, \"arrival_time_ns\": 0}\n"
                     "{\"input_toks\": 32, \"output_toks\": 9, \"arrival_time_ns\": 1000000}\n");
    const std::string toml =
        "[cluster]\n[[cluster.pool]]\nnodes = " + std::to_string(nodes) +
        "\ngpus_per_node = 2\ngpu = \"A100-80GB\"\n"
        "[workload]\nformat = \"csv\"\npath = \"jobs.csv\"\n[workload.columns]\nid = \"id\"\nsubmit = "
        "\"submit\"\nduration = \"duration\"\ngpus = \"gpus\"\n[execution]\nfidelity = \"" +
        fidelity +
        "\"\n[scheduler]\npolicy = \"fifo-skip\"\nplacement = \"most-free\"\n"
        "[[service]]\nname = \"tiny\"\nmodel = \"" +
        kData + "/tiny-config.json\"\nprofiles = \"" + kData +
        "/tiny/bf16\"\ngpu = \"A100-80GB\"\nkv_cache_gib = 0.001\n" + service_keys +
        "[service.requests]\nformat = \"llmservingsim\"\npath = \"r.jsonl\"\n[output]\ndir = \"out\"\n";
    const Scenario sc = parse_scenario(toml, (dir / "s.toml").string(), dir.string());
    RunOptions opt;
    opt.quiet = true;
    return run_scenario(sc, opt).summary;
  }
  std::string error_of(const std::string& keys, const std::string& fidelity = "network", int nodes = 2) {
    try {
      run(keys, fidelity, nodes);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
};

const std::string kDisaggregated = "prefill_replicas = 1\ndecode_replicas = 1\n";

}  // namespace

TEST_CASE("kv network: transfers run on the platform and their times feed the served requests") {
  // tiny: 32 B of KV per prompt token; prompts of 24 and 32 tokens: 768 and 1024 B, 896 B on average.
  // Server 0's GPU to server 1's: GPU link up (0.25 us), NIC up and NIC down (1 us each, 100 Gbit/s =
  // 12.5e9 B/s, the whole NIC: nothing else on it), GPU link down (0.25 us). The job's ring is still in
  // its compute phase at t < 1 s (one chunk alone: compute first), so nothing shares the NICs.
  TwoServers on;
  const auto s = on.run(kDisaggregated);
  const auto& t = s["services"]["tiny"];
  REQUIRE(t.contains("kv_on_network"));
  const auto& kv = t["kv_on_network"];
  CHECK(kv["flows"] == 2);
  CHECK(kv["on_network"] == 2);
  CHECK(kv["used"] == 2);
  const double alone = 2.5e-6 + 896 / 12.5e9;
  CHECK(kv["alone_mean_s"].get<double>() == doctest::Approx(alone).epsilon(1e-12));
  CHECK(kv["measured_mean_s"].get<double>() == doctest::Approx(alone).epsilon(1e-12));
  CHECK(kv["slowdown"].get<double>() == doctest::Approx(1).epsilon(1e-9));
  CHECK(t["kv_transfer_mean_s"].get<double>() == doctest::Approx(alone).epsilon(1e-12));
  CHECK(t["completed"] == 2);
  // Priced on the placement's link instead: each GPU's share of the NIC (2 GPUs per NIC: 6.25e9 B/s),
  // 2 hops of 1 us under one leaf; no kv_on_network block.
  TwoServers link;
  const auto l = link.run(kDisaggregated + "kv_transfers = \"link\"\n")["services"]["tiny"];
  CHECK_FALSE(l.contains("kv_on_network"));
  CHECK(l["kv_transfer_mean_s"].get<double>() == doctest::Approx(2e-6 + 896 / 6.25e9).epsilon(1e-12));
  // Without the network fidelity `auto` prices on the link too.
  TwoServers delay;
  const auto d = delay.run(kDisaggregated, "delay")["services"]["tiny"];
  CHECK_FALSE(d.contains("kv_on_network"));
  CHECK(d["kv_transfer_mean_s"] == l["kv_transfer_mean_s"]);
}

TEST_CASE("kv network: where transfers cannot go on the network, asking for it is an error naming the key") {
  TwoServers bad;
  const std::string net = kDisaggregated + "kv_transfers = \"network\"\n";
  const auto has = [](const std::string& e, const std::string& what) {
    INFO(e);
    CHECK(e.find("kv_transfers") != std::string::npos);
    CHECK(e.find("s.toml") != std::string::npos);
    CHECK(e.find(what) != std::string::npos);
  };
  has(bad.error_of(net, "delay"), "needs execution.fidelity = \"network\"");
  has(bad.error_of(net, "fabric"), "needs execution.fidelity = \"network\"");
  has(bad.error_of("replicas = 2\nkv_transfers = \"network\"\n"), "needs a disaggregated service");
  has(bad.error_of(net + "kv_link_gbps = 8\n"), "kv_link_gbps");
  has(bad.error_of(net, "network", 1), "needs a cluster of two servers or more");
  has(bad.error_of(kDisaggregated + "kv_transfers = \"fabric\"\n"), "auto");
}
