#pragma once
// A tiny failure case for the failure tests: 8-GPU nodes, a CSV trace, a CSV fault trace and
// [failures] keys, simulated in this process (one simulation per TEST_CASE).
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "tests/sim_harness.hpp"
#include "tests/test_util.hpp"

namespace fleetsim::test {

struct FailRun {
  std::map<std::string, JobRow> jobs;
  nlohmann::ordered_json summary;
  std::string failures_csv;
  bool has_failures_csv = false;
};

/// One or more 8-GPU nodes, the jobs of `trace` (id,submit,duration,gpus), the faults of `faults`
/// (node,start,end,component) and the [failures] keys of `keys` (more sections may follow them);
/// `pool`: more [[cluster.pool]] keys (e.g. its gpu).
inline FailRun run_with_faults(int nodes, const std::string& trace, const std::string& faults,
                               const std::string& keys, const std::string& policy = "fifo",
                               const std::string& pool = "") {
  const auto dir = temp_dir("failures");
  write_file(dir / "trace.csv", trace);
  write_file(dir / "faults.csv", faults);
  const std::string toml =
      "seed = 1\n[cluster]\n[[cluster.pool]]\nnodes = " + std::to_string(nodes) + "\ngpus_per_node = 8\n" +
      pool +
      "[workload]\nformat = \"csv\"\npath = \"trace.csv\"\n"
      "[workload.columns]\nid = \"id\"\nsubmit = \"submit\"\nduration = \"duration\"\ngpus = \"gpus\"\n"
      "[scheduler]\npolicy = \"" +
      policy + "\"\nplacement = \"first-fit\"\n[output]\ndir = \"out\"\n" + keys;
  const Scenario sc = parse_scenario(toml, (dir / "f.toml").string(), dir.string());
  RunOptions opt;
  opt.quiet = true;
  FailRun r;
  r.summary = run_scenario(sc, opt).summary;
  r.jobs = read_jobs_csv(dir / "out" / "jobs.csv");
  r.has_failures_csv = std::filesystem::exists(dir / "out" / "failures.csv");
  if (r.has_failures_csv) r.failures_csv = read_file(dir / "out" / "failures.csv");
  std::filesystem::remove_all(dir);
  return r;
}

}  // namespace fleetsim::test
