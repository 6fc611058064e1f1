// Tiny platforms with completion times derived by hand (each TEST_CASE runs in its own process:
// SimGrid's engine is one per process).
#include <doctest/doctest.h>

#include <map>

#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "tests/sim_harness.hpp"
#include "workloads/base/text.hpp"

using namespace fleetsim;

namespace {

using Row = test::JobRow;

std::map<std::string, Row> simulate(const std::string& pools, const std::string& trace,
                                    const std::string& policy, const std::string& placement,
                                    nlohmann::ordered_json* summary = nullptr) {
  auto r = test::simulate_tiny(pools, trace, policy, placement);
  if (summary != nullptr) *summary = r.summary;
  return r.jobs;
}

const char* kOneNode4 = "[[cluster.pool]]\nname = \"n\"\nnodes = 1\ngpus_per_node = 4\ngpu = \"V100\"\n";

// A: t=0, 2 GPUs, 100 s.  B: t=10, 4 GPUs, 50 s.  C: t=20, 1 GPU, 30 s.  One node of 4 GPUs.
const char* kTrace3 = "id,submit,duration,gpus\nA,0,100,2\nB,10,50,4\nC,20,30,1\n";

}  // namespace

TEST_CASE("fifo: the head blocks the queue (hand-derived times)") {
  // A runs 0..100. B needs all 4 GPUs: waits for A, runs 100..150. C is behind B (strict FIFO)
  // although 2 GPUs are free at t=20: it starts when B ends, 150..180.
  auto r = simulate(kOneNode4, kTrace3, "fifo", "first-fit");
  CHECK(r["A"].start == 0);
  CHECK(r["A"].end == 100);
  CHECK(r["B"].start == 100);
  CHECK(r["B"].end == 150);
  CHECK(r["C"].start == 150);
  CHECK(r["C"].end == 180);
}

TEST_CASE("fifo-skip: a later job that fits starts at once") {
  // A 0..100; B waits for 4 free GPUs; C fits beside A at t=20 and runs 20..50; B runs 100..150.
  nlohmann::ordered_json s;
  auto r = simulate(kOneNode4, kTrace3, "fifo-skip", "first-fit", &s);
  CHECK(r["A"].end == 100);
  CHECK(r["C"].start == 20);
  CHECK(r["C"].end == 50);
  CHECK(r["B"].start == 100);
  CHECK(r["B"].end == 150);
  // JCTs 100, 140, 30 -> mean 90; waits 0, 90, 0 -> mean 30; makespan 150.
  CHECK(s["mean_jct_s"].get<double>() == doctest::Approx(90));
  CHECK(s["mean_wait_s"].get<double>() == doctest::Approx(30));
  CHECK(s["makespan_s"].get<double>() == doctest::Approx(150));
  // Busy GPU-seconds: A 2x100 + B 4x50 + C 1x30 = 430 over 4 GPUs x 150 s = 600 -> 0.71666...
  CHECK(s["gpu_utilization"].get<double>() == doctest::Approx(430.0 / 600.0));
}

// 4 nodes x 2 GPUs, 2 nodes per leaf (leaf 0 = nodes 0,1 and leaf 1 = nodes 2,3).
// X (t=0, 1 GPU, 100 s) lands on node 0. Y (t=1, 4 GPUs, 10 s) runs 1..11 either way, but:
//  - first-fit takes node 0's free GPU, node 1 (2), node 2 (1): 3 nodes over 2 leaves
//  - consolidate takes nodes 2 and 3: 2 nodes in one leaf.
constexpr const char* kFourNodes =
    "[[cluster.pool]]\nname = \"n\"\nnodes = 4\ngpus_per_node = 2\ngpu = \"V100\"\n";
constexpr const char* kSpreadTrace = "id,submit,duration,gpus\nX,0,100,1\nY,1,10,4\n";

TEST_CASE("multi-node job: first-fit spreads over nodes in index order") {
  auto ff = simulate(kFourNodes, kSpreadTrace, "fifo", "first-fit");
  CHECK(ff["Y"].nodes == 3);
  CHECK(ff["Y"].start == 1);
  CHECK(ff["Y"].end == 11);
}

TEST_CASE("multi-node job: consolidate uses fewest nodes within one leaf") {
  auto co = simulate(kFourNodes, kSpreadTrace, "fifo", "consolidate");
  CHECK(co["Y"].nodes == 2);
  CHECK(co["Y"].end == 11);
}

TEST_CASE("simultaneous completion and arrival: resources freed first") {
  // A (0, 4 GPUs, 50 s) ends at 50 exactly when B (50, 4 GPUs, 10 s) arrives: B starts at 50.
  auto r = simulate(kOneNode4, "id,submit,duration,gpus\nA,0,50,4\nB,50,10,4\n", "fifo", "first-fit");
  CHECK(r["B"].start == 50);
  CHECK(r["B"].end == 60);
}

TEST_CASE("two pools: GPU type reported and a job too big for the cluster is skipped, not an error") {
  const char* pools =
      "[[cluster.pool]]\nname = \"a\"\nnodes = 1\ngpus_per_node = 2\ngpu = \"A100-80GB\"\n"
      "[[cluster.pool]]\nname = \"b\"\nnodes = 1\ngpus_per_node = 2\ngpu = \"T4\"\n";
  nlohmann::ordered_json s;
  auto r =
      simulate(pools, "id,submit,duration,gpus\nP,0,10,2\nQ,0,10,2\nBIG,0,10,64\n", "fifo", "first-fit", &s);
  CHECK(r["P"].gpu_type == "A100-80GB");
  CHECK(r["Q"].gpu_type == "T4");
  CHECK(r.count("BIG") == 0);
  CHECK(s["skipped"].get<long>() == 1);
  CHECK(s["completed"].get<long>() == 2);
}

// One node with one GPU; A (t=0) and B (t=50) each ask half of it (gpu_milli 500) for 100 s.
// With colocation_slowdown 0.5 each runs at half speed while they share the GPU:
//   A alone 0..50 does half its work; shared 50..150 at speed 0.5 does the other half: A ends 150.
//   B shared 50..150 does 100 x 0.5 / 100 = half; alone 150..200 does the rest: B ends 200.
constexpr const char* kOneGpu =
    "[[cluster.pool]]\nname = \"n\"\nnodes = 1\ngpus_per_node = 1\ngpu = \"T4\"\n";
constexpr const char* kSharedTrace = "id,submit,duration,gpus,milli\nA,0,100,1,500\nB,50,100,1,500\n";

TEST_CASE("co-located jobs on a shared GPU slow each other by the configured factor") {
  auto r = test::simulate_tiny(kOneGpu, kSharedTrace, "fifo", "first-fit",
                               "[execution]\ncolocation_slowdown = 0.5\n", "gpu_milli = \"milli\"\n");
  CHECK(r.jobs["A"].start == 0);
  CHECK(r.jobs["A"].end == doctest::Approx(150));
  CHECK(r.jobs["B"].start == 50);
  CHECK(r.jobs["B"].end == doctest::Approx(200));
  CHECK(r.jobs["A"].gpus == doctest::Approx(0.5));
}

TEST_CASE("co-located jobs without a slowdown factor run at full speed") {
  auto r = test::simulate_tiny(kOneGpu, kSharedTrace, "fifo", "first-fit", "", "gpu_milli = \"milli\"\n");
  CHECK(r.jobs["A"].end == doctest::Approx(100));
  CHECK(r.jobs["B"].end == doctest::Approx(150));
}
