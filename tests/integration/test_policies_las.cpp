// Attained-service policies (las, tiresias, tiresias-gittins) on tiny platforms, with completion
// times derived by hand. One simulation per TEST_CASE (SimGrid: one engine per process). All jobs
// take the whole 4-GPU node, so attained service grows at 4 GPU-s per second of running.
#include <doctest/doctest.h>

#include <string>

#include "tests/sim_harness.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;

namespace {

const char* kOneNode4 = "[[cluster.pool]]\nname = \"n\"\nnodes = 1\ngpus_per_node = 4\ngpu = \"V100\"\n";
const char* kOverhead10 = "[execution]\nrestart_overhead_s = 10\n";

// A (2000 s) runs from 0; B (300 s) arrives at 100.
const char* kLongShort = "id,submit,duration,gpus\nA,0,2000,4\nB,100,300,4\n";

// Completed jobs P1 (service 4 x 1000 = 4000 GPU-s) and P2 (4 x 2000 = 8000) set the Gittins
// distribution; X runs 3000..4000 (4000 GPU-s, in Q1 since 3900) and is preempted by the new Y,
// which is itself in Q1 from 4900 and preempted at 5100 (4 x 1100 = 4400 GPU-s) by W (5100..5200).
// At 5200 X and Y wait in Q1 with 500 s and 400 s of work left.
const char* kGittinsTrace =
    "id,submit,duration,gpus\nP1,0,1000,4\nP2,1000,2000,4\nX,3000,1500,4\nY,4000,1500,4\nW,5100,100,4\n";

}  // namespace

TEST_CASE("las: at the next quantum tick a new job overtakes one with more attained service") {
  // Ticks every 600 s. B waits from 100 (no preemption between ticks). At 600 A has 2400 GPU-s > B's
  // 0: A is preempted, B runs 600..900. A restarts at 900: 10 s overhead + 1400 s left -> 2310.
  auto r = test::simulate_tiny(kOneNode4, kLongShort, "las", "first-fit", kOverhead10);
  CHECK(r.jobs["B"].start == doctest::Approx(600));
  CHECK(r.jobs["B"].end == doctest::Approx(900));
  CHECK(r.jobs["A"].restarts == 1);
  CHECK(r.jobs["A"].preempted == doctest::Approx(300));
  CHECK(r.jobs["A"].end == doctest::Approx(2310));
  CHECK(r.jobs["B"].restarts == 0);
}

TEST_CASE("las: quantum_s sets the preemption ticks") {
  // quantum 250 s: first tick after B's arrival at 250; A (1000 GPU-s) is preempted, B runs
  // 250..550, A restarts at 550: 10 + 1750 s left -> 2310. At 500 (a tick) A waits with 1000 GPU-s
  // while B has 1000 GPU-s too: not strictly more, so B keeps running.
  auto r = test::simulate_tiny(kOneNode4, kLongShort, "las", "first-fit",
                               std::string(kOverhead10) + "[scheduler.options]\nquantum_s = 250\n");
  CHECK(r.jobs["B"].start == doctest::Approx(250));
  CHECK(r.jobs["B"].end == doctest::Approx(550));
  CHECK(r.jobs["B"].restarts == 0);
  CHECK(r.jobs["A"].restarts == 1);
  CHECK(r.jobs["A"].end == doctest::Approx(2310));
}

TEST_CASE("tiresias: a job demoted at its threshold is overtaken by a newer job") {
  // Default threshold 3600 GPU-s: A (4 GPUs) crosses it at 900 and drops to Q1. Until then B waits
  // (same queue: no preemption). At 900 B (Q0) preempts A and runs 900..1200; A restarts at 1200:
  // 10 s overhead + 1100 s left -> 2310.
  auto r = test::simulate_tiny(kOneNode4, kLongShort, "tiresias", "first-fit", kOverhead10);
  CHECK(r.jobs["B"].start == doctest::Approx(900));
  CHECK(r.jobs["B"].end == doctest::Approx(1200));
  CHECK(r.jobs["A"].restarts == 1);
  CHECK(r.jobs["A"].preempted == doctest::Approx(300));
  CHECK(r.jobs["A"].end == doctest::Approx(2310));
}

TEST_CASE("tiresias: promote_after sends a starving job back to the top queue") {
  // Threshold 2000 GPU-s (500 s on 4 GPUs). A runs 0..600 (Q1 from 500) and is preempted at 600 by B
  // (Q0), which drops to Q1 at 1100 but keeps the node (same queue). With promote_after = 1, A has
  // waited as long as it ran (600 s) at 1200: back to Q0, it preempts B, restarts at 1200 and ends
  // at 1200 + 10 + 400 = 1610. B (600 s done) restarts at 1610: 1610 + 10 + 1400 = 3020.
  auto r = test::simulate_tiny(
      kOneNode4, "id,submit,duration,gpus\nA,0,1000,4\nB,600,2000,4\n", "tiresias", "first-fit",
      std::string(kOverhead10) + "[scheduler.options]\nthresholds_gpu_s = [2000]\npromote_after = 1\n");
  CHECK(r.jobs["A"].restarts == 1);
  CHECK(r.jobs["A"].preempted == doctest::Approx(600));
  CHECK(r.jobs["A"].end == doctest::Approx(1610));
  CHECK(r.jobs["B"].restarts == 1);
  CHECK(r.jobs["B"].preempted == doctest::Approx(410));
  CHECK(r.jobs["B"].end == doctest::Approx(3020));
}

TEST_CASE("tiresias: FIFO within a queue") {
  // kGittinsTrace: at 5200 X (earlier arrival) restarts first: 5200 + 10 + 500 = 5710; then Y:
  // 5710 + 10 + 400 = 6120.
  auto r = test::simulate_tiny(kOneNode4, kGittinsTrace, "tiresias", "first-fit", kOverhead10);
  CHECK(r.jobs["Y"].start == doctest::Approx(4000));
  CHECK(r.jobs["W"].start == doctest::Approx(5100));
  CHECK(r.jobs["X"].restarts == 1);
  CHECK(r.jobs["X"].end == doctest::Approx(5710));
  CHECK(r.jobs["Y"].restarts == 1);
  CHECK(r.jobs["Y"].end == doctest::Approx(6120));
}

TEST_CASE("tiresias-gittins: the higher Gittins index goes first within a queue") {
  // Completed services at 5200: {400 (W), 4000, 8000}; quantum D = 3600 (the threshold).
  // G(a) = P(S - a <= D | S > a) / E[min(S - a, D) | S > a]:
  //   X, a = 4000: only 8000 is larger and 8000 - 4000 > D -> G = 0 / 3600 = 0;
  //   Y, a = 4400: 8000 - 4400 = 3600 <= D -> G = 1 / 3600.
  // So Y restarts first although X arrived earlier: Y 5200 + 10 + 400 = 5610, X 5610 + 10 + 500 = 6120.
  auto r = test::simulate_tiny(kOneNode4, kGittinsTrace, "tiresias-gittins", "first-fit", kOverhead10);
  CHECK(r.jobs["W"].start == doctest::Approx(5100));
  CHECK(r.jobs["Y"].restarts == 1);
  CHECK(r.jobs["Y"].end == doctest::Approx(5610));
  CHECK(r.jobs["X"].restarts == 1);
  CHECK(r.jobs["X"].end == doctest::Approx(6120));
}

TEST_CASE("tiresias: an unknown option is an input error naming it") {
  // Options are checked before the simulation starts: no SimGrid engine is created here.
  const std::string bad = "[scheduler.options]\nthresholds = 5\n";
  CHECK_THROWS_AS(test::simulate_tiny(kOneNode4, kLongShort, "tiresias", "first-fit", bad),
                  fleetsim::InputError);
  bool thrown = false;
  try {
    test::simulate_tiny(kOneNode4, kLongShort, "tiresias", "first-fit", bad);
  } catch (const fleetsim::InputError& e) {
    thrown = true;
    const std::string msg = e.what();
    CHECK(msg.find("unknown option 'thresholds'") != std::string::npos);
    CHECK(msg.find("thresholds_gpu_s") != std::string::npos);  // the valid knobs are listed
  }
  CHECK(thrown);
}
