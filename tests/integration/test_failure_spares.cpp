// Hot spares and planned maintenance drains (issue 15): hand-derived job completion times on tiny
// clusters of 8-GPU nodes with a replayed CSV fault trace, the summary's spares and maintenance
// blocks, and bad input. Costs everywhere: detection 30 s, restart 60 s, restore 20 s.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "models/hardware/gpu_catalog.hpp"
#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "tests/failure_case.hpp"
#include "tests/sim_harness.hpp"
#include "tests/test_util.hpp"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

const std::string kCosts = "[failures]\ndetection_s = 30\nrestart_s = 60\nrestore_s = 20\n";

FailRun run_case(int nodes, const std::string& trace, const std::string& faults, const std::string& keys) {
  return run_with_faults(nodes, trace, faults, kCosts + keys);
}

const std::string kTrace = "trace = \"faults.csv\"\ntrace_format = \"csv\"\n";

}  // namespace

TEST_CASE("a held spare is out of service: the second of two jobs waits though a node is idle") {
  const auto r = run_case(2, "id,submit,duration,gpus\na,0,1000,8\nb,0,1000,8\n",
                          "node,start,end,component\n", kTrace + "spare_nodes = 1\n");
  CHECK(r.jobs.at("a").end == doctest::Approx(1000));
  CHECK(r.jobs.at("b").start == doctest::Approx(1000));
  CHECK(r.jobs.at("b").end == doctest::Approx(2000));
  CHECK(r.summary["failures"]["spares"]["nodes"] == 1);
  CHECK(r.summary["failures"]["spares"]["used"] == 0);
  CHECK(r.summary["failures"]["spares"]["held_at_end"] == 1);
}

TEST_CASE("a failure brings the spare in at once, and the repaired node becomes the spare") {
  // j fails at 560 on node 0 (no checkpoints): the spare (node 1) joins and j restarts there at
  // once: 560 + 110 + 1000 = 1670 s. Node 0 is repaired at 2000 and held as the new spare, so of
  // k1 and k2 (2100 s, 100 s each) only one runs at a time: 2200 and 2300 s.
  const auto r = run_case(2, "id,submit,duration,gpus\nj,0,1000,8\nk1,2100,100,8\nk2,2100,100,8\n",
                          "node,start,end,component\nn0,560,2000,gpu\n", kTrace + "spare_nodes = 1\n");
  CHECK(r.jobs.at("j").end == doctest::Approx(1670));
  CHECK(r.jobs.at("k1").end == doctest::Approx(2200));
  CHECK(r.jobs.at("k2").end == doctest::Approx(2300));
  CHECK(r.summary["failures"]["spares"]["used"] == 1);
  CHECK(r.summary["failures"]["spares"]["failures_without_spare"] == 0);
  CHECK(r.summary["failures"]["spares"]["held_at_end"] == 1);
}

TEST_CASE("a second failure with the spare pool empty: counted, and the job waits for a node") {
  // 3 nodes, node 2 the spare. Node 0 fails at 100: the spare joins, j restarts on node 1 (first
  // fit) at 100. Node 1 fails at 300: no spare left; j restarts on node 2 at 300: 300 + 110 + 1000.
  const auto r =
      run_case(3, "id,submit,duration,gpus\nj,0,1000,8\n",
               "node,start,end,component\nn0,100,9000,gpu\nn1,300,9000,hbm\n", kTrace + "spare_nodes = 1\n");
  CHECK(r.jobs.at("j").end == doctest::Approx(1410));
  CHECK(r.jobs.at("j").restarts == 2);
  CHECK(r.summary["failures"]["spares"]["used"] == 1);
  CHECK(r.summary["failures"]["spares"]["failures_without_spare"] == 1);
  CHECK(r.summary["failures"]["spares"]["held_at_end"] == 0);
}

TEST_CASE("planned maintenance windows drain nodes in turn, and drained jobs lose no work") {
  // Windows every 360 s take one node for 100 s, rolling 0, 1, 0, ... Each drain checkpoints j
  // first and costs restart + restore = 80 s (no detection). j (1000 s) on node 0 is drained at
  // 360 (0.36 done) and restarts on node 1: 80 s then work; drained again at 720 (0.64 done) and
  // restarts on node 0; drained at 1080 (0.92 done), restarts on node 1: 1080 + 80 + 80 = 1240 s.
  const auto r =
      run_case(2, "id,submit,duration,gpus\nj,0,1000,8\n", "node,start,end,component\n",
               "maintenance_interval_h = 0.1\nmaintenance_nodes = 1\nmaintenance_duration_s = 100\n");
  CHECK(r.jobs.at("j").end == doctest::Approx(1240));
  CHECK(r.jobs.at("j").restarts == 3);
  CHECK(r.summary["failures"]["maintenance"]["windows"] == 3);
  CHECK(r.summary["failures"]["maintenance"]["planned_interruptions"] == 3);
  CHECK(r.summary["failures"]["lost_gpu_hours"]["redone_work"].get<double>() ==
        doctest::Approx(0).epsilon(1e-9));
  CHECK(r.summary["failures"]["lost_gpu_hours"]["restart"].get<double>() ==
        doctest::Approx(3 * 80.0 * 8 / 3600));
  CHECK(r.failures_csv.find("360,maintenance,0,1,planned,1,") != std::string::npos);
  CHECK(r.failures_csv.find("460,maintenance_end,0") != std::string::npos);
  CHECK(r.failures_csv.find("720,maintenance,1,1,planned,1,") != std::string::npos);
}

TEST_CASE(
    "bad input: more spares than nodes, or a window longer than its interval, is exit 2 naming the key") {
  const auto dir = temp_dir("sparebad");
  write_file(dir / "trace.csv", "id,submit,duration,gpus\nj,0,1000,8\n");
  const std::string head =
      "[cluster]\n[[cluster.pool]]\nnodes = 2\n[workload]\nformat = \"csv\"\npath = \"trace.csv\"\n"
      "[workload.columns]\nid = \"id\"\nsubmit = \"submit\"\nduration = \"duration\"\ngpus = \"gpus\"\n"
      "[output]\ndir = \"out\"\n[failures]\nrate_per_1000_node_days = 1\n";
  write_file(dir / "s.toml", head + "spare_nodes = 2\n");
  auto r = run_fleetsim("run " + (dir / "s.toml").string() + " --quiet");
  CHECK(r.code == 2);
  CHECK(r.output.find("s.toml:16") != std::string::npos);
  CHECK(r.output.find("failures.spare_nodes") != std::string::npos);
  // a count beyond an int is compared before the cast (it wrapped to a negative count and passed)
  for (const char* key : {"spare_nodes", "maintenance_nodes"}) {
    write_file(dir / "s.toml", head + key + " = 3000000000\n");
    r = run_fleetsim("run " + (dir / "s.toml").string() + " --quiet");
    CHECK(r.code == 2);
    CHECK(r.output.find(std::string("failures.") + key) != std::string::npos);
  }
  write_file(dir / "s.toml", head + "maintenance_interval_h = 1\nmaintenance_duration_s = 7200\n");
  r = run_fleetsim("run " + (dir / "s.toml").string() + " --quiet");
  CHECK(r.code == 2);
  CHECK(r.output.find("failures.maintenance_duration_s") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "out" / "jobs.csv"));
  std::filesystem::remove_all(dir);
}

namespace {

/// [power]: an allocated GPU draws half its TDP, 300 W per node, no network power (hand-derivable).
const std::string kPower = "[power]\nbusy_fraction = 0.5\nnode_base_w = 300\nnic_w = 0\nswitch_w = 0\n";

/// Expected IT energy, kWh: `busy` A100-80GB GPUs allocated and `idle` ones not, over `window_s`,
/// with `nodes` nodes' base power.
double expected_kwh(double busy, double idle, int nodes, double window_s) {
  const GpuSpec& g = gpu_spec("A100-80GB");
  const double busy_w = std::max(g.idle_w, 0.5 * g.tdp_w);
  return ((busy * busy_w + idle * g.idle_w) * window_s + nodes * 300.0 * window_s) / 3.6e6;
}

}  // namespace

TEST_CASE("a held spare's GPUs draw idle power: the energy of a run with a spare node") {
  // 2 nodes x 8 A100-80GB, node 1 the spare. Job a (8 GPUs, 1000 s) on node 0: over [0, 1000] s, 8
  // GPUs busy (0.5 x TDP) and the spare's 8 idle (catalog idle_w), plus 2 x 300 W of node power.
  const auto r =
      run_with_faults(2, "id,submit,duration,gpus\na,0,1000,8\n", "node,start,end,component\n",
                      kCosts + kTrace + "spare_nodes = 1\n" + kPower, "fifo", "gpu = \"A100-80GB\"\n");
  const GpuSpec& g = gpu_spec("A100-80GB");
  CHECK(r.jobs.at("a").end == doctest::Approx(1000));
  CHECK(r.summary["energy_window_s"].get<double>() == doctest::Approx(1000));
  CHECK(r.summary["idle_gpu_kwh"].get<double>() == doctest::Approx(8 * g.idle_w * 1000 / 3.6e6));
  CHECK(r.summary["energy_kwh"].get<double>() == doctest::Approx(expected_kwh(8, 8, 2, 1000)));
  CHECK(r.summary["failures"]["spares"]["held_at_end"] == 1);
}

TEST_CASE("energy with a spare brought in: the failed node's GPUs draw idle power, the job's busy") {
  // Node 0 fails at 560 s (repaired at 1500 s, then held as the spare); the spare (node 1) joins and j
  // restarts there at once, its 110 s of restart counted busy: it ends at 560 + 110 + 1000 = 1670 s.
  // Throughout [0, 1670] 8 GPUs are allocated (node 0, then node 1) and 8 are not (the spare, then the
  // failed node, then the repaired spare): the same energy as 8 busy + 8 idle GPUs for 1670 s.
  const auto r = run_with_faults(
      2, "id,submit,duration,gpus\nj,0,1000,8\n", "node,start,end,component\nn0,560,1500,gpu\n",
      kCosts + kTrace + "spare_nodes = 1\n" + kPower, "fifo", "gpu = \"A100-80GB\"\n");
  const GpuSpec& g = gpu_spec("A100-80GB");
  CHECK(r.jobs.at("j").end == doctest::Approx(1670));
  CHECK(r.summary["failures"]["spares"]["used"] == 1);
  CHECK(r.summary["energy_window_s"].get<double>() == doctest::Approx(1670));
  CHECK(r.summary["idle_gpu_kwh"].get<double>() == doctest::Approx(8 * g.idle_w * 1670 / 3.6e6));
  CHECK(r.summary["energy_kwh"].get<double>() == doctest::Approx(expected_kwh(8, 8, 2, 1670)));
}
