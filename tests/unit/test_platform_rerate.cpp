// rerate_network: a platform built from one network and re-rated to another has exactly the link
// bandwidths of a platform built from the other (leaf-spine, fat-tree, rail-optimized). SimGrid's
// engine is one per process, so a forked child builds the reference platform.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <simgrid/s4u.hpp>
#include <sstream>
#include <string>

#include "sim/platform/platform.hpp"
#include "tests/platform_util.hpp"

namespace {

using fleetsim::ClusterSpec;
using fleetsim::NetworkSpec;
using fleetsim::Topology;

ClusterSpec spec(Topology t, double nic, double intra) {
  NetworkSpec net;
  net.topology = t;
  net.nodes_per_leaf = 2;
  net.nic_gbps = nic;
  net.intra_node_gbps = intra;
  if (t == Topology::kRailOptimized) {
    net.nics_per_node = 4;
    net.gpus_per_nic = 1;
  }
  return fleetsim::expand_pools({fleetsim::test::pool("n", 4, 4, "A100-80GB")}, net);
}

std::map<std::string, double> bandwidths() {
  std::map<std::string, double> out;
  for (auto* l : simgrid::s4u::Engine::get_instance()->get_all_links())
    out[l->get_name()] = l->get_bandwidth();
  return out;
}

// Link bandwidths of build_platform(target), built in a child process.
std::map<std::string, double> reference(const ClusterSpec& target) {
  int fd[2];
  REQUIRE(pipe(fd) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fd[0]);
    fleetsim::test::EngineArgs args({"--cfg=host/model:ptask_L07"});
    simgrid::s4u::Engine e(&args.argc, args.argv());
    fleetsim::build_platform(target);
    std::string text;
    for (const auto& [name, bw] : bandwidths()) text += name + " " + std::to_string(bw) + "\n";
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t w = write(fd[1], text.data() + done, text.size() - done);
      if (w <= 0) _exit(1);
      done += static_cast<std::size_t>(w);
    }
    _exit(0);
  }
  close(fd[1]);
  std::string text;
  char buf[4096];
  for (ssize_t r; (r = read(fd[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(r));
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string name;
  double bw = 0;
  while (in >> name >> bw) out[name] = bw;
  return out;
}

void check_rerate(Topology t) {
  const ClusterSpec built = spec(t, 100, 2400), target = spec(t, 400, 1200);
  const auto want = reference(target);
  fleetsim::test::EngineArgs args({"--cfg=host/model:ptask_L07"});
  simgrid::s4u::Engine e(&args.argc, args.argv());
  fleetsim::build_platform(built);
  fleetsim::rerate_network(built.network, target.network);
  const auto got = bandwidths();
  REQUIRE(got.size() == want.size());
  long changed = 0;
  for (const auto& [name, bw] : got) {
    INFO(name);
    REQUIRE(want.count(name) == 1);
    CHECK(bw == doctest::Approx(want.at(name)).epsilon(1e-6));
    changed += name.find("-cpu") == std::string::npos ? 1 : 0;
  }
  CHECK(changed > 0);
}

}  // namespace

TEST_CASE("rerate_network: leaf-spine matches a platform built with the target network") {
  check_rerate(Topology::kLeafSpine);
}

TEST_CASE("rerate_network: fat-tree matches a platform built with the target network") {
  check_rerate(Topology::kFatTree);
}

TEST_CASE("rerate_network: rail-optimized matches a platform built with the target network") {
  check_rerate(Topology::kRailOptimized);
}
