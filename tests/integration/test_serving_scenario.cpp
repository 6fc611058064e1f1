// [[service]] in a scenario (issue 14): the tiny hand-made profile (tests/data/serving) end to end,
// bad input, and accuracy against measured vLLM runs (../shared/data/serving/llmservingsim/runs).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <simdjson.h>
#include "models/collective/collective_model.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "models/serving/step_model.hpp"
#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "sim/metrics/summary.hpp"
#include "sim/serving/sizing.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

using namespace fleetsim;

namespace {

const std::string kData = std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/serving";

std::string service_toml(const std::string& extra, const std::string& requests_path) {
  return "[cluster]\n[[cluster.pool]]\nnodes = 1\ngpus_per_node = 1\ngpu = \"A10\"\n"
         "[[service]]\nname = \"tiny\"\nmodel = \"" +
         kData + "/tiny-config.json\"\nprofiles = \"" + kData +
         "/tiny/bf16\"\ngpu = \"A10\"\nkv_cache_gib = 0.001\n" + extra +
         "[service.requests]\nformat = \"llmservingsim\"\npath = \"" + requests_path +
         "\"\n[output]\ndir = \"out\"\n";
}

std::vector<std::vector<std::string>> read_csv_rows(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) rows.push_back(split(line, ','));
  return rows;
}

}  // namespace

TEST_CASE("serving scenario: an idle server's TTFT is one prefill of the profiled model, end to end") {
  const auto dir = test::temp_dir("serve-tiny");
  // Two requests far apart: each finds the server idle.
  test::write_file(dir / "r.jsonl",
                   "{\"input_toks\": 24, \"output_toks\": 3, \"arrival_time_ns\": 0}\n"
                   "{\"input_toks\": 9, \"output_toks\": 1, \"arrival_time_ns\": 5000000000}\n");
  const Scenario sc =
      parse_scenario(service_toml("", (dir / "r.jsonl").string()), (dir / "s.toml").string(), dir.string());
  RunOptions opt;
  opt.quiet = true;
  const auto summary = run_scenario(sc, opt).summary;
  const auto model = ServingStepModel::load(kData + "/tiny/bf16", kData + "/tiny-config.json", 1);
  const double prefill24 = model->step_s({{{24, 0}}, {}});
  const double decode = model->step_s({{}, {24}});
  const double decode2 = model->step_s({{}, {25}});
  const double prefill9 = model->step_s({{{9, 0}}, {}});
  const auto rows = read_csv_rows(dir / "out" / "requests.csv");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0][0] == "service");
  CHECK(rows[1][0] == "tiny");
  CHECK(std::stod(rows[1][7]) == doctest::Approx(prefill24));                     // TTFT
  CHECK(std::stod(rows[1][4]) == doctest::Approx(prefill24 + decode + decode2));  // end
  CHECK(std::stod(rows[1][8]) == doctest::Approx((decode + decode2) / 2));        // TPOT
  CHECK(std::stod(rows[2][2]) == doctest::Approx(5.0));
  CHECK(std::stod(rows[2][7]) == doctest::Approx(prefill9));
  const auto& s = summary["services"]["tiny"];
  CHECK(s["requests"] == 2);
  CHECK(s["completed"] == 2);
  CHECK(s["ttft_mean_s"].get<double>() == doctest::Approx((prefill24 + prefill9) / 2));
  // kv_cache_gib = 0.001 GiB / 32 bytes per token / 16 per block.
  CHECK(s["kv_blocks_per_replica"] == static_cast<long>(1024.0 * 1024 * 1024 * 0.001 / 32) / 16);
  std::filesystem::remove_all(dir);
}

TEST_CASE("serving scenario: bad input names file, line and key, and writes nothing") {
  const auto dir = test::temp_dir("serve-bad");
  test::write_file(dir / "r.jsonl", "{\"input_toks\": 24, \"output_toks\": 3, \"arrival_time_ns\": 0}\n");
  const std::string good = (dir / "r.jsonl").string();
  auto error_of = [&](const std::string& toml) -> std::string {
    try {
      const Scenario sc = parse_scenario(toml, (dir / "s.toml").string(), dir.string());
      RunOptions opt;
      opt.quiet = true;
      run_scenario(sc, opt);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  auto has = [](const std::string& m, const std::string& part) { return m.find(part) != std::string::npos; };
  std::string m = error_of(service_toml("routing = \"random\"\n", good));
  CHECK(has(m, "s.toml:12"));
  CHECK(has(m, "least-outstanding"));
  m = error_of(service_toml("tensor_parallel = 4\n", good));  // tiny has 2 attention heads
  CHECK(has(m, "tensor_parallel"));
  CHECK(has(m, "num_attention_heads = 2"));
  // Llama-3.1-8B's weights do not fit a 16 GiB T4.
  m = error_of("[cluster]\n[[cluster.pool]]\nnodes = 1\n[[service]]\nname = \"x\"\nmodel = \"" + kData +
               "/tiny-config.json\"\nprofiles = \"" + kData +
               "/tiny/bf16\"\ngpu = \"T4\"\nnon_kv_reserve_gib = 20\n" +
               "[service.requests]\nformat = \"llmservingsim\"\npath = \"" + good + "\"\n");
  CHECK(has(m, "does not fit"));
  m = error_of(service_toml("gpu_memory_utilization = 1.5\n", good));
  CHECK(has(m, "gpu_memory_utilization"));
  test::write_file(dir / "bad.jsonl",
                   "{\"input_toks\": 24, \"output_toks\": 3, \"arrival_time_ns\": 10}\n"
                   "{\"input_toks\": -1, \"output_toks\": 3, \"arrival_time_ns\": 20}\n");
  m = error_of(service_toml("", (dir / "bad.jsonl").string()));
  CHECK(has(m, "bad.jsonl:2"));
  CHECK_FALSE(std::filesystem::exists(dir / "out" / "requests.csv"));
  CHECK_FALSE(std::filesystem::exists(dir / "out" / "summary.json"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("serving scenario: TP 2 on a GPU without NVLink prices its all-reduces on PCIe") {
  const auto dir = test::temp_dir("serve-tp2");
  test::write_file(dir / "r.jsonl", "{\"input_toks\": 24, \"output_toks\": 1, \"arrival_time_ns\": 0}\n");
  const std::string toml =
      "[cluster]\n[[cluster.pool]]\nnodes = 1\ngpus_per_node = 2\ngpu = \"A10\"\n[[service]]\nname = "
      "\"moe\"\nmodel = \"" +
      kData + "/tiny-moe-config.json\"\nprofiles = \"" + kData +
      "/tiny-moe/bf16\"\ngpu = \"A10\"\nkv_cache_gib = 0.001\ntensor_parallel = 2\n"
      "[service.requests]\nformat = \"llmservingsim\"\npath = \"" +
      (dir / "r.jsonl").string() + "\"\n[output]\ndir = \"out\"\n";
  RunOptions opt;
  opt.quiet = true;
  const auto summary =
      run_scenario(parse_scenario(toml, (dir / "s.toml").string(), dir.string()), opt).summary;
  // The A10 has no NVLink: PCIe at fabric_for's 24 GB/s (the catalog gives the A10 no pcie_gbs).
  ServingStepOptions pcie;
  pcie.tp_fabric = fabric_for(gpu_spec("A10"), 200, 1, 1, 24);
  const auto m = ServingStepModel::load(kData + "/tiny-moe/bf16", kData + "/tiny-moe-config.json", 2, pcie);
  const BatchShape prefill{{{24, 0}}, {}};
  CHECK(summary["services"]["moe"]["ttft_mean_s"].get<double>() == doctest::Approx(m->step_s(prefill)));
  const auto nvlink = ServingStepModel::load(kData + "/tiny-moe/bf16", kData + "/tiny-moe-config.json", 2);
  CHECK(nvlink->breakdown(prefill).allreduce_s < m->breakdown(prefill).allreduce_s);
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "serving scenario: data_parallel ranks hold tensor_parallel GPUs each, an MoE model's step together") {
  const auto dir = test::temp_dir("serve-dp");
  test::write_file(dir / "r.jsonl",
                   "{\"input_toks\": 24, \"output_toks\": 3, \"arrival_time_ns\": 0}\n"
                   "{\"input_toks\": 9, \"output_toks\": 2, \"arrival_time_ns\": 1000}\n"
                   "{\"input_toks\": 16, \"output_toks\": 4, \"arrival_time_ns\": 2000}\n");
  auto toml = [&](int gpus, const std::string& model, const std::string& extra) {
    return "[cluster]\n[[cluster.pool]]\nnodes = 1\ngpus_per_node = " + std::to_string(gpus) +
           "\ngpu = \"A10\"\n[[service]]\nname = \"moe\"\nmodel = \"" + kData + "/" + model +
           "-config.json\"\nprofiles = \"" + kData + "/" + model +
           "/bf16\"\ngpu = \"A10\"\nkv_cache_gib = 0.001\ndata_parallel = 2\n" + extra +
           "[service.requests]\nformat = \"llmservingsim\"\npath = \"" + (dir / "r.jsonl").string() +
           "\"\n[output]\ndir = \"out\"\n";
  };
  RunOptions opt;
  opt.quiet = true;
  const Scenario sc = parse_scenario(toml(2, "tiny-moe", "expert_parallel = true\n"),
                                     (dir / "s.toml").string(), dir.string());
  const auto summary = run_scenario(sc, opt).summary;
  const auto& s = summary["services"]["moe"];
  CHECK(s["replicas"] == 1);
  CHECK(s["data_parallel"] == 2);
  CHECK(s["expert_parallel"] == true);
  CHECK(s["completed"] == 3);
  CHECK(s["gpu_share_per_replica"].get<double>() == doctest::Approx(2));
  // Least loaded: the first request to rank 0, the second to the idle rank 1, the third to rank 0.
  const auto rows = read_csv_rows(dir / "out" / "requests.csv");
  REQUIRE(rows.size() == 4);
  CHECK(rows[1][10] == "0");
  CHECK(rows[2][10] == "1");
  CHECK(rows[3][10] == "0");
  // In lockstep the two ranks' first tokens come at step ends of one clock: the second request's
  // prefill starts only when the first's ends.
  CHECK(std::stod(rows[2][3]) > std::stod(rows[1][3]));
  // GPU-hours: 2 GPUs from the first arrival (0) to the last end.
  double last = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) last = std::max(last, std::stod(rows[i][4]));
  CHECK(s["gpu_hours"].get<double>() == doctest::Approx(2 * last / 3600).epsilon(1e-6));
  auto error_of = [&](const std::string& text) -> std::string {
    try {
      run_scenario(parse_scenario(text, (dir / "s.toml").string(), dir.string()), opt);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  auto has = [](const std::string& m, const std::string& part) { return m.find(part) != std::string::npos; };
  std::string m = error_of(toml(2, "tiny", "expert_parallel = true\n"));
  CHECK(has(m, "expert_parallel"));
  CHECK(has(m, "no experts"));
  m = error_of(toml(2, "tiny-moe", "mps = 0.5\n"));
  CHECK(has(m, "mps"));
  CHECK(has(m, "data_parallel"));
  m = error_of(toml(1, "tiny-moe", ""));  // 2 ranks x 1 GPU on a 1-GPU cluster
  CHECK(has(m, "does not fit"));
  std::filesystem::remove_all(dir);
}

namespace {

struct Stats {
  double ttft_mean, ttft_p99, tpot_mean, tpot_p99, e2e_mean, e2e_p99;
};

double p99(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const double pos = 0.99 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

/// The measured run's figures from its requests.jsonl (arrival = queued_ts).
Stats measured(const std::string& jsonl) {
  std::vector<double> ttft, tpot, e2e;
  std::ifstream in(jsonl);
  std::string line;
  simdjson::dom::parser parser;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const simdjson::dom::object o = parser.parse(line);
    const double q = o["queued_ts"].get_double(), f = o["first_token_ts"].get_double(),
                 l = o["last_token_ts"].get_double();
    const auto out = static_cast<double>(o["output_toks"].get_int64());
    ttft.push_back(f - q);
    tpot.push_back(out > 1 ? (l - f) / (out - 1) : 0);
    e2e.push_back(l - q);
  }
  return {mean(ttft), p99(ttft), mean(tpot), p99(tpot), mean(e2e), p99(e2e)};
}

Stats simulated(const std::string& hw, const std::vector<std::string>& sets = {}) {
  const auto dir = test::temp_dir("serve-" + hw);
  std::vector<std::string> all = sets;
  all.push_back("output.dir=" + (dir / "out").string());
  const Scenario sc = load_scenario(
      std::string(FLEETSIM_SOURCE_DIR) + "/scenarios/serving-llama8b-" + lower(hw) + ".toml", all);
  RunOptions opt;
  opt.quiet = true;
  const auto s = run_scenario(sc, opt).summary["services"]["llama-3.1-8b"];
  std::filesystem::remove_all(dir);
  CHECK(s["completed"] == 300);
  return {s["ttft_mean_s"], s["ttft_p99_s"], s["tpot_mean_s"],
          s["tpot_p99_s"],  s["e2e_mean_s"], s["e2e_p99_s"]};
}

}  // namespace

TEST_CASE("serving accuracy: Llama-3.1-8B on RTX PRO 6000, TTFT, TPOT and E2E mean and p99 within 5%") {
  const std::string run = "serving/llmservingsim/runs/RTXPRO6000-Llama-3.1-8B/requests.jsonl";
  test::require_shared(run);
  const Stats m = measured(test::shared_path(run));
  const Stats s = simulated("RTXPRO6000");
  CHECK(s.ttft_mean == doctest::Approx(m.ttft_mean).epsilon(0.05));
  CHECK(s.ttft_p99 == doctest::Approx(m.ttft_p99).epsilon(0.05));
  CHECK(s.tpot_mean == doctest::Approx(m.tpot_mean).epsilon(0.05));
  CHECK(s.tpot_p99 == doctest::Approx(m.tpot_p99).epsilon(0.05));
  CHECK(s.e2e_mean == doctest::Approx(m.e2e_mean).epsilon(0.05));
  CHECK(s.e2e_p99 == doctest::Approx(m.e2e_p99).epsilon(0.05));
}

TEST_CASE(
    "serving accuracy: Llama-3.1-8B on RTX 4090 (KV-bound), TTFT, TPOT and E2E mean and p99 within 5%") {
  // KV-bound: ~40 requests run, ~200 wait most of the run. Within 5% because the engine admits a
  // waiting request only when its whole prompt fits (vLLM 0.19's scheduler_reserve_full_isl) and a
  // preempted request finds its cached blocks again (prefix caching, on in the run): without either,
  // TTFT was +6.6% / +12% (p99) and TPOT +10%.
  const std::string run = "serving/llmservingsim/runs/RTX4090-Llama-3.1-8B/requests.jsonl";
  test::require_shared(run);
  const Stats m = measured(test::shared_path(run));
  auto within = [&](const Stats& s) {
    CHECK(s.ttft_mean == doctest::Approx(m.ttft_mean).epsilon(0.05));
    CHECK(s.ttft_p99 == doctest::Approx(m.ttft_p99).epsilon(0.05));
    CHECK(s.tpot_mean == doctest::Approx(m.tpot_mean).epsilon(0.05));
    CHECK(s.tpot_p99 == doctest::Approx(m.tpot_p99).epsilon(0.05));
    CHECK(s.e2e_mean == doctest::Approx(m.e2e_mean).epsilon(0.05));
    CHECK(s.e2e_p99 == doctest::Approx(m.e2e_p99).epsilon(0.05));
  };
  within(simulated("RTX4090"));
  // Not tuned to fleetsim's KV estimate (2,632 blocks): with vLLM's own count from the run's meta.json
  // (2,588 blocks of 16 tokens x 128 KiB = 5.0546875 GiB) it holds too.
  within(simulated("RTX4090", {"service.0.kv_cache_gib=5.0546875"}));
}

TEST_CASE(
    "serving sizing: attainment never falls as replicas double, and the fewest meeting it is reported") {
  const auto dir = test::temp_dir("serve-size");
  const std::string toml =
      "[cluster]\n[[cluster.pool]]\nnodes = 1\ngpus_per_node = 1\ngpu = \"A10\"\n"
      "[[service]]\nname = \"tiny\"\nmodel = \"" +
      kData + "/tiny-config.json\"\nprofiles = \"" + kData +
      "/tiny/bf16\"\ngpu = \"A10\"\nkv_cache_gib = 0.0001\nmax_num_seqs = 4\nslo_ttft_ms = 1\nslo_tpot_ms = "
      "1\n"
      "[service.requests]\nformat = \"generator\"\narrival = \"poisson\"\nrate_per_s = 3000\nrequests = 600\n"
      "input_tokens = 30\noutput_tokens = 20\n";
  const Scenario sc = parse_scenario(toml, (dir / "s.toml").string(), dir.string());
  const ServiceSpec spec = service_spec(sc.services[0].service, sc.services[0].requests, 0, sc.seed, sc.file);
  const SizingResult r = size_service(spec, 0.95, {1, 2}, 32);
  double prev = -1, prev_load = 0;
  int n = 0;
  for (const auto& p : r.curve) {
    if (p.load != prev_load) prev = -1;
    prev_load = p.load;
    CHECK(p.attainment >= prev - 1e-12);
    prev = p.attainment;
    if (++n > 1) CHECK(p.gpus == p.replicas);
  }
  REQUIRE(r.fewest.size() == 2);
  CHECK(r.fewest[0] > 1);
  CHECK(r.fewest[1] >= r.fewest[0]);
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "serving accuracy: RTX 4090 profiles extrapolated to the RTX PRO 6000 run (catalog roofline transfer)") {
  // sim/serving/README.md: TTFT -26%, TPOT -9%, E2E -14% on the means; bounds hold today's figures.
  const std::string run = "serving/llmservingsim/runs/RTXPRO6000-Llama-3.1-8B/requests.jsonl";
  const std::string profile = "serving/llmservingsim/perf/RTX4090/meta-llama/Llama-3.1-8B/bf16";
  test::require_shared(run);
  test::require_shared(profile);
  const Stats m = measured(test::shared_path(run));
  const Stats s = simulated("RTXPRO6000", {"service.0.profiles=" + test::shared_path(profile)});
  CHECK(s.tpot_mean == doctest::Approx(m.tpot_mean).epsilon(0.12));
  CHECK(s.e2e_mean == doctest::Approx(m.e2e_mean).epsilon(0.17));
  CHECK(s.ttft_mean == doctest::Approx(m.ttft_mean).epsilon(0.30));
}

TEST_CASE("serving scenario: the terminal table of a serving-only run lists every service's figures") {
  nlohmann::ordered_json s;
  s["jobs"] = 0;
  s["wall_s"] = 0.25;
  s["services"]["chat"] = {{"requests", 300},       {"ttft_mean_s", 1.5},      {"ttft_p99_s", 4.25},
                           {"tpot_mean_s", 0.0325}, {"tpot_p99_s", 0.0561},    {"e2e_mean_s", 28.2},
                           {"e2e_p99_s", 37.64},    {"slo_attainment", 0.875}, {"goodput_rps", 3.5},
                           {"gpu_hours", 0.02}};
  const std::string text = format_summary(s);
  CHECK(text.find("JCT") == std::string::npos);  // no empty training summary
  CHECK(text.find("chat") != std::string::npos);
  for (const char* figure :
       {"     300", "1.500 / 4.250", "32.5 / 56.1", "28.20 / 37.64", "87.5 %", "3.50", "0.02"})
    CHECK_MESSAGE(text.find(figure) != std::string::npos, figure, "\n", text);
}
