// Energy observer and [power] section: hand-computed energy of tiny simulations (one process per
// TEST_CASE: SimGrid's engine is one per process), PUE and price arithmetic, shared GPUs, and bad
// [power] keys naming the key (the CLI exits 2).
#include <doctest/doctest.h>

#include <string>

#include "sim/app/scenario.hpp"
#include "sim/metrics/energy.hpp"
#include "sim/metrics/summary.hpp"
#include "tests/sim_harness.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;

namespace {

constexpr double kJPerKwh = 3.6e6;

// 1 node of 2 A100-80GB (catalog: TDP 400 W, idle 50 W).
constexpr const char* kTwoA100 =
    "[[cluster.pool]]\nname = \"n\"\nnodes = 1\ngpus_per_node = 2\ngpu = \"A100-80GB\"\n";

double kwh(double joules) {
  return joules / kJPerKwh;
}

}  // namespace

TEST_CASE("energy: one 100 s job on 1 of 2 A100s, hand-computed with PUE and price") {
  // Job J arrives at 10 s and runs 100 s on one GPU: the window is [10, 110] s = 100 s.
  //   busy GPU 0.8 x 400 = 320 W, idle GPU 50 W: GPUs (320 + 50) x 100 = 37,000 J; idle 5,000 J
  //   node base 400 W x 100 s = 40,000 J
  //   network: 1 NIC x 20 W + 1 leaf switch x 400 W (one leaf: no spine) = 420 W -> 42,000 J
  //   IT = 119,000 J = 0.0330556 kWh; mean power 1,190 W
  //   facility = IT x 1.5 = 178,500 J = 0.0495833 kWh; cost = 0.2 x 0.0495833 = 0.00991667
  const auto r = test::simulate_tiny(kTwoA100, "id,submit,duration,gpus\nJ,10,100,1\n", "fifo", "first-fit",
                                     "[power]\npue = 1.5\nprice_per_kwh = 0.2\n");
  const auto& s = r.summary;
  CHECK(s["energy_window_s"].get<double>() == doctest::Approx(100));
  CHECK(s["gpu_kwh"].get<double>() == doctest::Approx(kwh(37000)));
  CHECK(s["idle_gpu_kwh"].get<double>() == doctest::Approx(kwh(5000)));
  CHECK(s["node_kwh"].get<double>() == doctest::Approx(kwh(40000)));
  CHECK(s["link_kwh"].get<double>() == doctest::Approx(kwh(42000)));
  CHECK(s["energy_kwh"].get<double>() == doctest::Approx(kwh(119000)));
  CHECK(s["facility_kwh"].get<double>() == doctest::Approx(kwh(178500)));
  CHECK(s["cost"].get<double>() == doctest::Approx(0.2 * kwh(178500)));
  CHECK(s["mean_power_w"].get<double>() == doctest::Approx(1190));
  CHECK(s["energy_per_completed_job_kwh"].get<double>() == doctest::Approx(kwh(119000)));
  CHECK(s["pue"].get<double>() == 1.5);
  const std::string text = format_summary(s);
  CHECK(text.find("energy") != std::string::npos);
  CHECK(text.find("kWh") != std::string::npos);
}

TEST_CASE("energy: two GPU-sharing jobs scale GPU power with the allocated share") {
  // One T4 (catalog: TDP 70 W, idle 10 W), busy = 0.8 x 70 = 56 W. A [0, 100] and B [50, 150] each
  // hold half of it: share 0.5 on [0, 50), 1 on [50, 100), 0.5 on [100, 150].
  //   GPU = 10 x 150 + (56 - 10) x (0.5 x 50 + 1 x 50 + 0.5 x 50) = 1,500 + 4,600 = 6,100 J
  //   idle part = 10 x (0.5 x 50 + 0 + 0.5 x 50) = 500 J; node, NIC and switch power set to 0.
  constexpr const char* kOneT4 =
      "[[cluster.pool]]\nname = \"n\"\nnodes = 1\ngpus_per_node = 1\ngpu = \"T4\"\n";
  const auto r = test::simulate_tiny(
      kOneT4, "id,submit,duration,gpus,milli\nA,0,100,1,500\nB,50,100,1,500\n", "fifo", "first-fit",
      "[power]\nnode_base_w = 0\nnic_w = 0\nswitch_w = 0\n", "gpu_milli = \"milli\"\n");
  REQUIRE(r.jobs.at("B").end == doctest::Approx(150));
  const auto& s = r.summary;
  CHECK(s["energy_window_s"].get<double>() == doctest::Approx(150));
  CHECK(s["gpu_kwh"].get<double>() == doctest::Approx(kwh(6100)));
  CHECK(s["idle_gpu_kwh"].get<double>() == doctest::Approx(kwh(500)));
  CHECK(s["energy_kwh"].get<double>() == doctest::Approx(kwh(6100)));
  CHECK(s["facility_kwh"].get<double>() == doctest::Approx(kwh(6100)));  // default PUE 1
  CHECK(s["cost"].get<double>() == 0);                                   // default price 0
  CHECK(s["energy_per_completed_job_kwh"].get<double>() == doctest::Approx(kwh(6100) / 2));
}

TEST_CASE("energy: a queued job leaves GPUs idle until it starts, busy_fraction scales busy power") {
  // 2 A100s, busy_fraction 1 (400 W). X holds both GPUs on [0, 100]; Y (1 GPU) arrives at 0, waits
  // (fifo), runs [100, 150]. GPUs: 2 x 400 x 100 + (400 + 50) x 50 = 80,000 + 22,500 = 102,500 J;
  // idle 50 x 50 = 2,500 J.
  const auto r =
      test::simulate_tiny(kTwoA100, "id,submit,duration,gpus\nX,0,100,2\nY,0,50,1\n", "fifo", "first-fit",
                          "[power]\nbusy_fraction = 1\nnode_base_w = 0\nnic_w = 0\nswitch_w = 0\n");
  REQUIRE(r.jobs.at("Y").start == doctest::Approx(100));
  CHECK(r.summary["gpu_kwh"].get<double>() == doctest::Approx(kwh(102500)));
  CHECK(r.summary["idle_gpu_kwh"].get<double>() == doctest::Approx(kwh(2500)));
  CHECK(r.summary["mean_power_w"].get<double>() == doctest::Approx(102500.0 / 150));
}

TEST_CASE("energy: the observer integrates exactly between samples, without a simulation") {
  ClusterSpec c = expand_pools({PoolSpec{"n", 2, 4, "H100", 64, 512}}, NetworkSpec{});
  PowerConfig pc;
  pc.node_base_w = 100;
  pc.nic_w = 10;
  pc.switch_w = 0;
  EnergyObserver e(pc, c);
  JobSpec spec;
  JobRecord j;
  j.spec = &spec;
  j.index = 0;
  j.gpu_type = "H100";
  j.gpus = 4;
  e.on_sample({0, 0, 0, 0, 0});
  e.on_job_started(j);
  e.on_sample({0, 4, 1, 0, 0});  // same instant: nothing integrated yet
  e.on_job_preempted(j);
  e.on_sample({30, 0, 0, 1, 0});  // [0, 30): 4 busy (560 W) + 4 idle (70 W)
  e.on_job_started(j);
  e.on_sample({40, 4, 1, 0, 0});  // [30, 40): 8 idle
  e.on_job_finished(j);
  e.on_sample({60, 0, 0, 0, 1});  // [40, 60): 4 busy + 4 idle
  e.on_end(60);
  const EnergyTotals t = e.totals();
  const double gpu_j = 30 * (4 * 560 + 4 * 70) + 10 * (8 * 70) + 20 * (4 * 560 + 4 * 70);
  CHECK(t.window_s == 60);
  CHECK(t.gpu_kwh == doctest::Approx(gpu_j / kJPerKwh));
  CHECK(t.idle_gpu_kwh == doctest::Approx((30 * 4 * 70 + 10 * 8 * 70 + 20 * 4 * 70) / kJPerKwh));
  CHECK(t.node_kwh == doctest::Approx(2 * 100 * 60 / kJPerKwh));
  CHECK(t.link_kwh == doctest::Approx(2 * 10 * 60 / kJPerKwh));
}

TEST_CASE("energy: bad [power] keys are InputErrors naming the key") {
  const std::string base =
      "[cluster]\n[[cluster.pool]]\nnodes = 1\n[workload]\nformat = \"synthetic\"\n[power]\n";
  auto field = [&](const std::string& power) -> std::string {
    try {
      parse_scenario(base + power, "s.toml", ".");
    } catch (const InputError& e) {
      return e.field();
    }
    return "";
  };
  CHECK(field("pue = -1\n") == "power.pue");
  CHECK(field("pue = 0.9\n") == "power.pue");
  CHECK(field("busy_fraction = 0\n") == "power.busy_fraction");
  CHECK(field("busy_fraction = 1.2\n") == "power.busy_fraction");
  CHECK(field("node_base_w = -5\n") == "power.node_base_w");
  CHECK(field("price_per_kwh = -0.1\n") == "power.price_per_kwh");
  CHECK(field("nic_w = -1\n") == "power.nic_w");
  CHECK(field("switch_w = -1\n") == "power.switch_w");
  CHECK(field("pues = 1.2\n") == "power.pues");
  CHECK(field("pue = 1.2\nprice_per_kwh = 0.3\n").empty());
  const Scenario s = parse_scenario(base + "pue = 1.2\nprice_per_kwh = 0.3\n", "s.toml", ".");
  CHECK(s.power.pue == 1.2);
  CHECK(s.power.price_per_kwh == 0.3);
  CHECK(s.power.busy_fraction == 0.8);
}

TEST_CASE("energy: the CLI exits 2 on a negative PUE, naming power.pue") {
  const auto dir = test::temp_dir("energy-cli");
  test::write_file(dir / "s.toml",
                   "[cluster]\n[[cluster.pool]]\nnodes = 1\n[workload]\nformat = \"synthetic\"\njobs = 5\n"
                   "[power]\npue = -1.0\n");
  const auto r = test::run_fleetsim("run " + (dir / "s.toml").string() + " --out " + (dir / "o").string());
  CHECK(r.code == 2);
  CHECK(r.output.find("power.pue") != std::string::npos);
  const auto ok = test::run_fleetsim("run " + (dir / "s.toml").string() +
                                     " --quiet --set power.pue=1.25 --out " + (dir / "o").string());
  CHECK(ok.code == 0);
  const std::string json = test::read_file(dir / "o" / "summary.json");
  CHECK(json.find("\"facility_kwh\"") != std::string::npos);
  CHECK(json.find("\"pue\": 1.25") != std::string::npos);
  std::filesystem::remove_all(dir);
}
