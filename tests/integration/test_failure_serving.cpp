// Serving replicas fail over (issue 15): a node failure or maintenance drain that hits a replica takes
// it down; its requests go to the surviving replicas (or wait), and it comes back on healthy GPUs
// after model_load_s. Tiny clusters of 1-GPU A100 nodes, the tiny test model, a CSV fault trace.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "tests/sim_harness.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/text.hpp"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

const std::string kData = std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/serving";

struct ServeRun {
  nlohmann::ordered_json summary;
  std::vector<std::vector<std::string>> requests;  ///< requests.csv rows (no header)
  std::string failures_csv;
};

/// `nodes` nodes of 1 A100-80GB; a 1-GPU training job of 1000 s (on the last node) keeps the cluster
/// run going; the service has `replicas` replicas (first-fit: nodes 0, 1, ...) and the requests of
/// `jsonl`; `failures` are the [failures] keys (empty: none).
ServeRun run(int nodes, int replicas, const std::string& jsonl, const std::string& faults,
             const std::string& failures) {
  const auto dir = temp_dir("fail-serve");
  write_file(dir / "jobs.csv", "id,submit,duration,gpus\nA,0,1000,1\n");
  write_file(dir / "r.jsonl", jsonl);
  write_file(dir / "faults.csv", faults);
  const std::string toml =
      "[cluster]\n[[cluster.pool]]\nnodes = " + std::to_string(nodes) +
      "\ngpus_per_node = 1\ngpu = \"A100-80GB\"\n"
      "[workload]\nformat = \"csv\"\npath = \"jobs.csv\"\n[workload.columns]\nid = \"id\"\n"
      "submit = \"submit\"\nduration = \"duration\"\ngpus = \"gpus\"\n"
      "[scheduler]\npolicy = \"fifo\"\nplacement = \"first-fit\"\n" +
      failures + "[[service]]\nname = \"tiny\"\nmodel = \"" + kData + "/tiny-config.json\"\nprofiles = \"" +
      kData + "/tiny/bf16\"\ngpu = \"A100-80GB\"\nreplicas = " + std::to_string(replicas) +
      "\nmodel_load_s = 10\n[service.requests]\nformat = \"llmservingsim\"\n"
      "path = \"r.jsonl\"\n[output]\ndir = \"out\"\n";
  const Scenario sc = parse_scenario(toml, (dir / "s.toml").string(), dir.string());
  RunOptions opt;
  opt.quiet = true;
  ServeRun r;
  r.summary = run_scenario(sc, opt).summary;
  std::istringstream in(read_file(dir / "out" / "requests.csv"));
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) r.requests.push_back(split(line, ','));
  if (std::filesystem::exists(dir / "out" / "failures.csv"))
    r.failures_csv = read_file(dir / "out" / "failures.csv");
  std::filesystem::remove_all(dir);
  return r;
}

std::string request(double at_s, int in, int out) {
  return "{\"input_toks\": " + std::to_string(in) + ", \"output_toks\": " + std::to_string(out) +
         ", \"arrival_time_ns\": " + std::to_string(static_cast<long long>(at_s * 1e9)) + "}\n";
}

const std::string kFailures = "[failures]\ntrace = \"faults.csv\"\ntrace_format = \"csv\"\n";

// requests.csv columns: service,request_id,arrival_s,first_token_s,end_s,input_tokens,output_tokens,
// ttft_s,tpot_s,e2e_s,replica,...
double ttft(const ServeRun& r, std::size_t i) {
  return std::stod(r.requests.at(i).at(7));
}

}  // namespace

TEST_CASE("serving failover: the only replica's node fails, a request waits for repair + model load") {
  // Node 0 holds the replica, node 1 the training job. Node 0 fails at 5 s, repaired at 50 s; with no
  // other GPU free the replica is placed again at 50 s and serves from 60 s (model_load_s = 10).
  // Request 1 (t = 0) runs on an idle replica: its TTFT is one prefill, P. Request 2 (the same shape,
  // t = 5.5 s) arrives while the replica is down: TTFT = 60 - 5.5 + P.
  const std::string jsonl = request(0, 24, 3) + request(5.5, 24, 3);
  const auto r = run(2, 1, jsonl, "node,start,end,component\nn0,5,50,gpu\n", kFailures);
  REQUIRE(r.requests.size() == 2);
  const double p = ttft(r, 0);
  CHECK(p > 0);
  CHECK(p < 0.5);
  CHECK(ttft(r, 1) == doctest::Approx(60 - 5.5 + p));
  CHECK(r.summary["services"]["tiny"]["completed"] == 2);
  CHECK(r.summary["services"]["tiny"]["replicas_hit"] == 1);
  CHECK(r.summary["services"]["tiny"]["requests_rerouted"] == 0);  // nothing was on it at 5 s
  CHECK(r.summary["failures"]["services"]["replicas_hit"] == 1);
  CHECK(r.failures_csv.find("5,failure,0,1,gpu,0,0,50,1,0\n") != std::string::npos);
}

TEST_CASE("serving failover: a request in flight moves to the surviving replica, one row per request") {
  // Replicas on nodes 0 and 1, the job on node 2. A long request (2000 output tokens) starts at 0 on
  // replica 0 (it ends at about 0.34 s without failures); node 0 fails at 0.1 s: it is re-routed to
  // replica 1 and prefills again there.
  const std::string jsonl = request(0, 24, 2000) + request(0.001, 24, 3);
  const auto r = run(3, 2, jsonl, "node,start,end,component\nn0,0.1,500,gpu\n", kFailures);
  REQUIRE(r.requests.size() == 2);
  CHECK(r.requests[0].at(10) == "1");  // finished on replica 1
  CHECK(r.summary["services"]["tiny"]["completed"] == 2);
  CHECK(r.summary["services"]["tiny"]["replicas_hit"] == 1);
  CHECK(r.summary["services"]["tiny"]["requests_rerouted"] == 1);
  CHECK(r.summary["failures"]["services"]["requests_rerouted"] == 1);
  CHECK(r.failures_csv.find(",1,1\n") != std::string::npos);  // replicas_hit, requests_rerouted
  // The same without the failure: the long request ends on replica 0, earlier.
  const auto base = run(3, 2, jsonl, "node,start,end,component\n", "");
  CHECK(base.requests[0].at(10) == "0");
  CHECK(std::stod(r.requests[0].at(4)) > std::stod(base.requests[0].at(4)));
  CHECK_FALSE(base.summary["services"]["tiny"].contains("replicas_hit"));
}

TEST_CASE("serving failover: a maintenance drain takes the replica's node, it returns after the window") {
  // Windows every 0.1 h (360 s) for 100 s, rolling from node 0: the first takes node 0 (the replica)
  // from 360 s to 460 s; node 1 is full (the job), so the replica is placed again at 460 s on node 0
  // and serves from 470 s. A request at 361 s: TTFT = 470 - 361 + P (P: the idle replica's TTFT).
  const std::string jsonl = request(0, 24, 3) + request(361, 24, 3);
  const auto r = run(2, 1, jsonl, "node,start,end,component\n",
                     "[failures]\nmaintenance_interval_h = 0.1\nmaintenance_duration_s = 100\n");
  REQUIRE(r.requests.size() == 2);
  const double p = ttft(r, 0);
  CHECK(ttft(r, 1) == doctest::Approx(470 - 361 + p));
  CHECK(r.summary["services"]["tiny"]["replicas_hit"].get<long>() >= 1);
  CHECK(r.failures_csv.find("360,maintenance,0,1,planned,0,0,460,1,0\n") != std::string::npos);
}

namespace {

/// One node with one A100-80GB that fails from 20 s to 30 s; the tiny service as one MPS replica
/// (half the GPU, model_load_s 10: placed again at 30 s, serving from 40 s) with three requests, at
/// 0 s (the trace's start: serving time is cluster time), 50 s and 50.001 s; a training job J (half
/// the GPU, 100 s alone) submitted at `submit_s`; colocation_slowdown 0.8. J's row in `jobs`.
ServeRun run_mps_failover(int submit_s, std::map<std::string, JobRow>& jobs) {
  const auto dir = temp_dir("fail-mps");
  write_file(dir / "jobs.csv",
             "id,submit,duration,gpus,milli\nJ," + std::to_string(submit_s) + ",100,1,500\n");
  write_file(dir / "faults.csv", "node,start,end,component\nn0,20,30,gpu\n");
  write_file(dir / "r.jsonl", request(0, 24, 3) + request(50, 24, 3) + request(50.001, 32, 9));
  const std::string toml =
      "[cluster]\n[[cluster.pool]]\nnodes = 1\ngpus_per_node = 1\ngpu = \"A100-80GB\"\n"
      "[workload]\nformat = \"csv\"\npath = \"jobs.csv\"\n[workload.columns]\nid = \"id\"\n"
      "submit = \"submit\"\nduration = \"duration\"\ngpus = \"gpus\"\ngpu_milli = \"milli\"\n"
      "[scheduler]\npolicy = \"fifo-skip\"\nplacement = \"first-fit\"\n"
      "[execution]\ncolocation_slowdown = 0.8\n" +
      kFailures + "[[service]]\nname = \"tiny\"\nmodel = \"" + kData + "/tiny-config.json\"\nprofiles = \"" +
      kData +
      "/tiny/bf16\"\ngpu = \"A100-80GB\"\nkv_cache_gib = 0.001\nmps = 0.5\nmodel_load_s = 10\n"
      "[service.requests]\nformat = \"llmservingsim\"\npath = \"r.jsonl\"\n[output]\ndir = \"out\"\n";
  const Scenario sc = parse_scenario(toml, (dir / "s.toml").string(), dir.string());
  RunOptions opt;
  opt.quiet = true;
  ServeRun r;
  r.summary = run_scenario(sc, opt).summary;
  jobs = read_jobs_csv(dir / "out" / "jobs.csv");
  std::istringstream in(read_file(dir / "out" / "requests.csv"));
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) r.requests.push_back(split(line, ','));
  std::filesystem::remove_all(dir);
  return r;
}

}  // namespace

TEST_CASE("serving failover: an MPS replica placed again is one co-location occupant, counted anew") {
  // The failure releases the replica's share, and with it its co-location occupancy; at 30 s it is
  // reserved again (as a shared holder) on the same GPU. J, starting beside it at 40 s, has exactly one
  // co-located occupant: it runs at 0.8 and ends at 40 + 100 / 0.8 = 165 (a replica still counted at
  // its old place too would make that 0.64). The replica counts J beside its new GPUs: both requests
  // (long before 165 s) take 1 / 0.8 as long as when J only comes at 1000 s.
  std::map<std::string, JobRow> jobs, later;
  const auto alone = run_mps_failover(1000, later);
  const auto both = run_mps_failover(40, jobs);
  CHECK(alone.summary["services"]["tiny"]["replicas_hit"] == 1);
  CHECK(both.summary["services"]["tiny"]["replicas_hit"] == 1);
  CHECK(later["J"].end == doctest::Approx(1125));
  CHECK(jobs["J"].start == doctest::Approx(40));
  CHECK(jobs["J"].end == doctest::Approx(165));
  REQUIRE(both.requests.size() == 3);
  REQUIRE(alone.requests.size() == 3);
  CHECK(ttft(both, 0) == doctest::Approx(ttft(alone, 0)));  // at 0 s: nobody beside it
  for (std::size_t i = 1; i < 3; ++i) {
    CHECK(ttft(both, i) == doctest::Approx(ttft(alone, i) / 0.8));
    CHECK(std::stod(both.requests[i].at(9)) == doctest::Approx(std::stod(alone.requests[i].at(9)) / 0.8));
  }
}
