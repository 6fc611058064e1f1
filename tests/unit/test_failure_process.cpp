// FailureProcess (sim/failures): the cluster's failure rate is nodes x the node rate, so a job's mean
// time to failure on N nodes is 1 / (N r) — a property over cluster sizes and seeds, on the
// generated (renewal) process with repairs short against the MTBF.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "sim/app/scenario.hpp"
#include "sim/cluster/cluster_state.hpp"
#include "sim/failures/failure_config.hpp"
#include "sim/failures/failure_process.hpp"

using namespace fleetsim;

namespace {

/// Failures of an N-node cluster in [0, horizon), at `rate` per 1000 node-days, 60 s repairs.
long failures(int nodes, double rate, double horizon_s, std::uint64_t seed, double* node_rate = nullptr) {
  const std::string toml = "seed = " + std::to_string(seed) +
                           "\n[cluster]\n[[cluster.pool]]\nnodes = " + std::to_string(nodes) +
                           "\ngpus_per_node = 8\n[workload]\nformat = \"synthetic\"\n" +
                           "[failures]\nrate_per_1000_node_days = " + std::to_string(rate) +
                           "\nrepair_median_s = 60\nrepair_sigma = 0.1\n";
  const Scenario sc = parse_scenario(toml, "f.toml", "/tmp");
  const auto config = FailureConfig::from(sc.failures, sc.seed, sc.cluster.nodes.size());
  REQUIRE(config.has_value());
  const ClusterState cluster(sc.cluster);
  FailureProcess p(*config, cluster, nullptr);
  if (node_rate != nullptr) *node_rate = p.node_rate_per_s();
  long n = 0;
  while (p.next_s() < horizon_s) {
    p.pop();
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("failure process: the cluster fails at N x r, so MTTF scales as 1 / (N r)") {
  const double rate = 10;  // per 1000 node-days
  const double r = rate / 1000 / 86400;
  for (const int nodes : {16, 64, 256}) {
    for (const std::uint64_t seed : {1, 2}) {
      CAPTURE(nodes);
      CAPTURE(seed);
      // About 4,000 failures expected: the count's relative sd is 1.6%.
      const double horizon = 4000 / (nodes * r);
      double node_rate = 0;
      const long n = failures(nodes, rate, horizon, seed, &node_rate);
      CHECK(node_rate == doctest::Approx(r).epsilon(1e-9));
      const double expected = nodes * r * horizon;
      CHECK(std::abs(static_cast<double>(n) / expected - 1) < 0.06);
      // The empirical MTTF of the whole cluster.
      const double mttf = horizon / static_cast<double>(n);
      CHECK(mttf * nodes * r == doctest::Approx(1).epsilon(0.06));
    }
  }
}
