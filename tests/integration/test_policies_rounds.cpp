// tiresias-pollux (Tiresias as Pollux's simulator runs it) and the most-free placer, on tiny
// platforms with completion times derived by hand. One simulation per TEST_CASE.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "tests/sim_harness.hpp"
#include "tests/test_util.hpp"

using namespace fleetsim;

namespace {

const char* kTwoNodes4 = "[[cluster.pool]]\nname = \"n\"\nnodes = 2\ngpus_per_node = 4\ngpu = \"V100\"\n";
const char* kOverheads30 = "[execution]\nstart_overhead_s = 30\nrestart_overhead_s = 30\n";
// A: 4 GPUs, 100 s of work, at 0. B: all 8 GPUs, 100 s, at 10.
const char* kSmallBig = "id,submit,duration,gpus\nA,0,100,4\nB,10,100,8\n";

}  // namespace

TEST_CASE("tiresias-pollux: decisions only at 60 s rounds, 30 s on every allocation") {
  // Round 60: Q0 = [A, B]; A fits, B (8 > the 4 left) waits. A: 60 + 30 + 100 = 190. It ends between
  // rounds, so B starts at round 240: 240 + 30 + 100 = 370.
  auto r = test::simulate_tiny(kTwoNodes4, kSmallBig, "tiresias-pollux", "most-free", kOverheads30);
  CHECK(r.jobs["A"].start == doctest::Approx(60));
  CHECK(r.jobs["A"].end == doctest::Approx(190));
  CHECK(r.jobs["B"].start == doctest::Approx(240));
  CHECK(r.jobs["B"].end == doctest::Approx(370));
  CHECK(r.jobs["A"].restarts == 0);
  CHECK(r.jobs["B"].restarts == 0);
}

TEST_CASE("tiresias-pollux: demotion to Q1, preemption in queue order, resumption with progress kept") {
  // threshold 200 GPU-s. Round 120: A ran 60 s x 4 GPUs = 240 -> Q1 = [A]; Q0 = [B] runs, A is
  // preempted after 30 s of overhead and 30 s of work (70 s left). Round 180: B ran 60 x 8 = 480 ->
  // Q1 = [A, B]: A first, fits; B no longer fits and is preempted (70 s left). A: 180 + 30 + 70 = 280.
  // Round 300 (A ended at 280): B restarts, 300 + 30 + 70 = 400.
  auto r = test::simulate_tiny(kTwoNodes4, kSmallBig, "tiresias-pollux", "most-free",
                               std::string(kOverheads30) + "[scheduler.options]\nthreshold_gpu_s = 200\n");
  CHECK(r.jobs["A"].end == doctest::Approx(280));
  CHECK(r.jobs["A"].restarts == 1);
  CHECK(r.jobs["B"].start == doctest::Approx(120));
  CHECK(r.jobs["B"].end == doctest::Approx(400));
  CHECK(r.jobs["B"].restarts == 1);
}

TEST_CASE("most-free: the most free node first (worst fit), greedy spread when no node has enough") {
  // X (3 GPUs) -> node 0 (tie: lowest index); 1 and 4 GPUs free. Y (4) -> node 1, the most free.
  // Z (2) finds 1 free GPU in all and waits until X ends at 100, then takes node 0.
  auto r = test::simulate_tiny(kTwoNodes4, "id,submit,duration,gpus\nX,0,100,3\nY,1,1000,4\nZ,5,50,2\n",
                               "fifo-skip", "most-free");
  CHECK(r.jobs["X"].nodes == 1);
  CHECK(r.jobs["Y"].nodes == 1);
  CHECK(r.jobs["Z"].start == doctest::Approx(100));
  CHECK(r.jobs["Z"].nodes == 1);
  // S (1) -> node 0: 3 and 4 free. T (2) -> node 1 (most free, where best fit would take node 0): 3
  // and 2 free. U (4) fits no node: 3 from node 0 (most free), then 1 from node 1.
  auto s = test::simulate_tiny(kTwoNodes4, "id,submit,duration,gpus\nS,0,100,1\nT,1,100,2\nU,2,100,4\n",
                               "fifo-skip", "most-free");
  CHECK(s.jobs["S"].nodes == 1);
  CHECK(s.jobs["T"].nodes == 1);
  CHECK(s.jobs["U"].nodes == 2);
  CHECK(s.jobs["U"].start == doctest::Approx(2));
}

TEST_CASE("optimus: elastic GPU counts by marginal gain, resized jobs restart (pollux fixture model)") {
  // tests/data/pollux: cifar10 at batch 64 takes T(1) = 162.5 steps x 0.20 s = 32.5 s on 1 GPU and
  // T(2) = 162.5 x 0.12 = 19.5 s on 2 GPUs of one node; at most 64 / 32 = 2 GPUs (smallest local batch
  // 32). One node of 4 GPUs, three such jobs at t = 0, 30 s per allocation.
  // Round 60: one GPU each, the last GPU to the first largest gain 13 x 1 -> j1 (2 GPUs): 60 + 30 +
  // 19.5 = 109.5. j2, j3 on one GPU each run 30 s of their 32.5 s by round 120, where j1 is done and
  // each gets a second GPU (gain 13 x 2.5 / 32.5 > 0): both restart, 30 s + the 1/13 left of 19.5 s =
  // 1.5 s -> 151.5 (Optimus ignores the restart cost, as in Pollux's simulator).
  const auto dir = test::temp_dir("optimus");
  test::write_file(dir / "w.csv",
                   "name,time,application,num_replicas,batch_size\nj1,0,cifar10,1,64\nj2,0,cifar10,1,64\n"
                   "j3,0,cifar10,1,64\n");
  const std::string fixture = std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/pollux/profiles";
  const std::string toml =
      "[cluster]\n[[cluster.pool]]\nname = \"t4\"\nnodes = 1\ngpus_per_node = 4\ngpu = \"T4\"\n"
      "[workload]\nformat = \"pollux\"\npath = \"w.csv\"\n[execution]\njob_model = \"pollux\"\n"
      "pollux_profiles = \"" +
      fixture +
      "\"\nstart_overhead_s = 30\nrestart_overhead_s = 30\n[scheduler]\npolicy = \"optimus\"\n"
      "placement = \"most-free\"\n[output]\ndir = \"out\"\n";
  const Scenario sc = parse_scenario(toml, (dir / "o.toml").string(), dir.string());
  RunOptions opt;
  opt.quiet = true;
  run_scenario(sc, opt);
  auto jobs = test::read_jobs_csv(dir / "out" / "jobs.csv");
  CHECK(jobs["j1"].start == doctest::Approx(60));
  CHECK(jobs["j1"].end == doctest::Approx(109.5));
  CHECK(jobs["j1"].gpus == 2);
  CHECK(jobs["j1"].restarts == 0);
  CHECK(jobs["j2"].end == doctest::Approx(151.5));
  CHECK(jobs["j3"].end == doctest::Approx(151.5));
  CHECK(jobs["j2"].gpus == 2);
  CHECK(jobs["j2"].restarts == 1);
  std::filesystem::remove_all(dir);
}
