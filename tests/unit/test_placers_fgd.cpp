// Placement policies of the FGD paper's comparison, the fragmentation measure, the inflation
// experiment. ClusterState only (no SimGrid in this process); CLI cases run the fleetsim binary.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>
#include <sstream>

#include "sim/cluster/fragmentation.hpp"
#include "sim/cluster/placer.hpp"
#include "sim/experiments/inflation.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/text.hpp"

using namespace fleetsim;

namespace {

struct N {  // a node: GPUs, leaf, CPU (thousandths), memory (MiB), GPU type
  int gpus = 4, leaf = 0;
  double cpu = 64000, mem = 262144;
  std::string type = "V100";
};

ClusterSpec cluster(const std::vector<N>& nodes) {
  ClusterSpec c;
  for (const auto& n : nodes)
    c.nodes.push_back({"n", 0, n.gpus > 0 ? n.type : "", n.gpus, n.cpu, n.mem, n.leaf});
  return c;
}

Request req(int gpus, int milli = 1000, double cpu = 0, double mem = 0, bool single = true) {
  return Request{gpus, milli, ~TypeMask{0}, cpu, mem, single || milli < 1000};
}

std::unique_ptr<Placer> make(const std::string& name, std::uint64_t seed = 1, const Options* o = nullptr) {
  return placers().create(name, PlacerParams{seed, o});
}

/// Take `milli` of GPU g on node n (g = -1: CPU/memory only).
void take(ClusterState& s, int n, int g, int milli, double cpu = 0, double mem = 0) {
  s.allocate(Allocation{{{n, g, g >= 0 ? milli : 0}}, cpu, mem, 1, 1});
}

std::set<int> nodes_of(const Allocation& a) {
  std::set<int> out;
  for (const auto& sl : a.slots) out.insert(sl.node);
  return out;
}

/// Nodes where `p` would put r (empty: nowhere); (node, GPU) of the first slot.
std::set<int> at(Placer& p, const Request& r, const ClusterState& s) {
  const auto a = p.place(r, s);
  return a ? nodes_of(*a) : std::set<int>{};
}
std::pair<int, int> slot(Placer& p, const Request& r, const ClusterState& s) {
  const auto a = p.place(r, s);
  return a ? std::pair{a->slots[0].node, a->slots[0].gpu} : std::pair{-1, -1};
}

void use(ClusterState& s, int n, int k) {  // the first k GPUs of node n, whole
  for (int g = 0; g < k; ++g) take(s, n, g, 1000);
}

Options opt(const std::string& key, const std::string& value) {
  Options::Value v;
  v.text = value;
  return Options({{key, v}}, "", "scheduler.placement_options");
}

const std::vector<std::string> kNew = {"best-fit",       "topology",    "random", "dot-product",
                                       "gpu-clustering", "gpu-packing", "fgd"};

}  // namespace

TEST_CASE("best-fit picks the tightest node, weighing CPU as the FGD paper's baseline") {
  ClusterState s(cluster({{4}, {4}, {4}}));
  use(s, 0, 1);  // node 0: 3 free
  use(s, 1, 3);  // node 1: 1 free
  auto p = make("best-fit");
  CHECK(at(*p, req(1), s) == std::set<int>{1});  // leaves 0 free GPUs there
  CHECK(at(*p, req(2), s) == std::set<int>{0});  // node 1 too small; node 0 (3 free) before node 2
  // Equal GPUs; node 1 has less CPU free: FGD-style best fit takes it; GPU only (cpu_weight 0): tie.
  ClusterState t(cluster({{2}, {2}}));
  take(t, 1, -1, 0, 32000);
  CHECK(at(*p, req(1), t) == std::set<int>{1});
  const Options o = opt("cpu_weight", "0");
  CHECK(at(*make("best-fit", 1, &o), req(1), t) == std::set<int>{0});
}

TEST_CASE("topology keeps a 2-node job in one leaf, and spans the fewest leaves, then nodes") {
  // Leaves: {0, 1} and {2, 3}. Free GPUs 2, 1 | 4, 4. A 5-GPU job: first-fit spreads over
  // nodes 0, 1, 2 (two leaves); topology takes nodes 2 and 3 (one leaf, two nodes).
  const Request five = req(5, 1000, 0, 0, false), ten = req(10, 1000, 0, 0, false);
  ClusterState s(cluster({{4, 0}, {4, 0}, {4, 1}, {4, 1}}));
  use(s, 0, 2);
  use(s, 1, 3);
  CHECK(make("first-fit")->place(five, s)->leaves == 2);
  auto a = make("topology")->place(five, s);
  CHECK((a && a->leaves == 1 && a->nodes == 2 && nodes_of(*a) == std::set<int>{2, 3}));
  // Leaves 0: nodes 0,1 free 4+4; leaf 1: nodes 2,3 free 1+1; leaf 2: nodes 4,5 free 4+3.
  // A 10-GPU job needs two leaves: leaf 0 whole (8) and 2 more: leaf 1 needs both its nodes, leaf
  // 2 one node, the smallest that suffices (node 5) -> leaves {0, 2}, nodes {0, 1, 5}.
  // (first-fit: nodes 0, 1, 2, 3: two leaves, four nodes.)
  ClusterState t(cluster({{4, 0}, {4, 0}, {4, 1}, {4, 1}, {4, 2}, {4, 2}}));
  use(t, 2, 3);
  use(t, 3, 3);
  use(t, 5, 1);
  a = make("topology")->place(ten, t);
  CHECK((a && a->leaves == 2 && a->nodes == 3 && nodes_of(*a) == std::set<int>{0, 1, 5}));
}

TEST_CASE("topology keeps a multi-leaf job inside one pod of a 3-tier fabric when a pod can host it") {
  // 8 nodes of 4 GPUs, 2 nodes per leaf; pods of 2 leaves: pod 0 = leaves 0, 1 (nodes 0-3), pod 1 =
  // leaves 2, 3 (nodes 4-7). Free GPUs: leaf 0: 4 + 4; leaf 1: 1 + 0; leaf 2: 4 + 2; leaf 3: 4 + 2.
  // A 12-GPU job needs two leaves. 2-tier: the largest leaf (0, 8 free) and the smallest-node
  // completion of 4 more (leaf 2's node 4) -> nodes {0, 1, 4}, across pods. 3-tier: pod 0 has 9 free
  // (too few), pod 1 has 12 -> leaves 2 and 3 whole, nodes {4, 5, 6, 7}, no core traffic.
  std::vector<N> nodes;
  for (int n = 0; n < 8; ++n) nodes.push_back({4, n / 2});
  const Request twelve = req(12, 1000, 0, 0, false);
  ClusterSpec two_tier = cluster(nodes);
  ClusterSpec three_tier = two_tier;
  three_tier.network.leaves_per_pod = 2;
  for (const ClusterSpec* spec : {&two_tier, &three_tier}) {
    ClusterState s(*spec);
    use(s, 2, 3);
    use(s, 3, 4);
    use(s, 5, 2);
    use(s, 7, 2);
    const auto a = make("topology")->place(twelve, s);
    REQUIRE(a);
    if (spec == &two_tier) {
      CHECK(nodes_of(*a) == std::set<int>{0, 1, 4});
    } else {
      CHECK(nodes_of(*a) == std::set<int>{4, 5, 6, 7});
      CHECK(s.node_pod(4) == 1);
      CHECK(s.node_pod(3) == 0);
    }
  }
  // No pod can host 20 GPUs (9 and 12 free): the fewest pods, both, and the fewest leaves in them.
  ClusterState s(three_tier);
  use(s, 2, 3);
  use(s, 3, 4);
  use(s, 5, 2);
  use(s, 7, 2);
  const auto a = make("topology")->place(req(20, 1000, 0, 0, false), s);
  REQUIRE(a);
  CHECK(a->leaves == 3);
  CHECK(a->slots.size() == 20);
}

TEST_CASE("random is deterministic per seed, uniform over feasible nodes, seeds differ") {
  auto sequence = [](std::uint64_t seed) {
    ClusterState s(cluster({{4}, {4}, {4}, {4}, {4}, {4}}));
    auto p = make("random", seed);
    std::vector<std::pair<int, int>> picks;
    for (int i = 0; i < 20; ++i) {
      picks.push_back(slot(*p, req(1, 300), s));
      take(s, picks.back().first, picks.back().second, 300);
    }
    return picks;
  };
  CHECK((sequence(7) == sequence(7) && sequence(7) != sequence(8)));
  // Uniform: 4 identical nodes, the fifth full; 4000 draws without allocating.
  ClusterState s(cluster({{2}, {2}, {2}, {2}, {2}}));
  use(s, 4, 2);
  auto p = make("random", 3);
  std::map<int, int> count;
  for (int i = 0; i < 4000; ++i) ++count[p->place(req(1), s)->slots[0].node];
  CHECK(count.count(4) == 0);
  for (int n = 0; n < 4; ++n) CHECK(count[n] == doctest::Approx(1000).epsilon(0.15));
  // The draw (shared with inflation): rng() mod n for small n, the same on every platform.
  std::mt19937_64 a(42), b(42), c(1);
  for (int i = 0; i < 1000; ++i) CHECK(uniform_below(a, 10) == b() % 10);
  CHECK(uniform_below(c, 1) == 0);
}

TEST_CASE("dot-product picks the node of the smallest normalised dot product (hand computed)") {
  // Capacities (largest node): GPU 8000, CPU 64000, memory 262144.
  // Node 0 (4 GPUs): free GPU 4000, CPU 8000, memory 32768 -> f = (0.5, 0.125, 0.125).
  // Node 1 (8 GPUs): free GPU 1000, CPU 64000, memory 262144 -> f = (0.125, 1, 1).
  // Request 1 GPU, CPU 8000, memory 32768 -> d = (0.125, 0.125, 0.125).
  // f.d / 3: node 0 = 0.125 * 0.75 / 3 = 0.03125; node 1 = 0.125 * 2.125 / 3 = 0.0885.
  ClusterState s(cluster({{4}, {8}}));
  take(s, 0, -1, 0, 56000, 229376);
  use(s, 1, 7);
  const Request r = req(1, 1000, 8000, 32768);
  CHECK(at(*make("dot-product"), r, s) == std::set<int>{0});  // the paper's: min
  const Options max = opt("objective", "max"), bad = opt("objective", "most");
  CHECK(at(*make("dot-product", 1, &max), r, s) == std::set<int>{1});  // Tetris: max
  CHECK_THROWS_AS(make("dot-product", 1, &bad), InputError);
}

TEST_CASE("gpu-packing picks the partially used GPU, then a used node before an idle one") {
  ClusterState s(cluster({{2}, {2}}));
  take(s, 1, 1, 500);  // node 1 GPU 1: 500 free
  auto p = make("gpu-packing");
  CHECK(slot(*p, req(1, 300), s) == std::pair{1, 1});
  CHECK(slot(*make("first-fit"), req(1, 300), s) == std::pair{0, 0});
  CHECK(slot(*p, req(1), s) == std::pair{1, 0});  // whole GPU: node 1 is in use, node 0 idle
}

TEST_CASE("gpu-clustering co-locates jobs of the same kind, as the authors' simulator") {
  // Kinds (GpuClusteringScorePlugin's GPU affinity): every fractional one-GPU job is "share",
  // whatever its share; whole-GPU jobs are "N GPUs". Shares 500 and 300 are one kind: the 300
  // joins the 500's node (only its kind there) and its GPU (best fit inside the node).
  ClusterState s(cluster({{2}, {2}}));
  auto p = make("gpu-clustering");
  auto place = [&](int milli) {
    const auto where = slot(*p, req(1, milli), s);
    take(s, where.first, where.second, milli);
    return where;
  };
  CHECK((place(500) == std::pair{0, 0} && place(300) == std::pair{0, 0}));
  CHECK(place(1000) == std::pair{1, 0});  // node 0 holds another kind only, node 1 is idle
  CHECK(place(300) == std::pair{0, 1});   // share: node 0; GPU 0 has 200 left
  CHECK(place(1000) == std::pair{1, 1});  // whole GPU: node 1 holds only its kind
  CHECK((s.gpu_free_milli(0, 0) == 200 && s.gpu_free_milli(0, 1) == 700));

  // Inside a tier the score is 25 * (8000 - free milli) / 8000 in integers: free 2000 and 1950
  // tie (18), so the lower index wins although node 1 is tighter; free 1900 scores 19.
  for (const auto& [used, want] : {std::pair{50, 0}, std::pair{100, 1}}) {
    ClusterState t(cluster({{2}, {2}}));
    take(t, 1, 0, used);  // not placed by the placer: node 1 counts as idle, with less free
    CHECK(slot(*make("gpu-clustering"), req(1, 500), t).first == want);
  }
  // best-fit would have put the 500 on node 1 in both cases.
  ClusterState t(cluster({{2}, {2}}));
  take(t, 1, 0, 50);
  CHECK(at(*make("best-fit"), req(1, 500), t) == std::set<int>{1});
}

TEST_CASE("fragmentation measure by hand") {
  const TaskClass a{1, 600, ~TypeMask{0}, 0, 0, 3}, b{1, 1000, ~TypeMask{0}, 0, 0, 1};
  NodeFree n{0, {1000, 700, 400}, 64000, 262144};
  CHECK(task_fragmentation(n, a) == 400);   // GPU 2 (400 < 600)
  CHECK(task_fragmentation(n, b) == 1100);  // GPUs 1 and 2 are partly used
  const WorkloadDistribution d{{a, b}, 4};
  CHECK((weighted_node_fragmentation(n, d) == 3 * 400 + 1100 && node_fragmentation(n, d) == 575));
  n.cpu_free = 0;  // nothing fits a class needing CPU: all free GPU capacity is fragment
  CHECK(task_fragmentation(n, TaskClass{1, 100, ~TypeMask{0}, 1000, 0, 1}) == 2100);
  // Only type 1 allowed; the node has type 0.
  CHECK(task_fragmentation(NodeFree{0, {1000}, 1, 1}, TaskClass{1, 100, TypeMask{2}, 0, 0, 1}) == 1000);

  // Distribution from requests: classes by (GPUs, share, types), CPU averaged, CPU-only left out.
  auto dist = WorkloadDistribution::from_requests(
      {req(1, 600, 1000), req(1, 600, 3000), req(0, 0, 5), req(1, 1000), req(1, 600, 2000)});
  REQUIRE((dist.classes.size() == 2 && dist.total == 4));
  CHECK((dist.classes[0].milli == 600 && dist.classes[0].count == 3 && dist.classes[0].cpu_milli == 2000));

  // Cluster: node 0 free {400}, node 1 free {1000}; classes {600 x3, 1000 x1}.
  ClusterState s(cluster({{1}, {1}}));
  take(s, 0, 0, 600);
  const auto cf = cluster_fragmentation(s, d);  // node 0: 400 for every class; node 1: 0
  CHECK((cf.free_milli == 1400 && cf.milli == 400 && cf.share() == doctest::Approx(400.0 / 1400)));
}

TEST_CASE("fgd picks the node and GPU of the worked example") {
  // Workload: three pods of 0.6 GPU, one of 0.3 GPU -> p(600) = 3/4, p(300) = 1/4.
  // Count-weighted fragmentation W = 3 F(600) + 1 F(300).
  // Node 0 free {700}, node 1 free {1000}; a 0.3-GPU pod arrives.
  //   node 0 -> {400}: F(600) = 400 (600 no longer fits), F(300) = 0: W 0 -> 1200, delta +1200.
  //   node 1 -> {700}: 600 and 300 still fit, no GPU below them: W 0 -> 0, delta 0.
  // FGD takes node 1; best-fit (and first-fit) take node 0.
  ClusterState s(cluster({{1}, {1}}));
  take(s, 0, 0, 300);
  auto fgd = make("fgd");
  fgd->observe_workload({req(1, 600), req(1, 600), req(1, 600), req(1, 300)});
  CHECK(at(*fgd, req(1, 300), s) == std::set<int>{1});
  CHECK(at(*make("best-fit"), req(1, 300), s) == std::set<int>{0});
  // Inside a node: free {1000, 700}. GPU 0 -> {700, 700}: W 0; GPU 1 -> {1000, 400}: W 1200.
  // FGD takes the idle GPU 0; a best-fit share would take GPU 1.
  ClusterState t(cluster({{2}}));
  take(t, 0, 1, 300);
  CHECK(slot(*fgd, req(1, 300), t) == std::pair{0, 0});
  CHECK(slot(*make("first-fit"), req(1, 300), t) == std::pair{0, 1});
}

TEST_CASE("property: every placer's allocation is feasible, and found whenever first-fit finds one") {
  std::mt19937_64 rng(20240601);
  auto pick = [&](int n) { return static_cast<int>(uniform_below(rng, static_cast<std::uint64_t>(n))); };
  const int gpu_choices[] = {0, 1, 2, 4, 8}, milli_choices[] = {1000, 1000, 500, 250, 600, 100};
  for (const auto& name : {"first-fit", "consolidate", "best-fit", "topology", "random", "dot-product",
                           "gpu-clustering", "gpu-packing", "fgd"}) {
    for (int trial = 0; trial < 6; ++trial) {
      std::vector<N> nodes;
      for (int i = 0, count = 3 + pick(6); i < count; ++i)
        nodes.push_back({gpu_choices[pick(5)], i / 2, 8000.0 * (1 + pick(8)), 16384.0 * (1 + pick(8)),
                         pick(2) == 0 ? "V100" : "T4"});
      ClusterState s(cluster(nodes));
      auto random_request = [&] {
        const int gpus = pick(4) == 0 ? 0 : 1 + pick(3), milli = gpus == 0 ? 0 : milli_choices[pick(6)];
        const double cpu = 1000.0 * pick(12), mem = 4096.0 * pick(12);
        Request r = req(milli < 1000 && gpus > 0 ? 1 : gpus, milli, cpu, mem, pick(2) == 0);
        if (pick(3) == 0 && s.type_count() > 0) r.types = TypeMask{1} << pick(s.type_count());
        return r;
      };
      auto p = make(name, 1 + static_cast<std::uint64_t>(trial));
      std::vector<Request> workload;
      for (int i = 0; i < 20 && trial % 2 == 0; ++i) workload.push_back(random_request());
      if (!workload.empty()) p->observe_workload(workload);
      for (int step = 0; step < 60; ++step) {
        const Request r = random_request();
        const auto a = p->place(r, s);
        INFO(name << " trial " << trial << " step " << step << " gpus " << r.gpus << " milli " << r.milli);
        if (r.single_node && s.first_fit_node(r) >= 0) CHECK(a.has_value());
        if (!a) continue;
        std::set<std::pair<int, int>> used;  // feasible: distinct GPUs, allowed type, room, CPU/memory
        std::map<int, int> per_node;
        for (const auto& sl : a->slots) {
          REQUIRE((sl.node >= 0 && sl.node < s.node_count()));
          per_node[sl.node] += sl.gpu >= 0 ? 1 : 0;
          if (sl.gpu < 0) continue;
          CHECK(used.insert({sl.node, sl.gpu}).second);
          CHECK((sl.milli == r.milli && s.gpu_free_milli(sl.node, sl.gpu) >= r.milli));
          CHECK((r.types & (TypeMask{1} << s.node_type(sl.node))) != 0);
        }
        CHECK(static_cast<int>(used.size()) == r.gpus);
        CHECK((a->nodes == static_cast<int>(per_node.size()) && (!r.single_node || a->nodes == 1)));
        for (const auto& [n, g] : per_node) {
          const double frac = r.gpus > 0 ? static_cast<double>(g) / r.gpus : 1.0;
          CHECK((s.cpu_free(n) + 1e-6 >= r.cpu_milli * frac && s.mem_free(n) + 1e-6 >= r.memory_mib * frac));
        }
        s.allocate(*a);
      }
    }
  }
}

TEST_CASE("inflation by hand: whole GPUs, shares that leave a fragment, pods that never fit") {
  // 1 node x 2 GPUs, every pod 1 GPU; to 130 % = 2.6 GPUs: pods at 50 %, 100 %, 150 % (stop).
  // The third fits nowhere.
  auto ff = make("first-fit");
  auto run = run_inflation(cluster({{2}}), {req(1)}, *ff, 5);
  REQUIRE(run.points.size() == 3);
  const double want[3][3] = {{50, 50, 0}, {100, 100, 0}, {150, 100, 1}};  // arrived, allocated, failed
  for (int i = 0; i < 3; ++i)
    CHECK((run.points[i].arrived_pct == want[i][0] && run.points[i].allocated_pct == want[i][1] &&
           run.points[i].failed_pods == want[i][2]));
  CHECK((run.pods == 3 && run.failed_pods == 1 && run.fragmentation_end.free_milli == 0));
  CHECK(run.allocated_pct_at_100 == 100);
  // 1 GPU, pods of 0.6: 60 % arrived / 60 % allocated; 120 % / 60 % (fails: 400 left); 180 %.
  // At 100 % arrived (the second pod) 60 % is allocated; the 400 left are a fragment for 0.6 pods.
  auto fgd = make("fgd");
  run = run_inflation(cluster({{1}}), {req(1, 600)}, *fgd, 1);
  REQUIRE(run.points.size() == 3);
  CHECK((run.points[1].arrived_pct == doctest::Approx(120) &&
         run.points[1].allocated_pct == doctest::Approx(60)));
  CHECK((run.points[1].failed_pods == 1 && run.points[2].failed_pods == 2));
  CHECK(run.allocated_pct_at_100 == doctest::Approx(60));
  CHECK((run.fragmentation_end.milli == 400 && run.fragmentation_end.share() == 1.0));
  // A pod that can never fit fails every time it is drawn (16 GPUs: 100 %, 200 %).
  run = run_inflation(cluster({{8}, {8}}), {req(16)}, *fgd, 1);
  REQUIRE(run.points.size() == 2);
  CHECK((run.points[0].failed_pods == 1 && run.points[1].failed_pods == 2 && run.allocated_pct_at_100 == 0));
  CHECK_THROWS_AS(run_inflation(cluster({{8}}), {req(0, 0, 1000)}, *fgd, 1), InputError);
}

TEST_CASE("inflation: deterministic per seed, monotone, allocated <= arrived, thinned") {
  std::vector<N> nodes;
  for (int i = 0; i < 12; ++i) nodes.push_back({i % 3 == 0 ? 8 : 2, i / 4, 32000, 131072});
  const std::vector<Request> pool = {req(1), req(1, 500, 4000), req(1, 250, 2000),
                                     req(2), req(0, 0, 4000),   req(1, 800, 8000),
                                     req(4), req(1, 100)};
  for (const auto& name : kNew) {
    INFO(name);
    auto p1 = make(name, 9), p2 = make(name, 9), p3 = make(name, 9);
    const auto a = run_inflation(cluster(nodes), pool, *p1, 7),
               b = run_inflation(cluster(nodes), pool, *p2, 7);
    const auto other = run_inflation(cluster(nodes), pool, *p3, 8);
    REQUIRE(a.points.size() == b.points.size());
    for (std::size_t i = 0; i < a.points.size(); ++i)
      CHECK((a.points[i].arrived_pct == b.points[i].arrived_pct &&
             a.points[i].allocated_pct == b.points[i].allocated_pct &&
             a.points[i].failed_pods == b.points[i].failed_pods));
    CHECK((other.pods != a.pods || other.points.size() != a.points.size() ||
           other.points.back().allocated_pct != a.points.back().allocated_pct));
    CHECK((a.points.size() <= 262 && a.points.back().arrived_pct >= 130.0));
    CHECK(a.points.back().failed_pods == a.failed_pods);
    for (std::size_t i = 0; i < a.points.size(); ++i) {
      CHECK(a.points[i].allocated_pct <= a.points[i].arrived_pct + 1e-9);
      if (i > 0)
        CHECK((a.points[i].arrived_pct > a.points[i - 1].arrived_pct &&
               a.points[i].allocated_pct >= a.points[i - 1].allocated_pct &&
               a.points[i].failed_pods >= a.points[i - 1].failed_pods));
    }
  }
}

TEST_CASE("inflation CSV and summary") {
  InflationRun r1{"fgd", 1, {{50, 50, 0}, {100, 90, 1}}, 90, 3, 1, {1000, 2000}, 0.5};
  InflationRun r2{"fgd", 2, {{100, 80, 0}}, 80, 2, 0, {0, 0}, 0.25};
  std::ostringstream out, sum;
  write_inflation_csv(out, {r1, r2});
  CHECK(out.str() ==
        "placement,seed,arrived_pct,allocated_pct,failed_pods\n"
        "fgd,1,50.0000,50.0000,0\nfgd,1,100.0000,90.0000,1\nfgd,2,100.0000,80.0000,0\n");
  write_inflation_summary_csv(sum, summarize_inflation({r1, r2}));  // frag: 1 GPU = 50 % of free, 0
  CHECK(sum.str() ==
        "placement,seeds,allocated_pct_at_100_mean,allocated_pct_at_100_min,allocated_pct_at_100_max,"
        "failed_pods_mean,final_arrived_pct_mean,final_allocated_pct_mean,frag_gpus_end_mean,"
        "frag_pct_of_free_end_mean,wall_s_mean\n"
        "fgd,2,85.0000,80.0000,90.0000,0.5,100.0000,85.0000,0.500,25.0000,0.3750\n");
}

TEST_CASE("fleetsim inflate and run: CSVs, same result on 1 or 2 threads, bad input exits 2") {
  const auto dir = test::temp_dir("inflate");
  test::write_file(dir / "trace.csv",
                   "id,submit,duration,gpus,milli,cpu\na,0,100,1,1000,4000\nb,1,50,1,500,2000\n"
                   "c,2,80,1,300,1000\nd,3,60,2,1000,8000\ne,4,30,1,700,2000\nf,5,90,0,0,4000\n");
  test::write_file(dir / "tiny.toml",
                   "seed = 3\n[cluster]\n[[cluster.pool]]\nname = \"p\"\nnodes = 4\ngpus_per_node = 4\n"
                   "gpu = \"V100\"\n[cluster.network]\nnodes_per_leaf = 2\n[workload]\nformat = \"csv\"\n"
                   "path = \"trace.csv\"\n[workload.columns]\nid = \"id\"\nsubmit = \"submit\"\n"
                   "duration = \"duration\"\ngpus = \"gpus\"\ngpu_milli = \"milli\"\ncpu_milli = \"cpu\"\n"
                   "[scheduler]\npolicy = \"fifo\"\nplacement = \"first-fit\"\n[output]\ndir = \"out\"\n");
  auto fleetsim = [&](const std::string& cmd, const std::string& out, const std::string& args) {
    return test::run_fleetsim(cmd + " " + (dir / "tiny.toml").string() + " --out " + (dir / out).string() +
                              " " + args);
  };
  auto r = fleetsim("inflate", "i2", "--placements fgd,best-fit,random --seeds 2 --no-plot -j 2");
  REQUIRE_MESSAGE(r.code == 0, r.output);
  const std::string csv = test::read_file(dir / "i2" / "inflation.csv");
  std::set<std::string> runs;
  for (const auto& line : split(csv, '\n'))
    if (const auto f = split(line, ','); f.size() == 5) runs.insert(f[0] + "/" + f[1]);
  CHECK(runs == std::set<std::string>{"placement/seed", "best-fit/3", "best-fit/4", "fgd/3", "fgd/4",
                                      "random/3", "random/4"});
  CHECK(split(test::read_file(dir / "i2" / "inflation_summary.csv"), '\n').size() >= 4);  // header + 3
  r = fleetsim("inflate", "i1", "--placements fgd,best-fit,random --seeds 2 --no-plot -j 1 -q");
  REQUIRE(r.code == 0);
  CHECK(test::read_file(dir / "i1" / "inflation.csv") == csv);
  // Plotting (scripts/plot_inflation.py under /usr/bin/python3, when present) is never an error.
  CHECK(fleetsim("inflate", "ip", "--placements gpu-packing --seeds 1 -q").code == 0);
  CHECK(std::filesystem::exists(dir / "ip" / "inflation_summary.csv"));
  r = fleetsim("inflate", "bad", "--placements fgd,best-fits --no-plot");
  CHECK((r.code == 2 && r.output.find("unknown placement policy 'best-fits'") != std::string::npos));
  const auto valid = r.output.find("valid:");
  CHECK((valid != std::string::npos && r.output.find("gpu-clustering", valid) != std::string::npos));
  CHECK(fleetsim("inflate", "bad", "--placements fgd --seeds 0 --no-plot").code == 2);
  r = fleetsim("inflate", "bad", "--placements fgd --set scheduler.placement_options.nope=1 --no-plot");
  CHECK((r.code == 2 && r.output.find("nope") != std::string::npos));
  for (const auto& name : kNew) {  // each new policy in a real simulation (its own process)
    r = fleetsim("run", "run-" + name, "-q --set scheduler.placement=" + name);
    INFO(name << ": " << r.output);
    CHECK(r.code == 0);
    CHECK(split(test::read_file(dir / ("run-" + name) / "jobs.csv"), '\n').size() >= 7);  // header + 6
  }
  std::filesystem::remove_all(dir);
}
