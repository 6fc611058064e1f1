// sim/scheduling/README.md's example policy (tests/examples/example_policy.cpp, compiled into this test only)
// on a tiny scenario with a hand-derived order.
#include <doctest/doctest.h>

#include "tests/sim_harness.hpp"

namespace {

const char* kOneNode4 = "[[cluster.pool]]\nname = \"n\"\nnodes = 1\ngpus_per_node = 4\ngpu = \"V100\"\n";

// A: t=0, 4 GPUs, 100 s (starts at once, holds the node).  Then, while A runs:
// B: t=10, 3 GPUs, 50 s.  C: t=20, 2 GPUs, 30 s.  D: t=30, 2 GPUs, 40 s.  E: t=40, 1 GPU, 60 s.
const char* kTrace = "id,submit,duration,gpus\nA,0,100,4\nB,10,50,3\nC,20,30,2\nD,30,40,2\nE,40,60,1\n";

}  // namespace

TEST_CASE("example policy smallest-first: fewest GPUs first, ties by arrival, non-fitting skipped") {
  // t=100, A ends, 4 free; queue by size: E(1), C(2), D(2), B(3).
  //   E starts 100..160 (3 free), C starts 100..130 (1 free), D (2) and B (3) do not fit.
  // t=130, C ends, 3 free: D starts 130..170 (1 free); B does not fit.
  // t=160, E ends, 2 free: B does not fit.   t=170, D ends, 4 free: B starts 170..220.
  // (fifo would start B at 100; D before C would mean ties broken against arrival.)
  const auto r = fleetsim::test::simulate_tiny(kOneNode4, kTrace, "smallest-first", "first-fit");
  auto& j = r.jobs;
  CHECK(j.at("A").start == 0);
  CHECK(j.at("A").end == 100);
  CHECK(j.at("E").start == 100);
  CHECK(j.at("E").end == 160);
  CHECK(j.at("C").start == 100);
  CHECK(j.at("C").end == 130);
  CHECK(j.at("D").start == 130);
  CHECK(j.at("D").end == 170);
  CHECK(j.at("B").start == 170);
  CHECK(j.at("B").end == 220);
  CHECK(r.summary["policy"] == "smallest-first");
  CHECK(r.summary["restarts"] == 0);
}
