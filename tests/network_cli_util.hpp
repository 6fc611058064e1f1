#pragma once
// Helpers of the network and fabric fidelity CLI tests (tests/integration/test_network_cli.cpp,
// test_fabric_cli.cpp): a tiny V100 leaf-spine scenario with a CSV trace, runs of the fleetsim
// binary into an output folder, and jobs.csv / links.csv readers.
#include <doctest/doctest.h>

#include <filesystem>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.hpp"

namespace fleetsim::test {

struct Cluster {
  int nodes = 4, gpus = 1, per_leaf = 2;
  double oversubscription = 2.0;
  std::string policy = "fifo";
};

inline std::string scenario(const Cluster& c, const std::string& fidelity) {
  std::ostringstream s;
  s << "seed = 7\n[cluster]\n[[cluster.pool]]\nname = \"p\"\nnodes = " << c.nodes
    << "\ngpus_per_node = " << c.gpus
    << "\ngpu = \"V100\"\n[cluster.network]\nnodes_per_leaf = " << c.per_leaf
    << "\noversubscription = " << c.oversubscription << "\nnic_gbps = 100\n"
    << "[workload]\nformat = \"csv\"\npath = \"trace.csv\"\n[workload.columns]\nsubmit = \"submit\"\n"
    << "duration = \"duration\"\ngpus = \"gpus\"\n[scheduler]\npolicy = \"" << c.policy
    << "\"\nplacement = \"first-fit\"\n"
    << "[execution]\nfidelity = \"" << fidelity << "\"\n";
  return s.str();
}

/// `fleetsim run` of a scenario file with extra --set arguments into `out`, which it returns.
inline std::filesystem::path run_file(const std::string& file, const std::filesystem::path& out,
                                      const std::string& sets = "") {
  const auto r = run_fleetsim("run " + file + " --quiet --out " + out.string() + " " + sets);
  REQUIRE_MESSAGE(r.code == 0, r.output);
  return out;
}

/// Runs the scenario with extra --set arguments into dir/out_<tag>; returns that folder.
inline std::filesystem::path run(const std::filesystem::path& dir, const Cluster& c,
                                 const std::string& fidelity, const std::string& tag,
                                 const std::string& sets = "") {
  write_file(dir / "s.toml", scenario(c, fidelity));
  return run_file((dir / "s.toml").string(), dir / ("out_" + tag), sets);
}

/// Gigabytes over all links in an output folder's links.csv (its last column).
inline double links_gb(const std::filesystem::path& out) {
  std::istringstream in(read_file(out / "links.csv"));
  std::string line;
  std::getline(in, line);
  double gb = 0;
  while (std::getline(in, line)) gb += std::stod(line.substr(line.rfind(',') + 1));
  return gb;
}

/// Column `name` of jobs.csv, one value per job (job ids have no commas here).
inline std::vector<double> column(const std::filesystem::path& out, const std::string& name) {
  std::istringstream in(read_file(out / "jobs.csv"));
  std::string line;
  std::getline(in, line);
  int col = -1, k = 0;
  std::istringstream h(line);
  for (std::string f; std::getline(h, f, ','); ++k)
    if (f == name) col = k;
  REQUIRE_MESSAGE(col >= 0, name);
  std::vector<double> v;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string f;
    for (int i = 0; i <= col; ++i) std::getline(row, f, ',');
    v.push_back(std::stod(f));
  }
  return v;
}

/// Sum of column `name` of jobs.csv.
inline double total(const std::filesystem::path& out, const std::string& name) {
  const auto v = column(out, name);
  return std::accumulate(v.begin(), v.end(), 0.0);
}

/// Runs the trace in `dir` in the delay fidelity and in `fidelity` on cluster `c`: every job must keep
/// the delay timing exactly (nothing slows it).
inline void check_delay_timing(const std::filesystem::path& dir, const Cluster& c,
                               const std::string& fidelity) {
  const auto delay = run(dir, c, "delay", "delay");
  const auto other = run(dir, c, fidelity, fidelity);
  CHECK(column(other, "jct_s") == column(delay, "jct_s"));
  CHECK(column(other, "end_s") == column(delay, "end_s"));
}

}  // namespace fleetsim::test
