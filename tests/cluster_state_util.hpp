#pragma once
// Helpers shared by the ClusterState tests (test_cluster_state*.cpp).
#include <string>
#include <utility>

#include "sim/platform/cluster_spec.hpp"

namespace fleetsim::test {

constexpr double kTol = 1e-6;

inline PoolSpec pool(std::string name, int nodes, int gpus, std::string gpu = "V100", int cpus = 64,
                     double mem_gib = 512) {
  PoolSpec p;
  p.name = std::move(name);
  p.nodes = nodes;
  p.gpus_per_node = gpus;
  p.gpu = std::move(gpu);
  p.cpus_per_node = cpus;
  p.memory_gib = mem_gib;
  return p;
}

}  // namespace fleetsim::test
