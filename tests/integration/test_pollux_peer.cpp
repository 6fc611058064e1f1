// Peer fidelity (issue 13, item 3): the Tiresias baseline of Pollux (OSDI'21) on its workloads, against
// the mean JCTs Pollux's own simulator gives (petuum/adaptdl, branch osdi21-artifact,
// simulator/results-jobload/tiresias-1.0/summary.json; the same numbers when its simulator is rerun).
// scenarios/pollux.toml (tiresias-pollux, most-free, 30 s per allocation, the pollux job model) on
// workloads 1-5 of ../shared/data/traces/pollux-workloads. The bar is 5%; fleetsim is within
// 0.4% on all five, so each case asserts 1% to catch a regression. Needs ../shared (skips otherwise).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "tests/test_util.hpp"

using namespace fleetsim;

namespace {

double mean_jct(int workload, const std::string& policy = "tiresias-pollux") {
  const std::string trace = "traces/pollux-workloads/workload-" + std::to_string(workload) + ".csv";
  test::require_shared(trace);
  test::require_shared("throughputs/pollux-profiles");
  const auto dir = test::temp_dir("pollux-peer-" + std::to_string(workload));
  const Scenario sc =
      load_scenario(std::string(FLEETSIM_SOURCE_DIR) + "/scenarios/pollux.toml",
                    {"workload.path=" + test::shared_path(trace),
                     "execution.pollux_profiles=" + test::shared_path("throughputs/pollux-profiles"),
                     "output.dir=" + (dir / "out").string(), "scheduler.policy=" + policy});
  RunOptions opt;
  opt.quiet = true;
  const auto summary = run_scenario(sc, opt).summary;
  CHECK(summary["completed"] == 160);
  CHECK(summary["skipped"] == 0);
  std::filesystem::remove_all(dir);
  return summary["mean_jct_s"].get<double>();
}

}  // namespace

TEST_CASE("pollux peer: tiresias on workload 1 within 1% of Pollux's simulator (2473.65 s)") {
  CHECK(mean_jct(1) == doctest::Approx(2473.65).epsilon(0.01));
}
TEST_CASE("pollux peer: tiresias on workload 2 within 1% of Pollux's simulator (5144.96 s)") {
  CHECK(mean_jct(2) == doctest::Approx(5144.96).epsilon(0.01));
}
TEST_CASE("pollux peer: tiresias on workload 3 within 1% of Pollux's simulator (3876.26 s)") {
  CHECK(mean_jct(3) == doctest::Approx(3876.26).epsilon(0.01));
}
TEST_CASE("pollux peer: tiresias on workload 4 within 1% of Pollux's simulator (3280.26 s)") {
  CHECK(mean_jct(4) == doctest::Approx(3280.26).epsilon(0.01));
}
TEST_CASE("pollux peer: tiresias on workload 5 within 1% of Pollux's simulator (3501.01 s)") {
  CHECK(mean_jct(5) == doctest::Approx(3501.01).epsilon(0.01));
}

// Optimus+Oracle (elastic GPU counts): the peer's published means (results-jobload/optimus-1.0); the
// issue's bar is 10%; fleetsim is 0.3-2.5% below on workloads 1-5, asserted within 5%.
TEST_CASE("pollux peer: optimus on workload 1 within 5% of Pollux's simulator (4087.06 s)") {
  CHECK(mean_jct(1, "optimus") == doctest::Approx(4087.06).epsilon(0.05));
}
TEST_CASE("pollux peer: optimus on workload 2 within 5% of Pollux's simulator (6913.88 s)") {
  CHECK(mean_jct(2, "optimus") == doctest::Approx(6913.88).epsilon(0.05));
}
TEST_CASE("pollux peer: optimus on workload 3 within 5% of Pollux's simulator (3944.01 s)") {
  CHECK(mean_jct(3, "optimus") == doctest::Approx(3944.01).epsilon(0.05));
}
TEST_CASE("pollux peer: optimus on workload 4 within 5% of Pollux's simulator (5967.75 s)") {
  CHECK(mean_jct(4, "optimus") == doctest::Approx(5967.75).epsilon(0.05));
}
TEST_CASE("pollux peer: optimus on workload 5 within 5% of Pollux's simulator (5656.25 s)") {
  CHECK(mean_jct(5, "optimus") == doctest::Approx(5656.25).epsilon(0.05));
}

// Pollux itself (goodput-maximising genetic search, adaptive batch sizes): the peer's published means
// (results-jobload/pollux-1.0; its optimizer, pymoo, is not installed here, so it was not rerun). The
// issue's bar is 10% on workloads 1-5.
TEST_CASE("pollux peer: pollux on workload 1 within 10% of Pollux's simulator (2088.77 s)") {
  CHECK(mean_jct(1, "pollux") == doctest::Approx(2088.77).epsilon(0.10));
}
TEST_CASE("pollux peer: pollux on workload 2 within 10% of Pollux's simulator (3322.94 s)") {
  CHECK(mean_jct(2, "pollux") == doctest::Approx(3322.94).epsilon(0.10));
}
TEST_CASE("pollux peer: pollux on workload 3 within 10% of Pollux's simulator (2188.49 s)") {
  CHECK(mean_jct(3, "pollux") == doctest::Approx(2188.49).epsilon(0.10));
}
TEST_CASE("pollux peer: pollux on workload 4 within 10% of Pollux's simulator (2720.98 s)") {
  CHECK(mean_jct(4, "pollux") == doctest::Approx(2720.98).epsilon(0.10));
}
TEST_CASE("pollux peer: pollux on workload 5 within 10% of Pollux's simulator (2673.70 s)") {
  CHECK(mean_jct(5, "pollux") == doctest::Approx(2673.70).epsilon(0.10));
}
