// Failures in the network fidelity (issue 15): a failed node's SimGrid hosts and NIC links are
// switched off (Host::turn_off, Link::turn_off) while it is out, after its jobs' ptasks were
// cancelled, and on again at the repair; the interrupted job restarts on the repaired node.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.hpp"

using fleetsim::test::read_file;
using fleetsim::test::run_fleetsim;
using fleetsim::test::temp_dir;
using fleetsim::test::write_file;

namespace {

/// 2 nodes x 1 V100 on one leaf, one 2-GPU job of 1000 s at t = 0, network fidelity.
std::string scenario(const std::string& failures) {
  return "seed = 7\n[cluster]\n[[cluster.pool]]\nname = \"p\"\nnodes = 2\ngpus_per_node = 1\n"
         "gpu = \"V100\"\n[cluster.network]\nnodes_per_leaf = 2\nnic_gbps = 100\n"
         "[workload]\nformat = \"csv\"\npath = \"trace.csv\"\n[workload.columns]\nid = \"id\"\n"
         "submit = \"submit\"\nduration = \"duration\"\ngpus = \"gpus\"\n[scheduler]\npolicy = \"fifo\"\n"
         "placement = \"first-fit\"\n[execution]\nfidelity = \"network\"\n" +
         failures;
}

struct Out {
  double end = 0;
  nlohmann::json summary;
};

Out run(const std::filesystem::path& dir, const std::string& failures, const std::string& tag) {
  write_file(dir / "trace.csv", "id,submit,duration,gpus\nj,0,1000,2\n");
  write_file(dir / "faults.csv", "node,start,end,component\nn0,300,600,gpu\n");
  write_file(dir / "s.toml", scenario(failures));
  const auto out = dir / ("out_" + tag);
  const auto r = run_fleetsim("run " + (dir / "s.toml").string() + " --quiet --out " + out.string());
  REQUIRE_MESSAGE(r.code == 0, r.output);
  std::istringstream in(read_file(out / "jobs.csv"));
  std::string line, header;
  std::getline(in, header);
  std::getline(in, line);
  // end_s column by name
  int col = -1, k = 0;
  std::istringstream h(header);
  for (std::string f; std::getline(h, f, ','); ++k)
    if (f == "end_s" || f == "end") col = k;
  REQUIRE(col >= 0);
  std::istringstream row(line);
  std::string f;
  for (int i = 0; i <= col; ++i) std::getline(row, f, ',');
  Out o;
  o.end = std::stod(f);
  o.summary = nlohmann::json::parse(read_file(out / "summary.json"));
  return o;
}

}  // namespace

TEST_CASE("network fidelity: a node failure switches its SimGrid hosts off until repaired, job restarts") {
  const auto dir = temp_dir("fail-net");
  const Out base = run(dir, "", "base");
  // Node 0 fails at 300 s (the job is interrupted, no checkpoints: all work lost) and is repaired at
  // 600 s; the job needs both nodes, restarts at 600 s, pays 30 + 60 + 20 = 110 s, then runs its
  // whole failure-free run again: end = 600 + 110 + base.
  const Out f = run(dir,
                    "[failures]\ntrace = \"faults.csv\"\ntrace_format = \"csv\"\ndetection_s = 30\n"
                    "restart_s = 60\nrestore_s = 20\n",
                    "fail");
  CHECK(base.end == doctest::Approx(1000));  // alone on its nodes: its trace duration
  CHECK(f.end == doctest::Approx(600 + 110 + base.end).epsilon(1e-6));
  const auto& sw = f.summary["network"]["nodes_switched_off"];
  REQUIRE(sw.size() == 1);
  CHECK(sw[0]["node"] == 0);
  CHECK(sw[0]["off_s"].get<double>() == doctest::Approx(300));
  CHECK(sw[0]["on_s"].get<double>() == doctest::Approx(600));
  CHECK(sw[0]["hosts_seen_off"] == true);
  CHECK_FALSE(base.summary["network"].contains("nodes_switched_off"));
  std::filesystem::remove_all(dir);
}

namespace {

/// 3 nodes x 1 V100, 2 nodes per leaf (leaf 0: nodes 0 and 1; leaf 1: node 2), leaf-spine, network
/// fidelity; one 3-GPU job of 1000 s at t = 0 (its ring crosses leaf 0's uplink). jobs.csv's first row
/// and the summary.
struct Run3 {
  std::vector<std::string> job;  ///< jobs.csv row of the job
  nlohmann::json summary;
  std::string failures_csv, failure_jobs_csv;
};

Run3 run3(const std::filesystem::path& dir, int seed, const std::string& faults, const std::string& failures,
          const std::string& tag) {
  write_file(dir / "trace.csv", "id,submit,duration,gpus\nj,0,1000,3\n");
  write_file(dir / "faults.csv", faults);
  write_file(
      dir / "s.toml",
      "seed = " + std::to_string(seed) +
          "\n[cluster]\n[[cluster.pool]]\nname = \"p\"\nnodes = 3\ngpus_per_node = 1\n"
          "gpu = \"V100\"\n[cluster.network]\nnodes_per_leaf = 2\nnic_gbps = 100\n"
          "[workload]\nformat = \"csv\"\npath = \"trace.csv\"\n[workload.columns]\nid = \"id\"\n"
          "submit = \"submit\"\nduration = \"duration\"\ngpus = \"gpus\"\n[scheduler]\npolicy = \"fifo\"\n"
          "placement = \"first-fit\"\n[execution]\nfidelity = \"network\"\n" +
          failures);
  const auto out = dir / ("out_" + tag);
  const auto r = run_fleetsim("run " + (dir / "s.toml").string() + " --quiet --out " + out.string());
  REQUIRE_MESSAGE(r.code == 0, r.output);
  Run3 o;
  std::istringstream in(read_file(out / "jobs.csv"));
  std::string header, line;
  std::getline(in, header);
  std::getline(in, line);
  std::istringstream row(line);
  for (std::string f; std::getline(row, f, ',');) o.job.push_back(f);
  o.summary = nlohmann::json::parse(read_file(out / "summary.json"));
  if (std::filesystem::exists(out / "failures.csv")) o.failures_csv = read_file(out / "failures.csv");
  if (std::filesystem::exists(out / "failure_jobs.csv"))
    o.failure_jobs_csv = read_file(out / "failure_jobs.csv");
  return o;
}

// jobs.csv: job_id,submit_s,start_s,end_s,wait_s,jct_s,gpus,gpu_type,nodes,restarts,preempted_s,comm_s
double end_of(const Run3& r) {
  return std::stod(r.job.at(3));
}
double comm_of(const Run3& r) {
  return std::stod(r.job.at(11));
}

const std::string kCosts = "detection_s = 30\nrestart_s = 60\nrestore_s = 20\n";

}  // namespace

TEST_CASE("network fidelity: a leaf domain failure switches its nodes and its uplinks off until repaired") {
  const auto dir = temp_dir("fail-net-leaf");
  const Run3 base = run3(dir, 33, "node,start,end,component\n", "", "base");
  // Leaf domains fail at 28,800 per 1000 days each (one per 3000 s); repairs take exactly 300 s
  // (sigma 0). Seed 33 draws one failure before the job ends, of leaf 0 (nodes 0 and 1), at t_f
  // (read from failures.csv). The job (its ring on nodes 0, 1, 2) is interrupted, no checkpoints: all
  // work lost. At t_f + 300 the nodes and the leaf's uplinks are back on; the job restarts, pays
  // 30 + 60 + 20 s and runs its failure-free run again, over the same links: end = t_f + 300 + 110 +
  // base (had the uplink stayed off, its all-reduce could not cross to node 2).
  const Run3 f = run3(dir, 33, "node,start,end,component\n",
                      "[failures]\ndomain = \"leaf\"\ndomain_rate_per_1000_days = 28800\nrepair_sigma = 0\n"
                      "domain_repair_median_s = 300\n" +
                          kCosts,
                      "leaf");
  CHECK(end_of(base) == doctest::Approx(1000));
  std::istringstream rows(f.failures_csv);
  std::string line;
  std::getline(rows, line);
  std::vector<std::vector<std::string>> failures;
  while (std::getline(rows, line)) {
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string c; std::getline(row, c, ',');) cells.push_back(c);
    if (cells.at(1) == "failure") failures.push_back(cells);
  }
  // time_s,event,node,nodes,component,jobs_hit,gpu_hours_lost,repaired_s,...
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].at(2) == "0");
  CHECK(failures[0].at(3) == "2");
  CHECK(failures[0].at(4) == "switch");
  CHECK(failures[0].at(5) == "1");
  const double t_f = std::stod(failures[0].at(0));
  CHECK(t_f > 0);
  CHECK(t_f < 1000);
  CHECK(std::stod(failures[0].at(7)) == doctest::Approx(t_f + 300));
  CHECK(end_of(f) == doctest::Approx(t_f + 300 + 110 + end_of(base)).epsilon(1e-6));
  const auto& leaves = f.summary["network"]["leaves_switched_off"];
  REQUIRE(leaves.size() == 1);
  CHECK(leaves[0]["leaf"] == 0);
  CHECK(leaves[0]["off_s"].get<double>() == doctest::Approx(t_f).epsilon(1e-6));
  CHECK(leaves[0]["on_s"].get<double>() == doctest::Approx(t_f + 300).epsilon(1e-6));
  CHECK(leaves[0]["uplinks"] == 2);  // the split-duplex uplink's two directions
  CHECK(leaves[0]["uplinks_seen_off"] == true);
  CHECK(f.summary["network"]["nodes_switched_off"].size() == 2);
  CHECK_FALSE(base.summary["network"].contains("leaves_switched_off"));
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "network fidelity: a failure during an all-reduce cancels its ptask, the job falls back to a "
    "checkpoint") {
  const auto dir = temp_dir("fail-net-ar");
  const Run3 base = run3(dir, 7, "node,start,end,component\n", "", "base");
  // Alone, the job computes, then all-reduces once at the end: its all-reduce (comm_s = C, about
  // 211 s) runs from 1000 - C to 1000. Node 0 fails at 950 s, in that all-reduce (its ptask is
  // cancelled), and is repaired at 1200 s. Checkpoints every 100 s of work (writes free): its work at
  // 950 s is 0.95, counting the all-reduce's part done, so it falls back to 0.9: 50 s of work lost
  // (150 GPU-s = 0.0417 GPU-h). It restarts at 1200 s, pays 110 s and does its last 100 s: 1410 s; its
  // all-reduce time is the cancelled part (950 - (1000 - C)) plus a tenth of C.
  const Run3 f = run3(dir, 7, "node,start,end,component\nn0,950,1200,gpu\n",
                      "[failures]\ntrace = \"faults.csv\"\ntrace_format = \"csv\"\ncheckpoint = \"fixed\"\n"
                      "checkpoint_interval_s = 100\n" +
                          kCosts,
                      "ar");
  const double c = comm_of(base);
  REQUIRE(end_of(base) == doctest::Approx(1000));
  REQUIRE(1000 - c < 950);  // the failure hits the all-reduce
  CHECK(end_of(f) == doctest::Approx(1410).epsilon(1e-6));
  CHECK(comm_of(f) == doctest::Approx(950 - (1000 - c) + 0.1 * c).epsilon(1e-6));
  // failure_jobs.csv: job_id,gpus,interruptions,checkpoint_interval_s,redone_gpu_h,restart_gpu_h,...
  CHECK(f.failure_jobs_csv.find("\nj,3,1,100,0.0417,0.0917,") != std::string::npos);
  std::filesystem::remove_all(dir);
}
