// Failures in the network fidelity (issue 15): a failed node's SimGrid hosts and NIC links are
// switched off (Host::turn_off, Link::turn_off) while it is out, after its jobs' ptasks were
// cancelled, and on again at the repair; the interrupted job restarts on the repaired node.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

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
