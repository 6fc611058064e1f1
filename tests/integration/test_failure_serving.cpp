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
  const std::string jsonl = jsonl_request(0, 24, 3) + jsonl_request(5.5, 24, 3);
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
  const std::string jsonl = jsonl_request(0, 24, 2000) + jsonl_request(0.001, 24, 3);
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
  const std::string jsonl = jsonl_request(0, 24, 3) + jsonl_request(361, 24, 3);
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
  write_file(dir / "r.jsonl",
             jsonl_request(0, 24, 3) + jsonl_request(50, 24, 3) + jsonl_request(50.001, 32, 9));
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

namespace {

/// `nodes` nodes of 1 A100-80GB, `jobs` (id,submit,duration,gpus), the faults of `faults` replayed, and
/// the tiny service with the extra [[service]] keys `service` (model_load_s 10) serving `jsonl`;
/// `head`: TOML before [cluster] (top-level keys, tables such as [execution]); `failures`: more
/// [failures] keys.
std::filesystem::path write_service_case(const std::filesystem::path& dir, int nodes, const std::string& jobs,
                                         const std::string& service, const std::string& jsonl,
                                         const std::string& faults, const std::string& head,
                                         const std::string& failures) {
  write_file(dir / "jobs.csv", jobs);
  write_file(dir / "r.jsonl", jsonl);
  write_file(dir / "faults.csv", faults);
  write_file(
      dir / "s.toml",
      head + "[cluster]\n[[cluster.pool]]\nnodes = " + std::to_string(nodes) +
          "\ngpus_per_node = 1\ngpu = \"A100-80GB\"\n"
          "[workload]\nformat = \"csv\"\npath = \"jobs.csv\"\n[workload.columns]\nid = \"id\"\n"
          "submit = \"submit\"\nduration = \"duration\"\ngpus = \"gpus\"\n"
          "[scheduler]\npolicy = \"fifo\"\nplacement = \"first-fit\"\n" +
          kFailures + failures + "[[service]]\nname = \"tiny\"\nmodel = \"" + kData +
          "/tiny-config.json\"\nprofiles = \"" + kData +
          "/tiny/bf16\"\ngpu = \"A100-80GB\"\nkv_cache_gib = 0.001\nmodel_load_s = 10\n" + service +
          "[service.requests]\nformat = \"llmservingsim\"\npath = \"r.jsonl\"\n[output]\ndir = \"out\"\n");
  return dir / "s.toml";
}

ServeRun run_service(int nodes, const std::string& jobs, const std::string& service, const std::string& jsonl,
                     const std::string& faults, const std::string& head = "",
                     const std::string& failures = "") {
  const auto dir = temp_dir("fail-serve2");
  const auto file = write_service_case(dir, nodes, jobs, service, jsonl, faults, head, failures);
  const Scenario sc = parse_scenario(read_file(file), file.string(), dir.string());
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

double col(const ServeRun& r, std::size_t i, std::size_t c) {
  return std::stod(r.requests.at(i).at(c));
}

const std::string kLongJob = "id,submit,duration,gpus\nA,0,1000,1\n";

}  // namespace

TEST_CASE("serving failover: an MPS replica that moved serves at each placement's speed in turn") {
  // Three MPS replicas of half a GPU, colocation_slowdown 0.8, first-fit: r0 and r1 share node 0's GPU
  // (each slowed by the other: 0.8), r2 is alone on node 1 (1.0); the job takes node 2. Node 0 fails
  // at 20 s (repaired at 30 s): r0 is placed at once beside r2 on node 1 (both 0.8 from then on), r1
  // waits for the repair and is alone on node 0 from 30 s (1.0). Requests of the same shape on idle
  // replicas, round-robin: at 0, 1, 2 s on r0, r1, r2; at 50, 51, 52 s on r0, r1, r2 again. With P the
  // prefill alone on half a GPU: before the outage P/0.8, P/0.8, P; after it P/0.8, P, P/0.8. (The
  // final placement for the whole run would give r1 P and r2 P/0.8 before the outage too.)
  std::string jsonl;
  for (double t : {0.0, 1.0, 2.0, 50.0, 51.0, 52.0}) jsonl += jsonl_request(t, 24, 3);
  const auto r =
      run_service(3, kLongJob, "replicas = 3\nmps = 0.5\n", jsonl, "node,start,end,component\nn0,20,30,gpu\n",
                  "[execution]\ncolocation_slowdown = 0.8\n");
  REQUIRE(r.requests.size() == 6);
  CHECK(r.summary["services"]["tiny"]["replicas_hit"] == 2);
  for (std::size_t i = 0; i < 6; ++i) CHECK(r.requests[i].at(10) == std::to_string(i % 3));
  const double p = ttft(r, 2);
  CHECK(p > 0);
  CHECK(p < 0.5);
  CHECK(ttft(r, 0) == doctest::Approx(p / 0.8));
  CHECK(ttft(r, 1) == doctest::Approx(p / 0.8));
  CHECK(ttft(r, 3) == doctest::Approx(p / 0.8));
  CHECK(ttft(r, 4) == doctest::Approx(p));
  CHECK(ttft(r, 5) == doctest::Approx(p / 0.8));
}

namespace {

// A prefill and a decode replica (first-fit: nodes 0 and 1), the job on node 2, node 3 free; the KV
// link 1e-6 Gbit/s = 125 B/s: the tiny model's KV is 2 x 2 layers x 1 KV head x 4 x 2 B = 32 B per
// token, so 24 tokens take 6.144 s (25 tokens 6.4 s), plus latency.
const std::string kDisagg = "prefill_replicas = 1\ndecode_replicas = 1\nkv_link_gbps = 0.000001\n";

}  // namespace

TEST_CASE("serving failover, disaggregated: the decode node fails with a KV transfer in flight") {
  // q0 (24 tokens, 3 out) at 0: prefill P, then its KV travels X = 6.144 s to the decode replica.
  // The decode node fails at 3 s: the transfer is cut; the prefill replica keeps the KV. The decode
  // replica is placed again at once on the free node 3 and serves from 13 s; the KV then leaves again
  // (same link rate: X) and q0 decodes its 2 tokens as without the failure. So its TTFT is unchanged
  // and its end moves by 13 - P; q1 (at 100 s) is untouched.
  const std::string jsonl = jsonl_request(0, 24, 3) + jsonl_request(100, 24, 3);
  // (Seed 9's random trace mapping puts the trace's one node on cluster node 1: checked below.)
  const std::string seed = "seed = 9\n", mapping = "trace_mapping = \"random\"\n";
  const auto base = run_service(4, kLongJob, kDisagg, jsonl, "node,start,end,component\n", seed, mapping);
  const auto r =
      run_service(4, kLongJob, kDisagg, jsonl, "node,start,end,component\nx,3,500,gpu\n", seed, mapping);
  REQUIRE(r.failures_csv.find("3,failure,1,1,gpu,0,0,500,1,") != std::string::npos);  // node 1: 1 replica
  REQUIRE(r.requests.size() == 2);
  const double p = ttft(base, 0);
  // requests.csv: 4 end_s, 13 decode_replica, 14 kv_transfer_s
  CHECK(col(base, 0, 14) == doctest::Approx(24 * 32 / 125.0).epsilon(1e-5));
  CHECK(ttft(r, 0) == doctest::Approx(p));
  CHECK(col(r, 0, 14) == doctest::Approx(col(base, 0, 14)));
  CHECK(col(r, 0, 4) == doctest::Approx(col(base, 0, 4) + 13 - p));
  CHECK(r.requests[0].at(13) == "1");
  CHECK(col(r, 1, 4) == doctest::Approx(col(base, 1, 4)));
  CHECK(r.summary["services"]["tiny"]["replicas_hit"] == 1);
  CHECK(r.summary["services"]["tiny"]["completed"] == 2);
}

TEST_CASE("serving failover, disaggregated: the prefill node fails with a KV transfer in flight") {
  // The prefill node fails at 3 s, q0's KV on its way: lost with its source. The prefill replica is
  // placed again on node 3 and serves from 13 s; q0 prefills its prompt and first token again (25
  // tokens, sampling its 2nd), its KV (25 tokens: 6.4 s) moves and it decodes its last token: exactly
  // the path of q1, a 25-token request with 2 output tokens alone at 100 s. So q0 ends at 13 + q1's
  // end-to-end time, its TTFT unchanged.
  const std::string jsonl = jsonl_request(0, 24, 3) + jsonl_request(100, 25, 2);
  const auto base = run_service(4, kLongJob, kDisagg, jsonl, "node,start,end,component\n");
  const auto r = run_service(4, kLongJob, kDisagg, jsonl, "node,start,end,component\nn0,3,500,gpu\n");
  REQUIRE(r.requests.size() == 2);
  const double e2e_q1 = col(base, 1, 9);
  CHECK(col(base, 1, 14) == doctest::Approx(25 * 32 / 125.0).epsilon(1e-5));
  CHECK(ttft(r, 0) == doctest::Approx(ttft(base, 0)));
  CHECK(col(r, 0, 4) == doctest::Approx(13 + e2e_q1));
  CHECK(col(r, 0, 14) == doctest::Approx(col(base, 1, 14)));
  CHECK(col(r, 1, 9) == doctest::Approx(e2e_q1));
  CHECK(r.summary["services"]["tiny"]["requests_rerouted"] == 1);
}

TEST_CASE("serving failover: arrival_offset_s places the request trace on the cluster clock") {
  // The replica's node (node 0) is down from 100 s to 150 s; placed again at 150 s, it serves from 160 s.
  // The trace has requests at 0 and 5.5 s (its own clock). Without an offset they are at cluster 0 and
  // 5.5 s, long before the outage: both get the idle replica's TTFT, P. With arrival_offset_s = 95 they
  // arrive at 95 s (served before the outage: P) and 100.5 s (in the outage: 160 - 100.5 + P).
  const std::string jsonl = jsonl_request(0, 24, 3) + jsonl_request(5.5, 24, 3);
  const std::string faults = "node,start,end,component\nn0,100,150,gpu\n";
  const auto plain = run_service(2, kLongJob, "", jsonl, faults);
  const auto offset = run_service(2, kLongJob, "arrival_offset_s = 95\n", jsonl, faults);
  REQUIRE(plain.requests.size() == 2);
  REQUIRE(offset.requests.size() == 2);
  const double p = ttft(plain, 0);
  CHECK(ttft(plain, 1) == doctest::Approx(p));
  CHECK(plain.summary["services"]["tiny"]["requests_rerouted"] == 0);
  CHECK(col(offset, 0, 2) == doctest::Approx(95));  // requests.csv arrival_s: cluster time
  CHECK(col(offset, 1, 2) == doctest::Approx(100.5));
  CHECK(ttft(offset, 0) == doctest::Approx(p));
  CHECK(ttft(offset, 1) == doctest::Approx(160 - 100.5 + p));
  CHECK(offset.summary["services"]["tiny"]["replicas_hit"] == 1);
}

TEST_CASE("serving: a negative arrival_offset_s exits 2 naming the file, line and key, writing nothing") {
  const auto dir = temp_dir("fail-serve-offset");
  const auto file = write_service_case(dir, 2, kLongJob, "arrival_offset_s = -1\n", jsonl_request(0, 24, 3),
                                       "node,start,end,component\n", "", "");
  const auto r = run_fleetsim("run " + file.string() + " --quiet");
  CHECK(r.code == 2);
  CHECK(r.output.find("s.toml:") != std::string::npos);
  CHECK(r.output.find("arrival_offset_s") != std::string::npos);
  CHECK(r.output.find("must be a finite number of seconds >= 0") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "out"));
  std::filesystem::remove_all(dir);
}
