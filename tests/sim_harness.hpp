#pragma once
// Test harness: simulate a tiny scenario (TOML pools + a CSV trace) in this process and read back
// jobs.csv. One simulation per process (SimGrid): call it once per TEST_CASE.
#include <doctest/doctest.h>

#include <map>
#include <sstream>

#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::test {

struct JobRow {
  double submit = 0, start = 0, end = 0;
  double gpus = 0;
  std::string gpu_type;
  int nodes = 0;
  int restarts = 0;
  double preempted = 0;
};

inline std::map<std::string, JobRow> read_jobs_csv(const std::filesystem::path& csv) {
  std::map<std::string, JobRow> rows;
  std::istringstream in(read_file(csv));
  std::string line;
  std::getline(in, line);
  REQUIRE(line == "job_id,submit_s,start_s,end_s,wait_s,jct_s,gpus,gpu_type,nodes,restarts,preempted_s");
  while (std::getline(in, line)) {
    auto f = split(line, ',');
    REQUIRE(f.size() == 11);
    rows[f[0]] = {std::stod(f[1]), std::stod(f[2]), std::stod(f[3]), std::stod(f[6]), f[7],
                  std::stoi(f[8]), std::stoi(f[9]), std::stod(f[10])};
  }
  return rows;
}

struct TinyRun {
  std::map<std::string, JobRow> jobs;
  nlohmann::ordered_json summary;
};

/// `pools`: [[cluster.pool]] tables. `trace`: CSV with header id,submit,duration,gpus (other
/// mapped columns may be added through `columns`, TOML lines for [workload.columns]). `extra`:
/// more TOML appended at the end (e.g. "[scheduler.options]\nthreshold = 5\n" or
/// "[execution]\nrestart_overhead_s = 0\n").
inline TinyRun simulate_tiny(const std::string& pools, const std::string& trace, const std::string& policy,
                             const std::string& placement, const std::string& extra = "",
                             const std::string& columns = "", int nodes_per_leaf = 2) {
  const auto dir = temp_dir("tiny");
  write_file(dir / "trace.csv", trace);
  const std::string toml = "seed = 1\n[cluster]\n" + pools +
                           "[cluster.network]\nnodes_per_leaf = " + std::to_string(nodes_per_leaf) +
                           "\n[workload]\nformat = \"csv\"\npath = \"trace.csv\"\n"
                           "[workload.columns]\nid = \"id\"\nsubmit = \"submit\"\nduration = \"duration\"\n"
                           "gpus = \"gpus\"\n" +
                           columns + "[scheduler]\npolicy = \"" + policy + "\"\nplacement = \"" + placement +
                           "\"\n[output]\ndir = \"out\"\n" + extra;
  const Scenario sc = parse_scenario(toml, (dir / "tiny.toml").string(), dir.string());
  RunOptions opt;
  opt.quiet = true;
  TinyRun r;
  r.summary = run_scenario(sc, opt).summary;
  r.jobs = read_jobs_csv(dir / "out" / "jobs.csv");
  std::filesystem::remove_all(dir);
  return r;
}

}  // namespace fleetsim::test
