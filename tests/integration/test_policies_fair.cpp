// Fairness-oriented policies (themis, gavel, gandiva) and the finish-time fairness metric, on tiny
// hand-built cases whose outcome is derived by hand. One simulation per TEST_CASE (SimGrid's
// engine is one per process).
#include <doctest/doctest.h>

#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "sim/metrics/summary.hpp"
#include "tests/sim_harness.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;

namespace {

const char* kOneGpu = "[[cluster.pool]]\nname = \"n\"\nnodes = 1\ngpus_per_node = 1\ngpu = \"V100\"\n";
const char* kNoRestartCost = "[execution]\nrestart_overhead_s = 0\n";

// One V100 node and one K80 node, one GPU each; V100 first, so that type-agnostic placement gives
// the first job the V100.
const char* kV100AndK80 =
    "[[cluster.pool]]\nname = \"v\"\nnodes = 1\ngpus_per_node = 1\ngpu = \"V100\"\n"
    "[[cluster.pool]]\nname = \"k\"\nnodes = 1\ngpus_per_node = 1\ngpu = \"K80\"\n";
// Gavel-format rates (steps/s): "Fast" runs 4x faster on a V100 than on a K80, "Even" the same.
const char* kRates =
    R"json({"v100": {"('Fast', 1)": {"null": 4.0}, "('Even', 1)": {"null": 1.0}},
        "k80":  {"('Fast', 1)": {"null": 1.0}, "('Even', 1)": {"null": 1.0}}})json";
// E (1000 steps) comes first in the trace, F (4000 steps) second, both at t = 0.
const char* kTypedTrace = "id,submit,duration,gpus,steps,model\nE,0,1,1,1000,Even\nF,0,1,1,4000,Fast\n";

/// The V100/K80 case with the throughput job model (gavel sees its rates through the launcher).
test::TinyRun run_typed(const std::string& policy) {
  const auto dir = test::temp_dir("rates");
  const auto rates = (dir / "rates.json").string();
  test::write_file(rates, kRates);
  std::string extra = "[execution]\njob_model = \"throughput\"\nthroughput_table = \"" + rates + "\"\n";
  auto r = test::simulate_tiny(kV100AndK80, kTypedTrace, policy, "first-fit", extra,
                               "steps = \"steps\"\nmodel = \"model\"\n");
  std::filesystem::remove_all(dir);
  return r;
}

}  // namespace

TEST_CASE("themis: at the lease end the GPU goes to the job with the worst finish-time fairness") {
  // One GPU, leases of 100 s. A (t=0, 1000 s) starts at once. B (t=10, 100 s) waits. At A's lease
  // end (t=100) N = 2 jobs share C = 1 GPU, so T_independent = 2 x run time alone:
  //   rho_A = (100 + 900) / 2000 = 0.5      rho_B = (90 + 100) / 200 = 0.95
  // With f = 0.8 only floor(0.8 x 2) = 1 contender, B, is offered the GPU: A is preempted, B runs
  // 100..200, A resumes at 200 (no restart cost here) and ends at 200 + 900 = 1100.
  auto r =
      test::simulate_tiny(kOneGpu, "id,submit,duration,gpus\nA,0,1000,1\nB,10,100,1\n", "themis", "first-fit",
                          std::string(kNoRestartCost) + "[scheduler.options]\nlease_s = 100\n");
  CHECK(r.jobs["A"].start == 0);
  CHECK(r.jobs["B"].start == doctest::Approx(100));
  CHECK(r.jobs["B"].end == doctest::Approx(200));
  CHECK(r.jobs["A"].end == doctest::Approx(1100));
  CHECK(r.jobs["A"].restarts == 1);
  CHECK(r.jobs["A"].preempted == doctest::Approx(100));
}

TEST_CASE("themis: a job keeps its GPU until its lease ends") {
  // Same jobs with 600 s leases: B must wait for A's lease end at t=600 (rho_B = 690/200 > rho_A
  // = 1000/2000), runs 600..700, and A resumes at 700, ending at 700 + 400 = 1100.
  auto r = test::simulate_tiny(kOneGpu, "id,submit,duration,gpus\nA,0,1000,1\nB,10,100,1\n", "themis",
                               "first-fit", kNoRestartCost);
  CHECK(r.jobs["B"].start == doctest::Approx(600));
  CHECK(r.jobs["B"].end == doctest::Approx(700));
  CHECK(r.jobs["A"].end == doctest::Approx(1100));
}

TEST_CASE("themis: an out-of-range fairness_knob is an input error") {
  CHECK_THROWS_AS(test::simulate_tiny(kOneGpu, "id,submit,duration,gpus\nA,0,10,1\n", "themis", "first-fit",
                                      "[scheduler.options]\nfairness_knob = 1.5\n"),
                  InputError);
}

TEST_CASE("gavel: the job that is faster on the V100 gets the V100") {
  // The LP of this case is solved by hand in test_gavel_lp.cpp ("second stage"): X_F = (V100 1,
  // K80 0), X_E = (0, 1). So F runs 4000 steps at 4/s on the V100 and E 1000 at 1/s on the K80,
  // both from t=0 (the first round starts with the first arrival) to t=1000.
  auto r = run_typed("gavel");
  CHECK(r.jobs["F"].gpu_type == "V100");
  CHECK(r.jobs["E"].gpu_type == "K80");
  CHECK(r.jobs["F"].start == 0);
  CHECK(r.jobs["F"].end == doctest::Approx(1000));
  CHECK(r.jobs["E"].end == doctest::Approx(1000));
}

TEST_CASE("gavel control: type-agnostic fifo gives the V100 to the first job instead") {
  // E takes the first node's V100 (1000 s) and F gets the K80: 4000 steps at 1/s = 4000 s.
  auto r = run_typed("fifo");
  CHECK(r.jobs["E"].gpu_type == "V100");
  CHECK(r.jobs["F"].gpu_type == "K80");
  CHECK(r.jobs["F"].end == doctest::Approx(4000));
}

TEST_CASE("gavel: two jobs on one GPU take turns round by round") {
  // X_A = X_B = 1/2. Priority = X / (share of the job's rounds it ran): a job that has not run
  // yet comes first; ties go to larger X, then to the job already running, then arrival order.
  // Rounds of 100 s: A, B, B, A, A, B, B, ... Each needs 10 rounds: B's 10th is round 18
  // (1800..1900), A's is round 19 (1900..2000). A restarts at 300, 700, 1100, 1500, 1900 (5),
  // B at 500, 900, 1300, 1700 (4).
  auto r =
      test::simulate_tiny(kOneGpu, "id,submit,duration,gpus\nA,0,1000,1\nB,0,1000,1\n", "gavel", "first-fit",
                          std::string(kNoRestartCost) + "[scheduler.options]\nround_s = 100\n");
  CHECK(r.jobs["A"].start == 0);
  CHECK(r.jobs["B"].start == doctest::Approx(100));
  CHECK(r.jobs["B"].end == doctest::Approx(1900));
  CHECK(r.jobs["A"].end == doctest::Approx(2000));
  CHECK(r.jobs["A"].restarts == 5);
  CHECK(r.jobs["B"].restarts == 4);
}

TEST_CASE("gandiva: time-slicing starts a queued job before the running one ends") {
  // One GPU, 60 s slices, restart cost 10 s. A (t=0, 100 s) runs 0..60; its slice is over and B
  // (t=10, 50 s, same size) is queued, so A is suspended and B runs 60..110 (a first start: no
  // restart cost). A resumes at 110, pays 10 s, and does its remaining 40 s: ends at 160.
  auto r = test::simulate_tiny(kOneGpu, "id,submit,duration,gpus\nA,0,100,1\nB,10,50,1\n", "gandiva",
                               "first-fit", "[execution]\nrestart_overhead_s = 10\n");
  CHECK(r.jobs["B"].start == doctest::Approx(60));
  CHECK(r.jobs["B"].end == doctest::Approx(110));
  CHECK(r.jobs["A"].end == doctest::Approx(160));
  CHECK(r.jobs["A"].restarts == 1);
  CHECK(r.jobs["A"].preempted == doctest::Approx(50));
  CHECK(r.summary["restarts"].get<long>() == 1);
  CHECK(r.summary["wasted_gpu_s"].get<double>() == doctest::Approx(10));
}

TEST_CASE("fairness: finish-time fairness rho of two jobs under fifo") {
  // One GPU. A (t=0, 100 s) runs 0..100; B (t=50, 100 s) waits and runs 100..200.
  // Active jobs: 1 on [0,50), 2 on [50,100), 1 on [100,200).
  //   A: N_avg = (50 x 1 + 50 x 2) / 100 = 1.5, T_ind = 100 x 1.5 = 150, rho = 100 / 150 = 2/3
  //   B: N_avg = (50 x 2 + 100 x 1) / 150 = 4/3, T_ind = 100 x 4/3, rho = 150 / (400/3) = 1.125
  auto r =
      test::simulate_tiny(kOneGpu, "id,submit,duration,gpus\nA,0,100,1\nB,50,100,1\n", "fifo", "first-fit");
  CHECK(r.summary["rho_mean"].get<double>() == doctest::Approx((2.0 / 3.0 + 1.125) / 2));
  CHECK(r.summary["rho_max"].get<double>() == doctest::Approx(1.125));
  CHECK(r.summary["rho_share_above_1"].get<double>() == doctest::Approx(0.5));
  CHECK(format_summary(r.summary).find("fairness rho") != std::string::npos);
}
