// The "pollux" trace format and job model: hand-derived values on the tiny fixtures in
// tests/data/pollux/ (see its README), errors, one tiny end-to-end run, and the real Pollux data
// (skipped with a message where ../shared/data is absent).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "models/hardware/gpu_catalog.hpp"
#include "models/job/job_model.hpp"
#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "tests/sim_harness.hpp"
#include "tests/test_util.hpp"
#include "tests/unit/test_workloads_util.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/jobs/trace_reader.hpp"

using namespace fleetsim;

namespace {

std::string pollux_fixture(const std::string& name) {
  return std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/pollux/" + name;
}

std::vector<JobSpec> read_pollux(const std::string& path) {
  WorkloadConfig wc;
  wc.format = "pollux";
  wc.path = path;
  wc.scenario_file = "test.toml";
  return read_trace(wc);
}

std::unique_ptr<JobModel> model(const std::string& folder = pollux_fixture("profiles")) {
  JobModelParams p;
  p.settings.set("pollux_profiles", folder);
  p.scenario_file = "test.toml";
  return job_models().create("pollux", p);
}

JobSpec job(const std::string& model_name, double steps = 100) {
  JobSpec j;
  j.model = model_name;
  j.steps = steps;
  return j;
}

/// Run time of `j` on `gpus` T4 GPUs over `nodes` nodes (whole GPUs).
double seconds(const JobModel& m, const JobSpec& j, int gpus, int nodes, const std::string& gpu = "T4") {
  std::string why;
  const auto t = m.run_time_s(j, PlacementSummary{gpu, gpus, nodes, 1, 1000}, why);
  REQUIRE_MESSAGE(t.has_value(), why);
  return *t;
}

/// The message of the InputError that `f` throws ("" if none).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("pollux reader: fields, submit order and the assumed step counts") {
  const auto jobs = read_pollux(pollux_fixture("workload.csv"));
  REQUIRE(jobs.size() == 3);
  // Sorted by submit: a (0), n (5), b (10).
  CHECK(jobs[0].id == "a");
  CHECK(jobs[1].id == "n");
  CHECK(jobs[2].id == "b");
  CHECK(jobs[0].submit_s == 0);
  CHECK(jobs[2].submit_s == 10);
  CHECK(jobs[0].gpus == 1);
  CHECK(jobs[2].gpus == 2);
  CHECK(jobs[0].model == "cifar10 (batch size 64)");
  CHECK(jobs[1].model == "ncf (batch size 32768)");
  CHECK_FALSE(jobs[0].duration_s.has_value());
  // cifar10: 100 epochs x ceil(50,000 / 64) = 100 x 782.
  CHECK(*jobs[0].steps == 78200);
  // ncf: 10 epochs x ceil(4,970,845 / 32,768) = 10 x 152.
  CHECK(*jobs[1].steps == 1520);
}

TEST_CASE("pollux reader: bad rows name file, line and field") {
  const auto dir = test::temp_dir("pollux-reader");
  auto check = [&](const std::string& body, const std::vector<std::string>& needles) {
    const auto p = dir / "w.csv";
    test::write_file(p, "name,time,application,num_replicas,batch_size\n" + body);
    const std::string msg = error_of([&] { read_pollux(p.string()); });
    for (const auto& n : needles) CHECK_MESSAGE(contains(msg, n), "missing '" << n << "' in: " << msg);
  };
  check("a,0,cifar100,1,64\n",
        {"w.csv:2", "application", "unknown application 'cifar100'", "did you mean 'cifar10'",
         "valid: bert, cifar10, deepspeech2, imagenet, ncf, yolov3"});
  check("a,0,cifar10,4,2\n", {"w.csv:2", "batch_size", "smaller than the 4 replicas"});
  check("a,0,cifar10,0,64\n", {"w.csv:2", "num_replicas", "at least 1 replica"});
  check("a,-5,cifar10,1,64\n", {"w.csv:2", "time"});
  check("a,0,cifar10,1,sixty\n", {"w.csv:2", "batch_size"});
  check("a,0,cifar10,1\n", {"w.csv:2", "row has 4 fields"});
  test::write_file(dir / "h.csv", "name,time,application,replicas,batch_size\na,0,cifar10,1,64\n");
  CHECK(contains(error_of([&] { read_pollux((dir / "h.csv").string()); }), "num_replicas"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("pollux model: measured points, batch interpolation, accumulation and shape averaging") {
  const auto m = model();
  // 1 GPU, local batch 64: 0.20 s per step.
  CHECK(seconds(*m, job("cifar10 (batch size 64)"), 1, 1) == doctest::Approx(20));
  // 1 GPU, local batch 48: halfway between 32 (0.10 s) and 64 (0.20 s).
  CHECK(seconds(*m, job("cifar10 (batch size 48)"), 1, 1) == doctest::Approx(15));
  // Below the smallest measured local batch: clamped to it.
  CHECK(seconds(*m, job("cifar10 (batch size 16)"), 1, 1) == doctest::Approx(10));
  // 2 GPUs in 1 node, local batch 32: placement "2".
  CHECK(seconds(*m, job("cifar10 (batch size 64)"), 2, 1) == doctest::Approx(12));
  // 2 GPUs over 2 nodes: placement "11" (0.30 s).
  CHECK(seconds(*m, job("cifar10 (batch size 64)"), 2, 2) == doctest::Approx(30));
  // Local batch 128 > the largest measured (64): one accumulation micro-step of 64 more:
  // step(64) + 1 x (step(64) - sync(64)) = 0.22 + 0.20 on placement "2".
  CHECK(seconds(*m, job("cifar10 (batch size 256)"), 2, 1) == doctest::Approx(42));
  // 4 GPUs over 2 nodes: "13" (0.50 s) and "22" (0.70 s) averaged.
  CHECK(seconds(*m, job("cifar10 (batch size 128)"), 4, 2) == doctest::Approx(60));
}

TEST_CASE("pollux model: nodes and replicas interpolated on the grid, clamped at its edges") {
  const auto m = model();
  // 6 GPUs over 4 nodes (local 32): between 2 nodes (replicas clamped to 4: 0.60 s) and 6 nodes
  // (6 replicas: 1.00 s), weight (4 - 2) / (6 - 2) = 0.5 -> 0.80 s.
  CHECK(seconds(*m, job("cifar10 (batch size 192)"), 6, 4) == doctest::Approx(80));
  // 9 GPUs over 6 nodes: between 6 (1.0 s) and 12 replicas (1.2 s) -> 1.1 s.
  CHECK(seconds(*m, job("cifar10 (batch size 288)"), 9, 6) == doctest::Approx(110));
  // 12 GPUs over 8 nodes: beyond the largest node count, timed as 6 nodes x 12 replicas.
  CHECK(seconds(*m, job("cifar10 (batch size 384)"), 12, 8) == doctest::Approx(120));
  // 8 GPUs in 1 node: beyond 2 measured GPUs per 1 node, timed as 2.
  CHECK(seconds(*m, job("cifar10 (batch size 256)"), 8, 1) == doctest::Approx(12));
}

TEST_CASE("pollux model: other GPU types scale the compute part by FP32 peak") {
  const auto m = model();
  const double ratio = find_gpu("T4")->fp32_tflops / find_gpu("V100")->fp32_tflops;
  // Placement "1", local 64: 0.20 s compute, 0 sync.
  CHECK(seconds(*m, job("cifar10 (batch size 64)"), 1, 1, "V100") == doctest::Approx(100 * 0.20 * ratio));
  // Placement "2", local 32: 0.10 s compute + 0.02 s sync (kept).
  CHECK(seconds(*m, job("cifar10 (batch size 64)"), 2, 1, "V100") ==
        doctest::Approx(100 * (0.10 * ratio + 0.02)));
}

TEST_CASE("pollux model: jobs it cannot time say why") {
  const auto m = model();
  std::string why;
  CHECK(m->can_time(job("cifar10 (batch size 64)"), why));
  CHECK_FALSE(m->can_time(job("cifar10"), why));
  CHECK(contains(why, "no batch size"));
  CHECK_FALSE(m->can_time(job("bert (batch size 12)"), why));
  CHECK(contains(why, "no Pollux profile for application 'bert'"));
  JobSpec no_steps = job("cifar10 (batch size 64)");
  no_steps.steps.reset();
  CHECK_FALSE(m->can_time(no_steps, why));
  CHECK(contains(why, "no step count"));
  CHECK_FALSE(m->run_time_s(job("cifar10 (batch size 64)"), PlacementSummary{"T4", 1, 1, 1, 500}, why));
  CHECK(contains(why, "shared GPUs"));
}

TEST_CASE("pollux model: a bad profiles folder is an input error") {
  CHECK(contains(error_of([] { model(""); }), "execution.pollux_profiles"));
  CHECK(contains(error_of([] { model("/nonexistent/pollux"); }), "no such folder"));
  CHECK(contains(error_of([] { model(pollux_fixture("workload.csv")); }), "not a folder"));
  const auto dir = test::temp_dir("pollux-profiles");
  CHECK(contains(error_of([&] { model(dir.string()); }), "no application profiles"));
  std::filesystem::create_directories(dir / "app");
  test::write_file(dir / "app" / "placements.csv",
                   "placement,local_bsz,step_time,sync_time\n1,32,0.1,0\n2x,32,0.1,0\n");
  std::string msg = error_of([&] { model(dir.string()); });
  CHECK(contains(msg, "placements.csv:3"));
  CHECK(contains(msg, "field 'placement'"));
  test::write_file(dir / "app" / "placements.csv", "placement,local_bsz,step_time,sync_time\n1,32,0.1,0.2\n");
  msg = error_of([&] { model(dir.string()); });
  CHECK(contains(msg, "placements.csv:2"));
  CHECK(contains(msg, "sync_time exceeds step_time"));
  test::write_file(dir / "app" / "placements.csv", "placement,local_bsz,step_time\n1,32,0.1\n");
  CHECK(contains(error_of([&] { model(dir.string()); }), "sync_time"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("pollux end to end: fixture workload on one 4-GPU T4 node (hand-derived times)") {
  // a: t=0, 1 GPU, 78,200 steps x 0.20 s = 15,640 s. n: t=5, 1 GPU, 1,520 x 0.02 s = 30.4 s.
  // b: t=10, 2 GPUs in the node (local 32, 0.12 s): 78,200 x 0.12 = 9,384 s. All fit at once.
  const auto dir = test::temp_dir("pollux-e2e");
  const std::string toml =
      "[cluster]\n[[cluster.pool]]\nname = \"t4\"\nnodes = 1\ngpus_per_node = 4\ngpu = \"T4\"\n"
      "[workload]\nformat = \"pollux\"\npath = \"" +
      pollux_fixture("workload.csv") +
      "\"\n[execution]\njob_model = \"pollux\"\n"
      "pollux_profiles = \"" +
      pollux_fixture("profiles") +
      "\"\n[scheduler]\npolicy = \"fifo\"\n"
      "[output]\ndir = \"out\"\n";
  const Scenario sc = parse_scenario(toml, (dir / "p.toml").string(), dir.string());
  RunOptions opt;
  opt.quiet = true;
  const auto summary = run_scenario(sc, opt).summary;
  CHECK(summary["job_model"] == "pollux");
  CHECK(summary["completed"] == 3);
  auto jobs = test::read_jobs_csv(dir / "out" / "jobs.csv");
  CHECK(jobs["a"].start == 0);
  CHECK(jobs["a"].end == doctest::Approx(15640));
  CHECK(jobs["n"].end == doctest::Approx(35.4));
  CHECK(jobs["b"].start == 10);
  CHECK(jobs["b"].end == doctest::Approx(9394));
  std::filesystem::remove_all(dir);
}

TEST_CASE("real data: Pollux workload-1 and the measured profiles") {
  const std::string workload = "traces/pollux-workloads/workload-1.csv";
  const std::string profiles = "throughputs/pollux-profiles";
  test::require_shared(workload);
  test::require_shared(profiles);
  const auto jobs = read_pollux(test::shared_data(workload));
  CHECK(jobs.size() == 160);
  std::map<std::string, int> per_app;
  for (const auto& j : jobs) ++per_app[j.model.substr(0, j.model.find(' '))];
  CHECK(per_app["ncf"] == 68);
  CHECK(per_app["cifar10"] == 66);
  const auto m = model(test::shared_data(profiles));
  std::string why;
  for (const auto& j : jobs) {
    REQUIRE_MESSAGE(m->can_time(j, why), j.id << ": " << why);
    // On a 16 x 4 cluster, consolidated: ceil(gpus / 4) nodes.
    const double t = seconds(*m, j, j.gpus, (j.gpus + 3) / 4);
    CHECK(t > 0);
    CHECK(t < 24 * 3600.0);
  }
  // A measured point is returned as measured: cifar10, placement "1", local batch 32 (first row).
  CHECK(seconds(*m, job("cifar10 (batch size 32)", 1), 1, 1) == doctest::Approx(0.0427886962890625));
  // ncf's only trace shape: 1 GPU at batch 32,768 (last ncf row of placement "1").
  CHECK(seconds(*m, job("ncf (batch size 32768)", 1), 1, 1) == doctest::Approx(0.02131553226047092));
}
