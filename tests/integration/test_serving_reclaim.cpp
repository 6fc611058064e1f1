// Replicas the autoscaler switches off free their GPUs for training (`[[service]] reclaim`), and take
// them back when switched on: by preempting the training job in their way, or by waiting for it.
// Two nodes of one A100 each. The service (tiny model, 100 ms a step, max_num_seqs 1, least-outstanding
// routing) has replicas 0 and 1, min_replicas 1, scale_up_queue 0, decisions every 10 s, model load 10 s.
// Requests: R1 and R2 (24 in, 300 out, at 0 and 1 ms) and R3 (24 in, 20 out, at 21 s; the trace's
// first arrival is the cluster's 0).
// Service alone (first pass): replica 0 (node 0) runs R1 (0 to ~30.02 s: 300 steps of >= 100 ms) while
// R2 waits; at 10 s a request waits, so replica 1 is switched on: it loads 10..20 s. R3 at 21 s goes to
// replica 1 (nothing outstanding) and is done by ~23 s. At 20 and 30 s R2 still waits; at 40 s it
// runs, nothing waits, and replica 1 (idle) is switched off. Replica 1's window: on 10, ready 20, off 40.
// Training (fifo, first-fit): job A (1 GPU, 15 s, at 0) and job B (1 GPU, 100 s, at 1); replica 1 is off
// at the start, so A takes node 1 at 0 and B queues.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "tests/sim_harness.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

const std::string kData = std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/serving";

struct ReclaimRun {
  nlohmann::ordered_json service;
  std::map<std::string, JobRow> jobs;
  std::vector<std::vector<std::string>> requests;  ///< requests.csv rows (no header)
};

/// The scenario above with `keys` added to the [[service]] table (and `min_replicas`).
ReclaimRun run(const std::string& keys, int min_replicas = 1) {
  const auto dir = temp_dir("reclaim");
  write_file(dir / "jobs.csv", "id,submit,duration,gpus\nA,0,15,1\nB,1,100,1\n");
  write_file(dir / "r.jsonl",
             jsonl_request(1, 24, 300) + jsonl_request(1.001, 24, 300) + jsonl_request(22, 24, 20));
  const std::string toml =
      "[cluster]\n[[cluster.pool]]\nnodes = 2\ngpus_per_node = 1\ngpu = \"A100-80GB\"\n"
      "[workload]\nformat = \"csv\"\npath = \"jobs.csv\"\n[workload.columns]\nid = \"id\"\n"
      "submit = \"submit\"\nduration = \"duration\"\ngpus = \"gpus\"\n"
      "[scheduler]\npolicy = \"fifo\"\nplacement = \"first-fit\"\n"
      "[[service]]\nname = \"tiny\"\nmodel = \"" +
      kData + "/tiny-config.json\"\nprofiles = \"" + kData +
      "/tiny/bf16\"\ngpu = \"A100-80GB\"\nreplicas = 2\nmin_replicas = " + std::to_string(min_replicas) +
      "\nscale_up_queue = 0\n"
      "scale_interval_s = 10\nmodel_load_s = 10\nmax_num_seqs = 1\nstep_overhead_ms = 100\n"
      "routing = \"least-outstanding\"\n" +
      keys + "[service.requests]\nformat = \"llmservingsim\"\npath = \"r.jsonl\"\n[output]\ndir = \"out\"\n";
  const Scenario sc = parse_scenario(toml, (dir / "s.toml").string(), dir.string());
  RunOptions opt;
  opt.quiet = true;
  ReclaimRun r;
  r.service = run_scenario(sc, opt).summary["services"]["tiny"];
  r.jobs = read_jobs_csv(dir / "out" / "jobs.csv");
  std::istringstream in(read_file(dir / "out" / "requests.csv"));
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) r.requests.push_back(split(line, ','));
  std::filesystem::remove_all(dir);
  return r;
}

// requests.csv:
// service,request_id,arrival_s,first_token_s,end_s,input_tokens,output_tokens,ttft_s,...,replica
double ttft(const ReclaimRun& r, std::size_t i) {
  return std::stod(r.requests.at(i).at(7));
}
double last_end(const ReclaimRun& r) {
  double t = 0;
  for (const auto& row : r.requests) t = std::max(t, std::stod(row.at(4)));
  return t;
}

std::string error_of(const std::string& keys, int min_replicas = 1) {
  try {
    run(keys, min_replicas);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE(
    "reclaim preempt: the replica switched on preempts the job on its GPU, a queued job takes it when off") {
  const auto r = run("reclaim = \"preempt\"\n");
  // At 10 s replica 1 preempts A (10 of its 15 s done, checkpointed) and takes node 1. At 40 s it is
  // switched off: B, first in the fifo queue (A was queued again at 10 s), starts then and ends at 140 s;
  // A restarts at 140 s, pays the 30 s restart and its last 5 s: it ends at 175 s.
  CHECK(r.jobs.at("B").start == doctest::Approx(40));
  CHECK(r.jobs.at("B").end == doctest::Approx(140));
  CHECK(r.jobs.at("A").start == doctest::Approx(0));
  CHECK(r.jobs.at("A").end == doctest::Approx(175));
  CHECK(r.jobs.at("A").restarts == 1);
  CHECK(r.service["reclaim_jobs_preempted"] == 1);
  CHECK(r.service["reclaim_wait_s"] == doctest::Approx(0));
  CHECK(r.service["peak_replicas"] == 2);
  // Replica 1 serves from 20 s: R3 goes there and waits for nothing (one prefill step).
  CHECK(r.requests.at(2).at(10) == "1");
  CHECK(ttft(r, 2) < 0.2);
  // GPU time held: replica 0 from 0 to the service's last event, replica 1 from 10 to 40 s.
  CHECK(r.service["gpu_hours"].get<double>() * 3600 == doctest::Approx(last_end(r) + 30));
  CHECK(r.service["completed"] == 3);
}

TEST_CASE("reclaim wait: the replica switched on waits for the job on its GPU, and serves later") {
  const auto r = run("reclaim = \"wait\"\n");
  // At 10 s replica 1 waits for node 1, which A holds until it ends at 15 s; replicas take freed GPUs
  // before queued jobs, so the replica gets node 1 at 15 s (ready at 25 s) and B still waits. At 40 s
  // the replica is switched off and B starts: 40..140 s. A is never preempted.
  CHECK(r.jobs.at("A").end == doctest::Approx(15));
  CHECK(r.jobs.at("A").restarts == 0);
  CHECK(r.jobs.at("B").start == doctest::Approx(40));
  CHECK(r.jobs.at("B").end == doctest::Approx(140));
  CHECK(r.service["reclaim_jobs_preempted"] == 0);
  CHECK(r.service["reclaim_wait_s"] == doctest::Approx(5));
  // Replica 1 is not ready at 21 s: R3 queues on replica 0 behind R2 (which runs from ~30 s for ~30 s).
  CHECK(r.requests.at(2).at(10) == "0");
  CHECK(ttft(r, 2) > 30);
  CHECK(r.service["gpu_hours"].get<double>() * 3600 == doctest::Approx(last_end(r) + 25));
  CHECK(r.service["completed"] == 3);
}

TEST_CASE(
    "reclaim: an unknown policy names the file, line and key, and a service without the autoscaler is "
    "refused") {
  const std::string unknown = error_of("reclaim = \"sometimes\"\n");
  CHECK(unknown.find("s.toml:") != std::string::npos);
  CHECK(unknown.find("reclaim") != std::string::npos);
  CHECK(unknown.find("preempt") != std::string::npos);  // lists the valid ones
  const std::string fixed = error_of("reclaim = \"wait\"\n", 2);
  CHECK(fixed.find("reclaim") != std::string::npos);
  CHECK(fixed.find("autoscaler") != std::string::npos);
}
