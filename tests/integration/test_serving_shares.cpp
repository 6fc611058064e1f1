// Services holding part of a GPU (issue 14): a MIG slice's or an MPS share's GPU-hours count the
// fraction held, and an MPS replica and a training job given a fraction of the same GPU slow each
// other through the co-location model (execution.colocation_slowdown per co-located occupant).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>

#include "models/hardware/gpu_catalog.hpp"
#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "tests/sim_harness.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/text.hpp"

using namespace fleetsim;

namespace {

const std::string kData = std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/serving";

/// One node with one A100-80GB; optionally a training job J (100 s alone, `milli` of the GPU, at
/// t = 0) and optionally the tiny service (two requests at 0 and 1 ms), colocation_slowdown 0.8.
struct OneGpu {
  std::filesystem::path dir = test::temp_dir("serve-shares");
  ~OneGpu() { std::filesystem::remove_all(dir); }
  nlohmann::ordered_json run(const std::string& service_keys, int milli) {
    std::string toml =
        "[cluster]\n[[cluster.pool]]\nnodes = 1\ngpus_per_node = 1\ngpu = \"A100-80GB\"\n"
        "[scheduler]\npolicy = \"fifo-skip\"\nplacement = \"first-fit\"\n"
        "[execution]\ncolocation_slowdown = 0.8\n[output]\ndir = \"out\"\n";
    if (milli > 0) {
      test::write_file(dir / "jobs.csv",
                       "id,submit,duration,gpus,milli\nJ,0,100,1," + std::to_string(milli) + "\n");
      toml +=
          "[workload]\nformat = \"csv\"\npath = \"jobs.csv\"\n[workload.columns]\nid = \"id\"\n"
          "submit = \"submit\"\nduration = \"duration\"\ngpus = \"gpus\"\ngpu_milli = \"milli\"\n";
    }
    if (!service_keys.empty()) {
      test::write_file(dir / "r.jsonl",
                       "{\"input_toks\": 24, \"output_toks\": 3, \"arrival_time_ns\": 0}\n"
                       "{\"input_toks\": 32, \"output_toks\": 9, \"arrival_time_ns\": 1000000}\n");
      toml += "[[service]]\nname = \"tiny\"\nmodel = \"" + kData + "/tiny-config.json\"\nprofiles = \"" +
              kData + "/tiny/bf16\"\ngpu = \"A100-80GB\"\nkv_cache_gib = 0.001\n" + service_keys +
              "[service.requests]\nformat = \"llmservingsim\"\npath = \"r.jsonl\"\n";
    }
    const Scenario sc = parse_scenario(toml, (dir / "s.toml").string(), dir.string());
    RunOptions opt;
    opt.quiet = true;
    auto summary = run_scenario(sc, opt).summary;
    if (milli > 0) jobs = test::read_jobs_csv(dir / "out" / "jobs.csv");
    return summary;
  }
  /// requests.csv: the last end_s (the span's end; the first arrival is 0).
  double last_end() const {
    std::istringstream in(test::read_file(dir / "out" / "requests.csv"));
    std::string line;
    std::getline(in, line);
    double last = 0;
    while (std::getline(in, line)) last = std::max(last, std::stod(split(line, ',')[4]));
    return last;
  }
  std::map<std::string, test::JobRow> jobs;
};

double num(const nlohmann::ordered_json& j, const char* key) {
  return j[key].get<double>();
}

}  // namespace

TEST_CASE("services holding part of a GPU: GPU-hours count the MIG slice's or MPS share's fraction") {
  // GPU-hours = replicas x span x GPUs per replica / 3600, span = first arrival (0) to last end.
  // Whole GPU: 1; MIG 3g.40gb on an A100: 3 of its 7 compute slices = 3/7; MPS 0.25: 0.25.
  OneGpu whole, mig, mps;
  const auto w = whole.run("replicas = 1\n", 0)["services"]["tiny"];
  CHECK(num(w, "gpu_share_per_replica") == doctest::Approx(1));
  CHECK(num(w, "gpu_hours") == doctest::Approx(whole.last_end() / 3600));
  const auto m = mig.run("mig = \"3g.40gb\"\n", 0)["services"]["tiny"];
  CHECK(num(m, "gpu_share_per_replica") == doctest::Approx(3.0 / 7));
  CHECK(num(m, "gpu_hours") == doctest::Approx(3.0 / 7 * mig.last_end() / 3600));
  const auto p = mps.run("replicas = 2\nmps = 0.25\n", 0)["services"]["tiny"];
  CHECK(num(p, "gpu_share_per_replica") == doctest::Approx(0.25));
  CHECK(num(p, "gpu_hours") == doctest::Approx(2 * 0.25 * mps.last_end() / 3600));
  // Energy: share x (idle_w x on-time + (0.8 x tdp_w - idle_w) x time in steps), busy_share = time in
  // steps / (replicas x span), default [power] busy_fraction 0.8.
  const GpuSpec& a100 = gpu_spec("A100-80GB");
  auto energy = [&](double share, int replicas, double span, const nlohmann::ordered_json& j) {
    const double busy_s = num(j, "busy_share") * replicas * span;
    return share * (replicas * span * a100.idle_w + busy_s * (0.8 * a100.tdp_w - a100.idle_w)) / 3.6e6;
  };
  CHECK(num(w, "gpu_energy_kwh") == doctest::Approx(energy(1, 1, whole.last_end(), w)));
  CHECK(num(m, "gpu_energy_kwh") == doctest::Approx(energy(3.0 / 7, 1, mig.last_end(), m)));
  CHECK(num(p, "gpu_energy_kwh") == doctest::Approx(energy(0.25, 2, mps.last_end(), p)));
  CHECK(num(m, "gpu_energy_kwh") < num(w, "gpu_energy_kwh") * mig.last_end() / whole.last_end());
}

TEST_CASE("services holding part of a GPU: an MPS replica and a fractional training job slow each other") {
  // Alone, J (half the GPU, 100 s) ends at 100 and the replica's steps take their MPS time. Together
  // on the one GPU, each is the other's co-located occupant: J runs at 0.8 and ends at 100 / 0.8 =
  // 125; every step of the replica (both requests end long before 125 s) takes 1 / 0.8 as long, so
  // TTFT, TPOT and E2E all scale by exactly 1.25.
  OneGpu job_alone, service_alone, both;
  job_alone.run("", 500);
  CHECK(job_alone.jobs["J"].end == doctest::Approx(100));
  const auto a = service_alone.run("mps = 0.5\n", 0)["services"]["tiny"];
  const auto s = both.run("mps = 0.5\n", 500);
  const auto b = s["services"]["tiny"];
  CHECK(both.jobs["J"].start == doctest::Approx(0));
  CHECK(both.jobs["J"].end == doctest::Approx(125));
  for (const char* key : {"ttft_mean_s", "ttft_p99_s", "tpot_mean_s", "e2e_mean_s", "e2e_p99_s"})
    CHECK(num(b, key) == doctest::Approx(num(a, key) / 0.8));
  CHECK(num(b, "completed") == 2);
}

TEST_CASE("services holding part of a GPU: a MIG slice is isolated from a training job on its GPU") {
  // 3g.40gb holds 428 of the GPU's 1000 milli; J's 500 fit beside it, but MIG partitions the SMs:
  // neither slows the other.
  OneGpu service_alone, both;
  const auto a = service_alone.run("mig = \"3g\"\n", 0)["services"]["tiny"];
  const auto b = both.run("mig = \"3g\"\n", 500)["services"]["tiny"];
  CHECK(both.jobs["J"].start == doctest::Approx(0));
  CHECK(both.jobs["J"].end == doctest::Approx(100));
  CHECK(num(b, "ttft_mean_s") == doctest::Approx(num(a, "ttft_mean_s")));
  CHECK(num(b, "e2e_p99_s") == doctest::Approx(num(a, "e2e_p99_s")));
}
