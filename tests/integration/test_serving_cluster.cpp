// Services on the training cluster (issue 14): replicas hold GPUs (whole, TP or MIG slices) that
// training jobs then cannot use; MIG slices scale a replica's speed and memory.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "tests/sim_harness.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;

namespace {

const std::string kData = std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/serving";

/// A cluster of 2 nodes x 4 A100-80GB, two 4-GPU training jobs of 100 s at t = 0, and a tiny service.
struct Shared {
  std::filesystem::path dir = test::temp_dir("serve-cluster");
  ~Shared() { std::filesystem::remove_all(dir); }
  nlohmann::ordered_json run(const std::string& service_keys) {
    test::write_file(dir / "jobs.csv", "id,submit,duration,gpus\nA,0,100,4\nB,0,100,4\n");
    test::write_file(dir / "r.jsonl",
                     "{\"input_toks\": 24, \"output_toks\": 3, \"arrival_time_ns\": 0}\n"
                     "{\"input_toks\": 32, \"output_toks\": 9, \"arrival_time_ns\": 1000000}\n");
    const std::string toml =
        "[cluster]\n[[cluster.pool]]\nnodes = 2\ngpus_per_node = 4\ngpu = \"A100-80GB\"\n"
        "[workload]\nformat = \"csv\"\npath = \"jobs.csv\"\n[workload.columns]\nid = \"id\"\nsubmit = "
        "\"submit\"\n"
        "duration = \"duration\"\ngpus = \"gpus\"\n[scheduler]\npolicy = \"fifo-skip\"\nplacement = "
        "\"first-fit\"\n"
        "[[service]]\nname = \"tiny\"\nmodel = \"" +
        kData + "/" + model + "-config.json\"\nprofiles = \"" + kData + "/" + model +
        "/bf16\"\ngpu = \"A100-80GB\"\n" + service_keys +
        "[service.requests]\nformat = \"llmservingsim\"\npath = \"r.jsonl\"\n[output]\ndir = \"out\"\n" +
        extra;
    const Scenario sc = parse_scenario(toml, (dir / "s.toml").string(), dir.string());
    RunOptions opt;
    opt.quiet = true;
    auto summary = run_scenario(sc, opt).summary;
    jobs = test::read_jobs_csv(dir / "out" / "jobs.csv");
    return summary;
  }
  std::map<std::string, test::JobRow> jobs;
  std::string model = "tiny";  ///< tests/data/serving/<model>/bf16 and <model>-config.json
  std::string extra;           ///< more top-level tables
};

std::string error_of(Shared& s, const std::string& keys) {
  try {
    s.run(keys);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("services on the cluster: replicas hold GPUs that training jobs then wait for") {
  Shared none;
  none.run("replicas = 1\nmig = \"1g\"\n");  // one 1g slice on node 0: job A (first-fit) takes node 1
  CHECK(none.jobs["A"].end == doctest::Approx(100));
  CHECK(none.jobs["B"].start == doctest::Approx(100));  // node 0 has 3 whole GPUs free + a slice: B waits
  Shared tp;
  tp.model = "tiny-moe";  // profiled at TP 1 and 2
  const auto s = tp.run("replicas = 1\ntensor_parallel = 2\nkv_cache_gib = 0.001\n");  // 2 GPUs of node 0
  CHECK(s["services_gpus_held"] == 2);
  CHECK(tp.jobs["A"].start == doctest::Approx(0));
  CHECK(tp.jobs["B"].start == doctest::Approx(100));
  CHECK(tp.jobs["B"].end == doctest::Approx(200));
  CHECK(s["services"]["tiny"]["completed"] == 2);
}

TEST_CASE("services on the cluster: MIG 7g equals the whole GPU, 1g is never faster than 2g") {
  Shared whole, g7, g2, g1;
  const auto w = whole.run("kv_cache_gib = 0.001\n")["services"]["tiny"];
  const auto s7 = g7.run("mig = \"7g.80gb\"\nkv_cache_gib = 0.001\n")["services"]["tiny"];
  const auto s2 = g2.run("mig = \"2g\"\nkv_cache_gib = 0.001\n")["services"]["tiny"];
  const auto s1 = g1.run("mig = \"1g.10gb\"\nkv_cache_gib = 0.001\n")["services"]["tiny"];
  CHECK(s7["ttft_mean_s"].get<double>() == doctest::Approx(w["ttft_mean_s"].get<double>()));
  CHECK(s7["e2e_p99_s"].get<double>() == doctest::Approx(w["e2e_p99_s"].get<double>()));
  CHECK(s1["ttft_mean_s"].get<double>() >= s2["ttft_mean_s"].get<double>());
  CHECK(s1["e2e_mean_s"].get<double>() >= s2["e2e_mean_s"].get<double>());
  // A 2g slice has 2/7 of the compute: a lone request's TTFT is 3.5x the whole GPU's.
  CHECK(s2["ttft_p50_s"].get<double>() > w["ttft_p50_s"].get<double>());
  CHECK(s2["mig"] == "2g.20gb");
}

TEST_CASE("services on the cluster: unknown MIG profiles and replicas that do not fit are input errors") {
  Shared s;
  std::string m = error_of(s, "mig = \"5g\"\n");
  CHECK(m.find("s.toml") != std::string::npos);
  CHECK(
      m.find("unknown MIG profile '5g' for A100-80GB (valid: 1g.10gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb)") !=
      std::string::npos);
  m = error_of(s, "mig = \"2g\"\ntensor_parallel = 2\n");
  CHECK(m.find("must be 1 with a MIG instance") != std::string::npos);
  s.model = "tiny-moe";  // 5 replicas of TP 2 on 8 GPUs: the fifth does not fit
  m = error_of(s, "replicas = 5\ntensor_parallel = 2\nkv_cache_gib = 0.001\n");
  CHECK(m.find("replica 5") != std::string::npos);
  CHECK(m.find("does not fit in the cluster") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(s.dir / "out" / "jobs.csv"));
}

TEST_CASE("services on an unprofiled GPU: extrapolated through the catalog, and labelled so") {
  // The tiny profile, declared as measured on an A10 (600 GB/s, 125 TFLOP/s BF16), served on an
  // A100-80GB (2,039 GB/s, 312 TFLOP/s): decode steps are memory-bound on both (1 token per weight
  // byte is far below either ridge point), so every part of a decode step scales by 600 / 2039.
  const auto dir = test::temp_dir("serve-extrapolate");
  std::filesystem::copy(kData + "/tiny", dir / "tiny", std::filesystem::copy_options::recursive);
  {
    std::ofstream meta(dir / "tiny" / "bf16" / "meta.yaml", std::ios::app);
    meta << "hardware: A10\n";
  }
  test::write_file(dir / "r.jsonl", "{\"input_toks\": 24, \"output_toks\": 9, \"arrival_time_ns\": 0}\n");
  auto run = [&](const std::string& gpu) {
    const std::string toml =
        "[cluster]\n[[cluster.pool]]\nnodes = 1\ngpus_per_node = 1\ngpu = \"" + gpu +
        "\"\n[[service]]\nname = \"tiny\"\nmodel = \"" + kData + "/tiny-config.json\"\nprofiles = \"" +
        (dir / "tiny" / "bf16").string() + "\"\ngpu = \"" + gpu +
        "\"\nkv_cache_gib = 0.001\n[service.requests]\nformat = \"llmservingsim\"\npath = \"r.jsonl\"\n"
        "[output]\ndir = \"out-" +
        gpu + "\"\n";
    const Scenario sc = parse_scenario(toml, (dir / "s.toml").string(), dir.string());
    RunOptions opt;
    opt.quiet = true;
    return run_scenario(sc, opt).summary["services"]["tiny"];
  };
  const auto a10 = run("A10");
  const auto a100 = run("A100-80GB");
  CHECK(a10["extrapolated"] == false);
  CHECK(a100["extrapolated"] == true);
  CHECK(a100["profiled_gpu"] == "A10");
  CHECK(a100["tpot_mean_s"].get<double>() == doctest::Approx(a10["tpot_mean_s"].get<double>() * 600 / 2039));
  CHECK(a100["ttft_mean_s"].get<double>() < a10["ttft_mean_s"].get<double>());
  std::filesystem::remove_all(dir);
}

TEST_CASE("services on the cluster: MPS shares - 1.0 is the whole GPU, two 0.5 shares are slower") {
  Shared whole, whole2, full, half, half_noisy;
  const auto w = whole.run("kv_cache_gib = 0.001\n")["services"]["tiny"];
  const auto w2 = whole2.run("replicas = 2\nkv_cache_gib = 0.001\n")["services"]["tiny"];
  const auto f = full.run("mps = 1.0\nkv_cache_gib = 0.001\n")["services"]["tiny"];
  CHECK(f["ttft_mean_s"].get<double>() == doctest::Approx(w["ttft_mean_s"].get<double>()));
  CHECK(f["e2e_p99_s"].get<double>() == doctest::Approx(w["e2e_p99_s"].get<double>()));
  // Two replicas at 0.5 on one GPU (first-fit packs them), each request alone on its replica (round-
  // robin): half the compute doubles every step; with colocation_slowdown 0.8 for the other tenant,
  // 2 / 0.8 = 2.5x two whole GPUs.
  const auto h = half.run("replicas = 2\nmps = 0.5\nkv_cache_gib = 0.001\n");
  CHECK(h["services_gpus_held"].get<double>() == doctest::Approx(1.0));
  CHECK(h["services"]["tiny"]["ttft_mean_s"].get<double>() ==
        doctest::Approx(2 * w2["ttft_mean_s"].get<double>()));
  half_noisy.extra = "[execution]\ncolocation_slowdown = 0.8\n";
  const auto n = half_noisy.run("replicas = 2\nmps = 0.5\nkv_cache_gib = 0.001\n")["services"]["tiny"];
  CHECK(n["ttft_mean_s"].get<double>() == doctest::Approx(2.5 * w2["ttft_mean_s"].get<double>()));
  CHECK(n["e2e_mean_s"].get<double>() == doctest::Approx(2.5 * w2["e2e_mean_s"].get<double>()));
  CHECK(n["e2e_mean_s"].get<double>() > w["e2e_mean_s"].get<double>());
  Shared bad;
  CHECK(error_of(bad, "mps = 1.5\n").find("must be in (0, 1]") != std::string::npos);
  CHECK(error_of(bad, "mps = 0.5\nmig = \"1g\"\n").find("give mig or mps, not both") != std::string::npos);
}

TEST_CASE("services on the cluster: disaggregated KV moves over NVLink within a node, the NIC between") {
  // tiny: 2 layers x 1 KV head x 4 dims x K,V x 2 bytes = 32 B of KV per token; prompts of 24 and 32
  // tokens: 896 B on average.
  Shared same, cross;
  const auto s =
      same.run("prefill_replicas = 1\ndecode_replicas = 1\nkv_cache_gib = 0.001\n")["services"]["tiny"];
  CHECK(s["prefill_replicas"] == 1);
  CHECK(s["decode_replicas"] == 1);
  CHECK(s["completed"] == 2);
  // Both on node 0: 2400 Gbit/s = 3e11 B/s, one hop of 1 us.
  CHECK(s["kv_transfer_mean_s"].get<double>() / (1e-6 + 896 / 3e11) == doctest::Approx(1));
  // Four prefill replicas fill node 0; the decode replica lands on node 1: a GPU's share of the
  // node's 100 Gbit/s NIC (4 GPUs per NIC) = 3.125e9 B/s, two hops under one leaf.
  const auto c =
      cross.run("prefill_replicas = 4\ndecode_replicas = 1\nkv_cache_gib = 0.001\n")["services"]["tiny"];
  CHECK(c["kv_transfer_mean_s"].get<double>() / (2e-6 + 896 / 3.125e9) == doctest::Approx(1));
  // A set kv_link_gbps replaces the placement: 8 Gbit/s = 1e9 B/s per GPU, one default hop of 1 us.
  Shared fixed;
  const auto k = fixed.run(
      "prefill_replicas = 1\ndecode_replicas = 1\nkv_link_gbps = 8\nkv_cache_gib = 0.001\n")["services"]
                                                                                            ["tiny"];
  CHECK(k["kv_transfer_mean_s"].get<double>() / (1e-6 + 896 / 1e9) == doctest::Approx(1));
  Shared bad;
  CHECK(error_of(bad, "prefill_replicas = 1\n").find("must both be >= 1") != std::string::npos);
  CHECK(error_of(bad, "replicas = 2\nprefill_replicas = 1\ndecode_replicas = 1\n")
            .find("give prefill_replicas") != std::string::npos);
  // The autoscaler scales each group by its own keys.
  CHECK(error_of(bad, "prefill_replicas = 1\ndecode_replicas = 2\nmin_replicas = 1\n")
            .find("give min_prefill_replicas and/or min_decode_replicas instead") != std::string::npos);
  CHECK(error_of(bad, "prefill_replicas = 1\ndecode_replicas = 2\nmin_decode_replicas = 3\n")
            .find("must be in 0..decode_replicas") != std::string::npos);
  // counts beyond an int are errors naming the key (they wrapped to 1 and could pass)
  for (const std::string key : {"min_decode_replicas", "min_replicas", "replicas", "prefill_replicas"}) {
    CAPTURE(key);
    const std::string others = key == "min_decode_replicas" ? "prefill_replicas = 1\ndecode_replicas = 2\n"
                               : key == "min_replicas"      ? "replicas = 2\n"
                               : key == "prefill_replicas"  ? "decode_replicas = 2\n"
                                                            : "";
    const std::string e = error_of(bad, others + key + " = 4294967297\n");
    INFO(e);
    CHECK(e.find(key + "'") != std::string::npos);
    CHECK(e.find("out of range: 4294967297 (must fit in a 32-bit int)") != std::string::npos);
  }
  CHECK(error_of(bad, "min_decode_replicas = 1\n").find("only with prefill_replicas and decode_replicas") !=
        std::string::npos);
  Shared scaled;
  const auto a =
      scaled.run("prefill_replicas = 1\ndecode_replicas = 2\nmin_decode_replicas = 1\nkv_cache_gib = 0.001\n")
          ["services"]["tiny"];
  CHECK(a["autoscaled"] == true);
  CHECK(a["completed"] == 2);
  CHECK(a["peak_replicas"] == 2);  // two requests never queue: the second decode replica never starts
}
