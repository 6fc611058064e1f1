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
#include "models/job/pollux_app.hpp"
#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "tests/sim_harness.hpp"
#include "tests/test_util.hpp"
#include "tests/text_checks.hpp"
#include "tests/unit/test_workloads_util.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/jobs/trace_reader.hpp"

using namespace fleetsim;
using test::contains;
using test::input_error_of;

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

/// Run time of `j` on `gpus` GPUs over `nodes` nodes (whole GPUs), split per node as `split` when given.
double seconds(const JobModel& m, const JobSpec& j, int gpus, int nodes, const std::string& gpu = "T4",
               std::vector<int> split = {}) {
  std::string why;
  const auto t = m.run_time_s(j, PlacementSummary{gpu, gpus, nodes, 1, 1000, std::move(split)}, why);
  REQUIRE_MESSAGE(t.has_value(), why);
  return *t;
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
    const std::string msg = input_error_of([&] { read_pollux(p.string()); });
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
  CHECK(contains(input_error_of([&] { read_pollux((dir / "h.csv").string()); }), "num_replicas"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("pollux model: epochs of efficient progress x measured step time, exact placements") {
  const auto m = model();
  // Batch 64 needs 100 / 1 + 100 / 1.6 = 162.5 steps (tests/data/pollux/README.md).
  // 1 GPU: batch 64 > the smallest (32) on one GPU, so one accumulation micro-step (as the artifact):
  // 2 x 32 examples, step(32) + (step(32) - sync(32)) = 0.10 + 0.10 s.
  CHECK(seconds(*m, job("cifar10 (batch size 64)"), 1, 1) == doctest::Approx(162.5 * 0.20));
  // 2 GPUs in 1 node, local 32: placement "2", 0.12 s.
  CHECK(seconds(*m, job("cifar10 (batch size 64)"), 2, 1) == doctest::Approx(162.5 * 0.12));
  // 2 GPUs over 2 nodes: placement "11", 0.30 s.
  CHECK(seconds(*m, job("cifar10 (batch size 64)"), 2, 2) == doctest::Approx(162.5 * 0.30));
  // Batch 128 (100 + 100 / (16/7) = 143.75 steps) on "2" at local 64: 0.22 s.
  CHECK(seconds(*m, job("cifar10 (batch size 128)"), 2, 1) == doctest::Approx(143.75 * 0.22));
  // Batch 96 (gain 2: 150 steps) on "11" at local 48: halfway between 0.30 and 0.40 s.
  CHECK(seconds(*m, job("cifar10 (batch size 96)"), 2, 2) == doctest::Approx(150 * 0.35));
  // The exact placement string counts, in its smallest rotation: {1, 3} and {3, 1} are "13" (0.50 s),
  // {2, 2} is "22" (0.70 s).
  CHECK(seconds(*m, job("cifar10 (batch size 128)"), 4, 2, "T4", {1, 3}) == doctest::Approx(143.75 * 0.50));
  CHECK(seconds(*m, job("cifar10 (batch size 128)"), 4, 2, "T4", {3, 1}) == doctest::Approx(143.75 * 0.50));
  CHECK(seconds(*m, job("cifar10 (batch size 128)"), 4, 2, "T4", {2, 2}) == doctest::Approx(143.75 * 0.70));
  // No split given (an estimate): spread evenly, {2, 2}.
  CHECK(seconds(*m, job("cifar10 (batch size 128)"), 4, 2) == doctest::Approx(143.75 * 0.70));
  // The step count in the trace plays no part: the length is the application's epochs.
  CHECK(seconds(*m, job("cifar10 (batch size 64)", 7), 2, 1) == doctest::Approx(162.5 * 0.12));
}

TEST_CASE("pollux model: unmeasured shapes by LinearND over (nodes, replicas, local batch)") {
  const auto m = model();
  // {1, 1, 1}, local 32: on the hull edge from (2 nodes, 2 GPUs: "11", 0.30 s) to (6, 6: 1.0 s, from
  // scalability.csv), a quarter of the way: 0.475 s. Batch 96: 150 steps.
  CHECK(seconds(*m, job("cifar10 (batch size 96)"), 3, 3, "T4", {1, 1, 1}) == doctest::Approx(150 * 0.475));
  // 12 GPUs over 8 nodes lies outside the measured hull (the artifact fails there): the grid,
  // clamped per axis, times it as 6 nodes x 12 replicas at local 32 (1.2 s). Batch 128 on 12 GPUs:
  // local ceil(128 / 12) = 11, capped at 128 / 12 -> 10, so it trains at batch 120: gain in epoch 1
  // 4 / (3 x 32 / 120 + 1) = 20 / 9, 100 + 45 = 145 steps.
  CHECK(seconds(*m, job("cifar10 (batch size 128)"), 12, 8, "T4", {2, 2, 2, 2, 1, 1, 1, 1}) ==
        doctest::Approx(145 * 1.2));
}

TEST_CASE("pollux model: other GPU types scale the compute part by FP32 peak") {
  const auto m = model();
  const double ratio = find_gpu("T4")->fp32_tflops / find_gpu("V100")->fp32_tflops;
  // Placement "1", 2 x 32 examples: 0.20 s compute, 0 sync.
  CHECK(seconds(*m, job("cifar10 (batch size 64)"), 1, 1, "V100") == doctest::Approx(162.5 * 0.20 * ratio));
  // Placement "2", local 32: 0.10 s compute + 0.02 s sync (kept).
  CHECK(seconds(*m, job("cifar10 (batch size 64)"), 2, 1, "V100") ==
        doctest::Approx(162.5 * (0.10 * ratio + 0.02)));
}

TEST_CASE("pollux model: jobs it cannot time are input errors naming the trace line") {
  JobModelParams p;
  p.settings.set("pollux_profiles", pollux_fixture("profiles"));
  p.workload.set("path", "w.csv");
  p.scenario_file = "test.toml";
  const auto m = job_models().create("pollux", p);
  std::string why;
  CHECK(m->can_time(job("cifar10 (batch size 64)"), why));
  JobSpec j = job("cifar10");
  j.source_line = 7;
  std::string msg = input_error_of([&] { m->can_time(j, why); });
  CHECK(contains(msg, "w.csv:7"));
  CHECK(contains(msg, "no batch size"));
  j.model = "bert (batch size 12)";
  msg = input_error_of([&] { m->can_time(j, why); });
  CHECK(contains(msg, "no Pollux profile for application 'bert' (profiles: cifar10, ncf)"));
  j.model = "cifar10 (batch size 256)";
  msg = input_error_of([&] { m->can_time(j, why); });
  CHECK(contains(msg, "w.csv:7"));
  CHECK(contains(msg, "batch_size"));
  CHECK(contains(msg, "outside its profiled range 32..128"));
  j.model = "cifar10 (batch size 16)";
  CHECK(contains(input_error_of([&] { m->can_time(j, why); }), "outside its profiled range"));
  CHECK_FALSE(m->run_time_s(job("cifar10 (batch size 64)"), PlacementSummary{"T4", 1, 1, 1, 500, {}}, why));
  CHECK(contains(why, "shared GPUs"));
}

TEST_CASE("pollux model: a bad profiles folder is an input error") {
  CHECK(contains(input_error_of([] { model(""); }), "execution.pollux_profiles"));
  CHECK(contains(input_error_of([] { model("/nonexistent/pollux"); }), "no such folder"));
  CHECK(contains(input_error_of([] { model(pollux_fixture("workload.csv")); }), "not a folder"));
  const auto dir = test::temp_dir("pollux-profiles");
  CHECK(contains(input_error_of([&] { model(dir.string()); }), "no application profiles"));
  std::filesystem::create_directories(dir / "app");
  test::write_file(dir / "app" / "placements.csv",
                   "placement,local_bsz,step_time,sync_time\n1,32,0.1,0\n2x,32,0.1,0\n");
  std::string msg = input_error_of([&] { model(dir.string()); });
  CHECK(contains(msg, "placements.csv:3"));
  CHECK(contains(msg, "field 'placement'"));
  test::write_file(dir / "app" / "placements.csv", "placement,local_bsz,step_time,sync_time\n1,32,0.1,0.2\n");
  msg = input_error_of([&] { model(dir.string()); });
  CHECK(contains(msg, "placements.csv:2"));
  CHECK(contains(msg, "sync_time exceeds step_time"));
  test::write_file(dir / "app" / "placements.csv", "placement,local_bsz,step_time\n1,32,0.1\n");
  CHECK(contains(input_error_of([&] { model(dir.string()); }), "sync_time"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("pollux end to end: fixture workload on one 4-GPU T4 node (hand-derived times)") {
  // a: t=0, 1 GPU, 162.5 steps x 0.20 s = 32.5 s. n: t=5, 1 GPU, 1,000 steps x 0.02 s = 20 s.
  // b: t=10, 2 GPUs in the node (placement "2", local 32, 0.12 s): 162.5 x 0.12 = 19.5 s. All fit at
  // once.
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
  CHECK(jobs["a"].end == doctest::Approx(32.5));
  CHECK(jobs["n"].end == doctest::Approx(25));
  CHECK(jobs["b"].start == 10);
  CHECK(jobs["b"].end == doctest::Approx(29.5));
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
  // A job's run time is its epochs' efficient progress over the gain, times the step: cifar10 at its
  // smallest batch (128: gain 1) on 1 GPU, placement "1" at local 128 (last row of placement "1").
  const PolluxApplication app =
      PolluxApplication::load(test::shared_data(profiles) + "/cifar10", "test.toml");
  CHECK(app.epochs() == 100);
  CHECK(app.init_batch() == 128);
  CHECK(app.max_batch() == 4096);
  CHECK(app.gain(128, 3) == doctest::Approx(1));
  const double step = app.step_times({1}, 128).step;
  CHECK(seconds(*m, job("cifar10 (batch size 128)"), 1, 1) == doctest::Approx(app.progress(100) * step));
}

TEST_CASE("real data: step times equal Pollux's simulator (scipy LinearND) on unmeasured placements") {
  const std::string profiles = "throughputs/pollux-profiles";
  test::require_shared(profiles);
  // Golden values: the artifact's Application.get_throughput (applications.py, scipy 1.10), run on the
  // same profiles. Placements with 5+ nodes (or strings never measured) go through LinearND.
  struct Case {
    const char* app;
    std::vector<int> placement;
    double local, step, sync;
  };
  const std::vector<Case> cases = {
      {"imagenet", {4, 4, 4, 4, 4, 4}, 100, 0.63682545563753923, 0.1015146131739896},
      {"imagenet", {4, 4, 4, 4, 4, 4, 4, 4}, 150, 0.82146752576033277, 0.071934691834449754},
      {"imagenet", {2, 4, 4, 4, 4, 4, 4}, 128, 0.72759664307037986, 0.07134805980523419},
      {"cifar10", {1, 1, 1, 1, 1}, 64, 0.14144494533538809, 0.08326851921081535},
      {"cifar10", std::vector<int>(16, 4), 64, 0.30169918537139889, 0.24091715087890619},
      {"bert", {2, 1, 1, 1, 1}, 12, 1.6290828411777813, 0.76123847770690922},
      {"deepspeech2", {3, 3, 3, 3, 3}, 20, 1.2586505487561226, 0.49129448151588428},
      {"cifar10", {1, 3, 2}, 100, 0.14815153385463509, 0.068059274934467492},
      {"yolov3", {4, 4}, 8, 1.6367916762828827, 1.2665243377685549},
  };
  std::map<std::string, PolluxApplication> apps;
  for (const auto& c : cases) {
    if (apps.count(c.app) == 0)
      apps.emplace(c.app, PolluxApplication::load(test::shared_data(profiles) + "/" + c.app, "test.toml"));
    const PolluxStepTimes t = apps.at(c.app).step_times(c.placement, c.local);
    CAPTURE(c.app);
    CAPTURE(c.local);
    CHECK(t.step == doctest::Approx(c.step).epsilon(1e-9));
    CHECK(t.sync == doctest::Approx(c.sync).epsilon(1e-9));
  }
}
