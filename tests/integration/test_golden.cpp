// Golden scenario tests on slices of real traces from ../shared/data: the full jobs.csv
// (submit, start, end per job) must match the reviewed file in tests/golden/ byte for byte.
// After an intended behaviour change, regenerate with FLEETSIM_UPDATE_GOLDEN=1 and review the diff.
#include <doctest/doctest.h>

#include <cstdlib>

#include "tests/test_util.hpp"

using namespace fleetsim::test;

namespace {

void golden(const std::string& scenario, const std::string& sets, const std::string& name) {
  require_shared();
  const auto dir = temp_dir("golden");
  const auto r = run_fleetsim("run " + std::string(FLEETSIM_SOURCE_DIR) + "/scenarios/" + scenario +
                              " --quiet " + sets + " --out " + dir.string());
  REQUIRE_MESSAGE(r.code == 0, r.output);
  const std::string got = read_file(dir / "jobs.csv");
  const auto golden_path =
      std::filesystem::path(FLEETSIM_SOURCE_DIR) / "tests" / "golden" / (name + ".jobs.csv");
  if (std::getenv("FLEETSIM_UPDATE_GOLDEN") != nullptr) write_file(golden_path, got);
  const std::string want = read_file(golden_path);
  REQUIRE_MESSAGE(!want.empty(), "missing golden file " << golden_path);
  CHECK(got.size() == want.size());
  CHECK_MESSAGE(got == want, "jobs.csv differs from " << golden_path << " (output in " << dir << ")");
  if (got == want) std::filesystem::remove_all(dir);
}

}  // namespace

TEST_CASE("golden: openb default trace, first 800 pods, real node list, fifo-skip + first-fit") {
  golden("openb.toml", "--set workload.limit=800", "openb-800-fifo-skip-first-fit");
}

TEST_CASE(
    "golden: openb default trace, first 800 pods on a contended 4-node cluster, strict fifo + consolidate") {
  // The real pods (fractional GPU shares, CPU and memory requests) on 4 nodes x 4 V100: queueing.
  golden("openb.toml",
         "--set workload.limit=800 --set cluster.nodes_csv= --set cluster.pool.0.nodes=4 "
         "--set cluster.pool.0.gpus_per_node=4 --set cluster.pool.0.gpu=V100 --set "
         "cluster.pool.0.cpus_per_node=96 "
         "--set scheduler.policy=fifo --set scheduler.placement=consolidate",
         "openb-800-small-fifo-consolidate");
}

TEST_CASE("golden: philly 6214e9, first 400 jobs, Gavel throughputs on K80/P100/V100") {
  golden("philly-6214e9.toml", "--set workload.limit=400", "philly-6214e9-400");
}
