// Queue-ordering policies (sjf, srtf, easy-backfill) on tiny platforms, with completion times
// derived by hand. One simulation per TEST_CASE (SimGrid: one engine per process). Trace durations
// are the jobs' run times, so the run-time estimates are exact (estimate_error = 0).
#include <doctest/doctest.h>

#include "tests/sim_harness.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;

namespace {

const char* kOneNode4 = "[[cluster.pool]]\nname = \"n\"\nnodes = 1\ngpus_per_node = 4\ngpu = \"V100\"\n";
const char* kTwoNodes4 = "[[cluster.pool]]\nname = \"n\"\nnodes = 2\ngpus_per_node = 4\ngpu = \"V100\"\n";
const char* kOverhead10 = "[execution]\nrestart_overhead_s = 10\n";

// A holds the node 0..100. B (4 GPUs, 50 s), C (3 GPUs, 30 s) and D (1 GPU, 60 s) wait for it.
const char* kSjfTrace = "id,submit,duration,gpus\nA,0,100,4\nB,10,50,4\nC,20,30,3\nD,30,60,1\n";

// A (4 GPUs, 1000 s) runs from 0; B (4 GPUs, 50 s) arrives at 100; C (4 GPUs, 2000 s) at 200.
const char* kSrtfTrace = "id,submit,duration,gpus\nA,0,1000,4\nB,100,50,4\nC,200,2000,4\n";

}  // namespace

TEST_CASE("sjf: the shortest waiting job starts first and a job that does not fit is skipped") {
  // At 100 A ends; waiting by estimate: C (30) < B (50) < D (60). C takes 3 GPUs (100..130); B needs
  // 4 and is skipped; D fits the last GPU (100..160). B starts when D frees the node: 160..210.
  // (FIFO order would have run B at 100.)
  auto r = test::simulate_tiny(kOneNode4, kSjfTrace, "sjf", "first-fit");
  CHECK(r.jobs["A"].end == 100);
  CHECK(r.jobs["C"].start == 100);
  CHECK(r.jobs["C"].end == 130);
  CHECK(r.jobs["D"].start == 100);
  CHECK(r.jobs["D"].end == 160);
  CHECK(r.jobs["B"].start == 160);
  CHECK(r.jobs["B"].end == 210);
  CHECK(r.summary["restarts"].get<long>() == 0);
}

TEST_CASE("sjf: estimate_error is a knob and never preempts nor loses a job") {
  auto r = test::simulate_tiny(kOneNode4, kSjfTrace, "sjf", "first-fit",
                               "[scheduler.options]\nestimate_error = 2.0\n");
  CHECK(r.summary["completed"].get<long>() == 4);
  CHECK(r.summary["restarts"].get<long>() == 0);
  CHECK(r.jobs["A"].end == 100);  // alone at first, whatever the estimates
  // Non-preemptive: every job runs once, for its whole duration.
  CHECK(r.jobs["B"].end - r.jobs["B"].start == doctest::Approx(50));
  CHECK(r.jobs["C"].end - r.jobs["C"].start == doctest::Approx(30));
  CHECK(r.jobs["D"].end - r.jobs["D"].start == doctest::Approx(60));
}

TEST_CASE("srtf: a short arrival preempts a long job, which restarts with the overhead") {
  // At 100: A has 900 s left > B's 50 s: A is preempted, B runs 100..150. A restarts at 150, pays
  // the 10 s restart overhead and its 900 s left: ends 150 + 10 + 900 = 1060 (preempted 50 s).
  // At 200 C (2000 s) is longer than A's remaining 860 s: no preemption; C runs 1060..3060.
  auto r = test::simulate_tiny(kOneNode4, kSrtfTrace, "srtf", "first-fit", kOverhead10);
  CHECK(r.jobs["B"].start == 100);
  CHECK(r.jobs["B"].end == 150);
  CHECK(r.jobs["A"].restarts == 1);
  CHECK(r.jobs["A"].preempted == doctest::Approx(50));
  CHECK(r.jobs["A"].end == doctest::Approx(1060));
  CHECK(r.jobs["C"].restarts == 0);
  CHECK(r.jobs["C"].start == doctest::Approx(1060));
  CHECK(r.jobs["C"].end == doctest::Approx(3060));
  CHECK(r.summary["restarts"].get<long>() == 1);
  CHECK(r.summary["wasted_gpu_s"].get<double>() == doctest::Approx(40));  // 10 s x 4 GPUs
}

TEST_CASE("srtf: min_gain_s keeps a job whose remaining time is not longer by that much") {
  // At 100 A has 900 s left, B 50 s: 900 < 50 + 900, so A keeps running to 1000. Then B (shorter
  // than C) runs 1000..1050 and C 1050..3050.
  auto r = test::simulate_tiny(kOneNode4, kSrtfTrace, "srtf", "first-fit",
                               std::string(kOverhead10) + "[scheduler.options]\nmin_gain_s = 900\n");
  CHECK(r.jobs["A"].restarts == 0);
  CHECK(r.jobs["A"].end == 1000);
  CHECK(r.jobs["B"].start == 1000);
  CHECK(r.jobs["C"].start == 1050);
  CHECK(r.jobs["C"].end == 3050);
}

TEST_CASE("srtf: a negative knob is an input error") {
  CHECK_THROWS_AS(test::simulate_tiny(kOneNode4, kSrtfTrace, "srtf", "first-fit",
                                      "[scheduler.options]\nmin_gain_s = -1\n"),
                  fleetsim::InputError);
}

TEST_CASE("easy-backfill: a short job fills the hole, one that would delay the head waits") {
  // A (2 GPUs) runs 0..100. H (4 GPUs) at 10 is the blocked head: its reservation is at 100 (A's
  // end frees 2 + 2 GPUs), with no extra GPUs. S (1 GPU, 30 s) at 20 ends at 50 <= 100: backfilled,
  // 20..50. L (1 GPU, 200 s) at 30 fits now but would end at 230 > 100: refused (fifo-skip would
  // start it). H runs 100..150, then L 150..350.
  auto r =
      test::simulate_tiny(kOneNode4, "id,submit,duration,gpus\nA,0,100,2\nH,10,50,4\nS,20,30,1\nL,30,200,1\n",
                          "easy-backfill", "first-fit");
  CHECK(r.jobs["S"].start == 20);
  CHECK(r.jobs["S"].end == 50);
  CHECK(r.jobs["H"].start == 100);
  CHECK(r.jobs["H"].end == 150);
  CHECK(r.jobs["L"].start == 150);
  CHECK(r.jobs["L"].end == 350);
}

TEST_CASE("easy-backfill: long jobs may use the extra GPUs the head does not need") {
  // 8 GPUs. A (6 GPUs) runs 0..100. H (4 GPUs) at 10 is blocked: at 100 there will be 2 + 6 = 8 free
  // GPUs, 4 more than H needs (extra = 4). E and F (1 GPU, 500 s each) end after 100 but fit in the
  // extra GPUs: they start at 20 and 30. H still starts at 100 on the GPUs A frees.
  auto r = test::simulate_tiny(kTwoNodes4,
                               "id,submit,duration,gpus\nA,0,100,6\nH,10,50,4\nE,20,500,1\nF,30,500,1\n",
                               "easy-backfill", "first-fit");
  CHECK(r.jobs["E"].start == 20);
  CHECK(r.jobs["F"].start == 30);
  CHECK(r.jobs["H"].start == 100);
  CHECK(r.jobs["H"].end == 150);
  CHECK(r.jobs["F"].end == 530);
}
