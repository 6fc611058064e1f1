// Streamed outputs and released job state (issue 17): jobs.csv goes through sorted spill runs, the
// time series is written as the run goes and the engine reuses a finished job's state. On a
// preemptive policy (restarts: state reused while other jobs are preempted and resumed) the outputs
// must equal, byte for byte, those of the writer that kept every job (tests/golden/quickstart-800-las.*,
// written by fleetsim before streaming), and two runs must be identical.
#include <doctest/doctest.h>

#include "tests/test_util.hpp"

using namespace fleetsim::test;

namespace {

struct Outputs {
  std::string jobs, timeseries, summary;
};

Outputs run_quickstart_las(const std::string& tag) {
  const auto dir = temp_dir("streamed-" + tag);
  const auto r = run_fleetsim("run " + std::string(FLEETSIM_SOURCE_DIR) +
                              "/scenarios/quickstart.toml --quiet --set scheduler.policy=las "
                              "--set workload.jobs=800 --out " +
                              dir.string());
  REQUIRE_MESSAGE(r.code == 0, r.output);
  Outputs o{read_file(dir / "jobs.csv"), read_file(dir / "timeseries.csv"), read_file(dir / "summary.json")};
  CHECK_FALSE(std::filesystem::exists(dir / "jobs.csv.runs"));
  std::filesystem::remove_all(dir);
  return o;
}

}  // namespace

TEST_CASE("streamed jobs.csv and timeseries.csv equal the kept-in-memory writer's, and runs are identical") {
  const Outputs a = run_quickstart_las("a");
  const auto golden = std::filesystem::path(FLEETSIM_SOURCE_DIR) / "tests" / "golden";
  CHECK(a.jobs == read_file(golden / "quickstart-800-las.jobs.csv"));
  CHECK(a.timeseries == read_file(golden / "quickstart-800-las.timeseries.csv"));
  const Outputs b = run_quickstart_las("b");
  CHECK(a.jobs == b.jobs);
  CHECK(a.timeseries == b.timeseries);
  const auto no_wall = [](std::string s) { return s.substr(0, s.find("\"wall_s\"")); };
  CHECK(no_wall(a.summary) == no_wall(b.summary));
}
