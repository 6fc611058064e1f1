// KV transfers on the cluster's network (sim/serving/kv_fabric.hpp): a transfer is one ptask beside
// the training ring ptasks, shared by SimGrid's solver (host/model:ptask_L07); the times are worked
// out by hand on two servers of one V100 under one leaf (one process per TEST_CASE).
#include <doctest/doctest.h>

#include <simgrid/s4u.hpp>

#include <memory>
#include <string>
#include <vector>

#include "sim/platform/cluster_spec.hpp"
#include "sim/platform/platform.hpp"
#include "sim/platform/ring.hpp"
#include "sim/serving/kv_fabric.hpp"
#include "tests/platform_util.hpp"

using namespace fleetsim;
using fleetsim::test::EngineArgs;
using fleetsim::test::pool;

namespace {

EngineArgs ptask_args() {
#if defined(__SANITIZE_ADDRESS__)
  return EngineArgs({"--cfg=host/model:ptask_L07", "--cfg=contexts/factory:thread"});
#else
  return EngineArgs({"--cfg=host/model:ptask_L07"});
#endif
}

constexpr double kNic = 100 * test::kGbit;  // 12.5e9 B/s: the bottleneck of every route below
constexpr double kMB = 1e6;

/// Two servers of one V100 under one leaf (NIC 100 Gbit/s, GPU links 2400 Gbit/s, 1 us a hop).
struct TwoServers {
  EngineArgs args = ptask_args();
  std::unique_ptr<simgrid::s4u::Engine> engine;
  Platform platform;
  TwoServers() {
    engine = std::make_unique<simgrid::s4u::Engine>(&args.argc, args.argv());
    NetworkSpec net;
    net.nodes_per_leaf = 2;
    net.nic_gbps = 100;
    platform = build_platform(expand_pools({pool("p", 2, 1, "V100")}, net));
  }
  simgrid::s4u::Host* gpu(int node) const { return platform.nodes[static_cast<std::size_t>(node)].gpus[0]; }
  /// Route latency from server 0's GPU to server 1's (the same both ways).
  double latency() const { return test::route(gpu(0), gpu(1)).latency; }
};

/// Runs the activities started by `start` (at t = 0) to the end; their end times, in start order.
std::vector<double> run(TwoServers& p, const std::function<std::vector<simgrid::s4u::ExecPtr>()>& start) {
  std::vector<double> end;
  simgrid::s4u::Actor::create("driver", p.gpu(0), [&] {
    std::vector<simgrid::s4u::ExecPtr> acts = start();
    end.assign(acts.size(), -1);
    std::vector<simgrid::s4u::ExecPtr> left = acts;
    while (!left.empty()) {
      const auto k = static_cast<std::size_t>(simgrid::s4u::Exec::wait_any(left));
      for (std::size_t i = 0; i < acts.size(); ++i)
        if (acts[i] == left[k]) end[i] = simgrid::s4u::Engine::get_clock();
      left.erase(left.begin() + static_cast<long>(k));
    }
  });
  p.engine->run();
  return end;
}

}  // namespace

TEST_CASE("kv on the network: a transfer alone takes latency + bytes / the NIC") {
  TwoServers p;
  // The route: GPU link up (300 GB/s, 0.25 us), NIC up and the other server's NIC down (12.5 GB/s,
  // 1 us each), its GPU link down: 2.5 us, and the NIC's bandwidth.
  const test::Route r = test::route(p.gpu(0), p.gpu(1));
  CHECK(r.links.size() == 4);
  CHECK(r.bottleneck == doctest::Approx(kNic));
  CHECK(r.latency == doctest::Approx(2.5e-6).epsilon(1e-12));
  const double bytes = 125 * kMB;  // 10 ms at 12.5 GB/s
  RouteCache routes;
  CHECK(kv_platform_link({p.gpu(0)}, {p.gpu(1)}, routes).seconds(bytes) ==
        doctest::Approx(2.5e-6 + 0.010).epsilon(1e-12));
  const auto end = run(p, [&] { return std::vector{start_kv_ptask({p.gpu(0)}, {p.gpu(1)}, bytes)}; });
  CHECK(end[0] == doctest::Approx(2.5e-6 + 0.010).epsilon(1e-9));
}

TEST_CASE("kv on the network: a transfer and a training ring share the NIC fairly") {
  // The 2-GPU ring's flow 0 -> 1 crosses the NIC links the transfer uses; 1 -> 0 the other direction.
  // SimGrid's ptask solver gives each of the two ptasks half the NIC on the shared links (a ring's
  // flows move in lockstep, so its rate is that half on every flow).
  //   equal bytes X: both move at C/2 and end together at lat + 2X/C;
  //   ring X/2, transfer X: the ring ends at lat + (X/2)/(C/2) = lat + X/C, the transfer has moved
  //   X/2 by then and the rest at the whole NIC: lat + X/C + (X/2)/C = lat + 1.5 X/C.
  TwoServers p;
  const double lat = p.latency();
  const double x = 125 * kMB;  // X / C = 10 ms
  const auto end = run(p, [&] {
    return std::vector{start_kv_ptask({p.gpu(0)}, {p.gpu(1)}, x),
                       start_ring_ptask({p.gpu(0), p.gpu(1)}, x / 2)};
  });
  CHECK(end[1] == doctest::Approx(lat + 0.010).epsilon(1e-9));  // training ring
  CHECK(end[0] == doctest::Approx(lat + 0.015).epsilon(1e-9));  // KV transfer
}

TEST_CASE("kv on the network: equal bytes end together at half the NIC") {
  TwoServers p;
  const double lat = p.latency();
  const double x = 125 * kMB;
  const auto end = run(p, [&] {
    return std::vector{start_kv_ptask({p.gpu(0)}, {p.gpu(1)}, x), start_ring_ptask({p.gpu(0), p.gpu(1)}, x)};
  });
  CHECK(end[0] == doctest::Approx(lat + 0.020).epsilon(1e-9));
  CHECK(end[1] == doctest::Approx(lat + 0.020).epsilon(1e-9));
}

TEST_CASE("kv on the network: a transfer the other way shares nothing with it") {
  // Links are split duplex: a transfer 0 -> 1 (NIC 0 up, NIC 1 down) and one 1 -> 0 (NIC 1 up, NIC 0
  // down) share no link, and both end at lat + X/C.
  TwoServers p;
  const double lat = p.latency();
  const double x = 125 * kMB;
  const auto end = run(p, [&] {
    return std::vector{start_kv_ptask({p.gpu(0)}, {p.gpu(1)}, x), start_kv_ptask({p.gpu(1)}, {p.gpu(0)}, x)};
  });
  CHECK(end[0] == doctest::Approx(lat + 0.010).epsilon(1e-9));
  CHECK(end[1] == doctest::Approx(lat + 0.010).epsilon(1e-9));
}
